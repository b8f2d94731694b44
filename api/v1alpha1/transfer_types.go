package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TransferMethod is the API a transfer was created through.
// +kubebuilder:validation:Enum=v1;v2
type TransferMethod string

const (
	TransferV1 TransferMethod = "v1"
	TransferV2 TransferMethod = "v2"
)

// TransferPhase is the public status of a transfer (spec 3.1), derived by the controller from
// what it observed. It is for people and the API; controllers decide on facts, not on it.
// +kubebuilder:validation:Enum=ready_to_process;awaiting_deposit;pending_match;deposit_sent;processing;transfer_created;completed;failed;refunded
type TransferPhase string

const (
	PhaseReadyToProcess  TransferPhase = "ready_to_process"
	PhaseAwaitingDeposit TransferPhase = "awaiting_deposit"
	PhasePendingMatch    TransferPhase = "pending_match"
	PhaseDepositSent     TransferPhase = "deposit_sent"
	PhaseProcessing      TransferPhase = "processing"
	PhaseTransferCreated TransferPhase = "transfer_created"
	PhaseCompleted       TransferPhase = "completed"
	PhaseFailed          TransferPhase = "failed"
	PhaseRefunded        TransferPhase = "refunded"
)

// FailureReason is why a transfer failed: a fixed set, so that operators and dashboards can
// count failures by cause; the message says the particulars.
// +kubebuilder:validation:Enum=RecipientDeleted;Expired;DepositShort;DepositWrongToken;DepositMismatch;DepositNotFound;PayoutRejected;SenderBlocked
type FailureReason string

const (
	// FailureRecipientDeleted: the recipient was deleted before the payout was handed to the
	// provider (spec 3.2).
	FailureRecipientDeleted FailureReason = "RecipientDeleted"
	// FailureExpired: a v1 transfer saw no deposit before spec.expiresAt.
	FailureExpired FailureReason = "Expired"
	// FailureDepositShort: the deposits of the transfer's wallet added up to less than the
	// transfer amount by its expiry; they are kept refundable and nothing is paid.
	FailureDepositShort FailureReason = "DepositShort"
	// FailureDepositWrongToken: the deposit was of another token than the transfer's.
	FailureDepositWrongToken FailureReason = "DepositWrongToken"
	// FailureDepositMismatch: the confirmed v2 transaction does not pay the transfer: it does
	// not send the transfer's amount of its token to the platform address, was sent from
	// another wallet than the transfer's (or from one bound to another account), or was mined
	// before the transfer was created. Its hash is released for the transfer it does pay.
	FailureDepositMismatch FailureReason = "DepositMismatch"
	// FailureDepositNotFound: the confirmed v2 transaction was not found on chain within the
	// match timeout; its hash is released.
	FailureDepositNotFound FailureReason = "DepositNotFound"
	// FailurePayoutRejected: the fiat provider rejected the payout.
	FailurePayoutRejected FailureReason = "PayoutRejected"
	// FailureSenderBlocked: the wallet that paid failed wallet screening at depth; nothing is
	// paid, and the deposit is held (a refund waits for the screening to clear its address).
	FailureSenderBlocked FailureReason = "SenderBlocked"
)

// RecipientSnapshot is the recipient as it was when the transfer was created (spec 2.5).
type RecipientSnapshot struct {
	// +required
	ID int64 `json:"id"`
	// +required
	AccountHolderName string `json:"accountHolderName"`
	// +required
	Currency CurrencyCode `json:"currency"`
	// +required
	Type string `json:"type"`
	// +optional
	Country CountryCode `json:"country,omitempty"`
	// +required
	Details RecipientDetails `json:"details"`
}

// QuoteSnapshot is the quote the transfer was priced with (spec 2.5).
type QuoteSnapshot struct {
	// +required
	SourceAmount USDAmount `json:"sourceAmount"`
	// +optional
	ProviderCharge *Decimal `json:"providerCharge,omitempty"`
	// +required
	ServiceFeePercent Decimal `json:"serviceFeePercent"`
	// +optional
	ServiceFeeFixed *Decimal `json:"serviceFeeFixed,omitempty"`
	// +required
	TargetCurrency CurrencyCode `json:"targetCurrency"`
	// +required
	USDToTargetRate Decimal `json:"usdToTargetRate"`
	// +required
	TargetAmount Decimal `json:"targetAmount"`
	// +required
	TransferFee Decimal `json:"transferFee"`
	// +required
	EstimatedDelivery metav1.Time `json:"estimatedDelivery"`
}

// TransferSpec is what the caller asked for and what the service assigned at creation; it never
// changes afterwards, except the v2 transaction hash (set once by confirm-transfer) and a
// cancellation request (set once by DELETE recipient). Both are requests: the transfer
// controller alone decides what they do to the status.
// +kubebuilder:validation:XValidation:rule="self.method != 'v2' || self.sourceToken == 'usdc'",message="v2 transfers take USDC only"
// +kubebuilder:validation:XValidation:rule="self.method != 'v2' || self.sourceNetwork != 'tron'",message="v2 transfers are not available on tron"
// +kubebuilder:validation:XValidation:rule="self.method != 'v1' || (has(self.walletAddress) && self.walletAddress.matches('^0x[0-9a-fA-F]{40}$'))",message="v1 wallet addresses are EVM addresses"
// +kubebuilder:validation:XValidation:rule="has(self.customerEmail) == has(oldSelf.customerEmail) && has(self.walletAddress) == has(oldSelf.walletAddress) && has(self.keepRecipient) == has(oldSelf.keepRecipient) && has(self.depositPath) == has(oldSelf.depositPath) && has(self.expiresAt) == has(oldSelf.expiresAt) && has(self.headAtCreation) == has(oldSelf.headAtCreation)",message="customerEmail, walletAddress, keepRecipient, depositPath, expiresAt and headAtCreation are immutable"
// +kubebuilder:validation:XValidation:rule="self.method == 'v2' || !has(self.txHash)",message="only v2 transfers are confirmed with a transaction hash"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.txHash) || (has(self.txHash) && self.txHash == oldSelf.txHash)",message="txHash is set once and never overwritten"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.cancellation) || (has(self.cancellation) && self.cancellation == oldSelf.cancellation)",message="a cancellation request is set once and cannot be withdrawn"
// +kubebuilder:validation:XValidation:rule="self.method != 'v1' || has(self.expiresAt)",message="a v1 transfer has an expiry"
type TransferSpec struct {
	// method is v1 or v2.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="method is immutable"
	Method TransferMethod `json:"method"`
	// account that created the transfer.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="account is immutable"
	Account string `json:"account"`
	// quoteId of the consumed quote.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="quoteId is immutable"
	QuoteID string `json:"quoteId"`
	// amount in USD the caller sends.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="amount is immutable"
	Amount USDAmount `json:"amount"`
	// recipientId of the payee.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="recipientId is immutable"
	RecipientID int64 `json:"recipientId"`
	// recipient snapshot at creation.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the recipient snapshot is immutable"
	Recipient RecipientSnapshot `json:"recipient"`
	// quote snapshot at creation.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the quote snapshot is immutable"
	Quote QuoteSnapshot `json:"quote"`
	// customerUUID is the caller's globally unique UUID.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="customerUUID is immutable"
	CustomerUUID string `json:"customerUUID"`
	// customerEmail receives the notifications.
	// +optional
	// +kubebuilder:validation:MaxLength=254
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="customerEmail is immutable"
	CustomerEmail string `json:"customerEmail,omitempty"`
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="sourceToken is immutable"
	SourceToken Token `json:"sourceToken"`
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="sourceNetwork is immutable"
	SourceNetwork Network `json:"sourceNetwork"`
	// walletAddress sends the deposit; empty on v2 without screening when omitted.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="walletAddress is immutable"
	WalletAddress string `json:"walletAddress"`
	// keepRecipient keeps the recipient after a terminal status.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="keepRecipient is immutable"
	KeepRecipient bool `json:"keepRecipient,omitempty"`
	// depositAddress the funds must be sent to on sourceNetwork.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="depositAddress is immutable"
	DepositAddress string `json:"depositAddress"`
	// depositPath is the BIP-32 path (below the deposit key of the deployment) of a v1
	// transfer's deposit address; the sweeper derives the address's private key from it.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="depositPath is immutable"
	DepositPath string `json:"depositPath,omitempty"`
	// expiresAt ends the wait for a v1 deposit: with none at depth by then the transfer fails
	// (Expired). v2 transfers do not expire.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="expiresAt is immutable"
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// headAtCreation (v2) is a block of sourceNetwork that the chain had reached when the
	// transfer was created (the watcher's last head, never newer than the truth): a transaction
	// mined in it or before never pays the transfer, so a hash seen on chain cannot be taken by
	// a transfer created after it. Blocks are compared, not clocks.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="headAtCreation is immutable"
	HeadAtCreation int64 `json:"headAtCreation,omitempty"`
	// txHash is the v2 deposit transaction supplied by confirm-transfer.
	// +optional
	// +kubebuilder:validation:Pattern=`^(0x[0-9a-f]{64}|[1-9A-HJ-NP-Za-km-z]{85,88})$`
	TxHash string `json:"txHash,omitempty"`
	// cancellation asks the controller to stop the transfer (DELETE of its recipient). It
	// fails the transfer unless the payout intent was already recorded; the facade writes it
	// under the resourceVersion it read, so it and the payout intent exclude each other.
	// +optional
	Cancellation *TransferCancellation `json:"cancellation,omitempty"`
}

// TransferCancellation is a request to stop a transfer.
type TransferCancellation struct {
	// reason is why the transfer is stopped.
	// +required
	// +kubebuilder:validation:Enum=RecipientDeleted
	Reason FailureReason `json:"reason"`
	// message says the particulars, e.g. which recipient was deleted.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Message string `json:"message,omitempty"`
	// requestedAt is when the request was made.
	// +required
	RequestedAt metav1.Time `json:"requestedAt"`
}

// DepositFacts is a token transfer on chain to the transfer's deposit address, as observed.
type DepositFacts struct {
	// network the deposit was sent on.
	// +required
	Network Network `json:"network"`
	// token of the contract that moved.
	// +required
	Token Token `json:"token"`
	// txHash of the transaction.
	// +required
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash"`
	// logIndex of the token's Transfer event in its block.
	// +optional
	LogIndex int64 `json:"logIndex,omitempty"`
	// from is the sending address (the refund goes back to it).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	From string `json:"from,omitempty"`
	// amount in token base units (6 decimals).
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{1,30}$`
	Amount string `json:"amount"`
	// blockNumber of the block that holds the transaction.
	// +optional
	BlockNumber int64 `json:"blockNumber,omitempty"`
	// blockHash of that block: a reorg that replaces it changes the hash.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	BlockHash string `json:"blockHash,omitempty"`
	// blockTime is the block's timestamp (when the deposit was made).
	// +optional
	BlockTime *metav1.Time `json:"blockTime,omitempty"`
	// confirmations when last observed (the including block counts as one).
	// +optional
	Confirmations int64 `json:"confirmations,omitempty"`
	// seenAt is when the service first saw the deposit.
	// +required
	SeenAt metav1.Time `json:"seenAt"`
	// confirmedAt is when the deposit reached the network's confirmation depth; unset while it
	// has not (a v2 deposit seen early).
	// +optional
	ConfirmedAt *metav1.Time `json:"confirmedAt,omitempty"`
	// record names the Deposit object the chain watcher wrote (v1), if any.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Record string `json:"record,omitempty"`
	// parts are the logs credited when the deposit came in several sends from the transfer's
	// wallet (v1): the fields above then describe the first, and amount is their sum.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Parts []DepositPart `json:"parts,omitempty"`
}

// DepositPart is one log credited to a transfer, and how much of it.
type DepositPart struct {
	// +required
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash"`
	// +optional
	LogIndex int64 `json:"logIndex,omitempty"`
	// amount credited from the log in token base units: the whole log, except for the log that
	// reached the transfer's amount, whose excess is a stray deposit.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{1,30}$`
	Amount string `json:"amount"`
	// +optional
	BlockNumber int64 `json:"blockNumber,omitempty"`
	// record names the Deposit object.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Record string `json:"record,omitempty"`
}

// NeedsAttentionCondition is a Transfer's condition for what only a person can settle about its
// payout: True while the provider lost a payout it had accepted (reason PayoutLost) or the
// recipient's bank returned a completed payout whose deposit is not refunded yet
// (PayoutReturned). It appears only on transfers that needed it, and reads False once the facts
// no longer ask (PayoutFound, ReturnRefunded). It is derived from status.payout, like the phase.
const NeedsAttentionCondition = "NeedsAttention"

// PayoutState is where the fiat payout stands at the provider.
// +kubebuilder:validation:Enum=Requested;Accepted;Completed;Rejected
type PayoutState string

const (
	// PayoutRequested: the intent is recorded; the provider may or may not have the payout yet.
	// After a crash the provider is asked by reference before any new call.
	PayoutRequested PayoutState = "Requested"
	// PayoutAccepted: the provider created and funded the payout; the funds are converted.
	PayoutAccepted PayoutState = "Accepted"
	// PayoutCompleted: the provider sent the payment to the recipient.
	PayoutCompleted PayoutState = "Completed"
	// PayoutRejected: the provider refused or bounced the payout.
	PayoutRejected PayoutState = "Rejected"
)

// PayoutFacts tracks the fiat payout at the provider. The intent (reference, requestedAt) is
// written before the provider is called, so that a crash between the two is recovered by a
// lookup of the reference rather than a second payout.
type PayoutFacts struct {
	// reference is the idempotency key at the provider and the payment reference: the transfer id.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Reference string `json:"reference"`
	// provider names the fiat provider.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Provider string `json:"provider"`
	// state at the provider.
	// +required
	State PayoutState `json:"state"`
	// requestedAt is when the intent was recorded.
	// +required
	RequestedAt metav1.Time `json:"requestedAt"`
	// providerID is the provider's id of the payout, once known.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	ProviderID string `json:"providerID,omitempty"`
	// sourceAmount in USD the provider converted.
	// +optional
	SourceAmount Decimal `json:"sourceAmount,omitempty"`
	// targetAmount in the target currency the recipient is paid.
	// +optional
	TargetAmount Decimal `json:"targetAmount,omitempty"`
	// rate the provider converted at.
	// +optional
	Rate Decimal `json:"rate,omitempty"`
	// message is the provider's word on the payout (a rejection's reason).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
	// updatedAt is when the state last changed.
	// +optional
	UpdatedAt *metav1.Time `json:"updatedAt,omitempty"`
	// lostAt is when the provider first answered that it holds no such payout (neither under
	// providerID nor under the reference) although it had accepted it: money may have moved, so
	// nothing is created again and nothing fails on its own; the controller keeps asking and the
	// NeedsAttention condition says so. Cleared when the provider knows the payout again.
	// +optional
	LostAt *metav1.Time `json:"lostAt,omitempty"`
	// returnWindowEndsAt is, for a completed payout, until when the recipient's bank may still
	// return it (the provider's return window from the completion): the controller asks the
	// provider about it, rarely, until then, and the archiver keeps the transfer live.
	// +optional
	ReturnWindowEndsAt *metav1.Time `json:"returnWindowEndsAt,omitempty"`
	// returned is set when the provider reported a completed payout cancelled after all: the
	// recipient's bank returned the money. The public status stays completed (spec 3.1: terminal);
	// the deposit is owed to its sender again (transfer.OwedOf), and NeedsAttention says so.
	// +optional
	Returned *PayoutReturn `json:"returned,omitempty"`
}

// PayoutReturn is a completed payout that the recipient's bank sent back.
type PayoutReturn struct {
	// at is when the controller saw the provider report it.
	// +required
	At metav1.Time `json:"at"`
	// message is the provider's reason.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// TransferFailure is why a transfer failed.
type TransferFailure struct {
	// +required
	Reason FailureReason `json:"reason"`
	// message is the public error text (spec 2.5 error).
	// +required
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message"`
	// +required
	At metav1.Time `json:"at"`
	// providerChecked: the provider was asked by reference before the transfer failed (or said
	// so itself, PayoutRejected) and held no payout of it. A transfer whose deposit was seen fails
	// only so: after a restore the status may not know of a payout the provider made, and failing
	// (then refunding) it would pay twice.
	// +optional
	ProviderChecked bool `json:"providerChecked,omitempty"`
}

// RefundFacts is the deposit sent back to the sender (spec 3.2 refunded), copied from the
// Refund object once its transaction is at depth.
type RefundFacts struct {
	// txHash of the refund on Base.
	// +required
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash"`
	// amount in USDC base units.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,30}$`
	Amount string `json:"amount,omitempty"`
	// to is the address refunded.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	To string `json:"to,omitempty"`
	// +required
	ConfirmedAt metav1.Time `json:"confirmedAt"`
}

// NotificationKind is an outcome mailed to the customer (spec 6).
// +kubebuilder:validation:Enum=PayoutSent;Failed
type NotificationKind string

const (
	NotificationPayoutSent NotificationKind = "PayoutSent"
	NotificationFailed     NotificationKind = "Failed"
)

// NotificationState is where an outcome e-mail stands.
// +kubebuilder:validation:Enum=Pending;Sent;Refused
type NotificationState string

const (
	// NotificationPending: the outcome to mail is decided and stored; the e-mail is sent after
	// this is stored, so a retry after a crash or a conflict sends this very outcome again
	// (with the same Message-ID), never another.
	NotificationPending NotificationState = "Pending"
	// NotificationSent: the mail server took the e-mail.
	NotificationSent NotificationState = "Sent"
	// NotificationRefused: the mail server refused it for good; it is not tried again.
	NotificationRefused NotificationState = "Refused"
)

// NotificationRecord is an e-mail to send, sent, or given up on.
type NotificationRecord struct {
	// +required
	Kind NotificationKind `json:"kind"`
	// state of the e-mail; a record without one (written before states existed) was sent, or
	// refused when failed is set.
	// +optional
	State NotificationState `json:"state,omitempty"`
	// to is the address mailed.
	// +required
	// +kubebuilder:validation:MaxLength=254
	To string `json:"to"`
	// decidedAt is when the outcome to mail was stored.
	// +optional
	DecidedAt *metav1.Time `json:"decidedAt,omitempty"`
	// sentAt is when the mail server took the e-mail (or refused it).
	// +optional
	SentAt *metav1.Time `json:"sentAt,omitempty"`
	// messageID is the Message-ID of the e-mail, derived from the transfer and the outcome so
	// that a resend after a crash is recognisably the same message.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	MessageID string `json:"messageID,omitempty"`
	// failed says why the message could not be delivered (the mail server refused it for good);
	// it is not tried again.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Failed string `json:"failed,omitempty"`
}

// StrayDeposit is a deposit to the transfer's address that does not pay it (from another wallet
// than the transfer's, of another token or network, after the transfer's amount was reached or
// after it ended, or the excess above the amount): it is never paid out, and `kubectl payout
// refund` sends it back to its sender, once (a Refund named by StrayRefundName).
type StrayDeposit struct {
	// network the deposit was sent on; empty means the transfer's network.
	// +optional
	Network Network `json:"network,omitempty"`
	// +required
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash"`
	// +optional
	LogIndex int64 `json:"logIndex,omitempty"`
	// +required
	Token Token `json:"token"`
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{1,30}$`
	Amount string `json:"amount"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	From string `json:"from,omitempty"`
	// reason it was not used.
	// +required
	// +kubebuilder:validation:MaxLength=256
	Reason string `json:"reason"`
	// refund of the stray deposit, once its transaction is at depth.
	// +optional
	Refund *StrayRefundFacts `json:"refund,omitempty"`
}

// StrayRefundFacts is a stray deposit sent back to its sender.
type StrayRefundFacts struct {
	// name of the Refund object.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// network and token the refund was sent in.
	// +required
	Network Network `json:"network"`
	// +required
	Token Token `json:"token"`
	// +required
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash"`
	// +required
	ConfirmedAt metav1.Time `json:"confirmedAt"`
}

// TxMatch is what became of a v2 transfer's confirmed hash.
type TxMatch struct {
	// recordedAt is when the controller first saw the hash: its lookups back off from then,
	// and the match timeout counts from it.
	// +required
	RecordedAt metav1.Time `json:"recordedAt"`
	// releasedAt is when the hash was given back: its transaction does not pay this transfer
	// (or was not found in time), so another transfer may confirm it. The transfer keeps the
	// hash in its spec, as confirm-transfer stored it, and holds no claim on it.
	// +optional
	ReleasedAt *metav1.Time `json:"releasedAt,omitempty"`
}

// ScreeningResult is the risk service's word on an address.
// +kubebuilder:validation:Enum=Cleared;Blocked;Unavailable
type ScreeningResult string

const (
	ScreeningCleared ScreeningResult = "Cleared"
	ScreeningBlocked ScreeningResult = "Blocked"
	// ScreeningUnavailable: the service could not answer; nothing is paid until it does.
	ScreeningUnavailable ScreeningResult = "Unavailable"
)

// ScreeningFacts is the screening of the wallet that actually paid, at depth.
type ScreeningFacts struct {
	// address screened.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Address string `json:"address"`
	// +required
	Result ScreeningResult `json:"result"`
	// +required
	At metav1.Time `json:"at"`
	// message says why an address is not cleared.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// StatusChange is one line of a transfer's history.
type StatusChange struct {
	// +required
	Status TransferPhase `json:"status"`
	// +required
	At metav1.Time `json:"at"`
	// +required
	Reason string `json:"reason"`
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// MaxHistory bounds a transfer's history: the newest lines are kept.
const MaxHistory = 16

// MaxStrays bounds the stray deposits listed in a transfer's status.
const MaxStrays = 32

// TransferStatus is what the transfer controller observed and did: facts, and the public
// status derived from them last (phase). Nothing decides on the phase.
//
// A v1 transfer's status is not written at its creation: until its deposit is seen it holds no
// fact, and the schema defaults its phase to ready_to_process when it is read (DefaultPhase), so
// that a create costs the API server one write and no status patch (docs/benchmarks.md). Its
// history, Ready condition and observedGeneration appear with the first fact; the opening
// history line is then written with the creation time (transfer.History shows it before).
//
// A status patch replaces a list whole, so a writer that does not know a field of a list's items
// (an older release, after a rollback) would write the items back without it. Two validation
// rules refuse such a write of the lists whose items gained fields after the release of 7c77d39
// (docs/operations/upgrade.md): strayDeposits (network, refund) and notifications (state,
// decidedAt). The older controller's write fails and is retried; this release makes it once it
// runs again (the Deposit objects keep every stray meanwhile, and a mail not recorded is not sent).
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.notifications) || (has(self.notifications) && oldSelf.notifications.all(o, self.notifications.exists(n, n.kind == o.kind && (!has(o.state) || has(n.state)) && (!has(o.decidedAt) || has(n.decidedAt)))))",message="a notification, once listed, stays listed with its state and decidedAt (a writer that does not know them must not write the list: docs/operations/upgrade.md)"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.strayDeposits) || (has(self.strayDeposits) && oldSelf.strayDeposits.all(o, self.strayDeposits.exists(n, n.txHash == o.txHash && n.?logIndex.orValue(0) == o.?logIndex.orValue(0) && (!has(o.network) || has(n.network)) && (!has(o.refund) || has(n.refund)))))",message="a stray deposit, once listed, stays listed with its network and its refund (a writer that does not know them must not write the list: docs/operations/upgrade.md)"
type TransferStatus struct {
	// phase is the public status (spec 3.1), derived from the facts below.
	// +optional
	// +kubebuilder:default=ready_to_process
	Phase TransferPhase `json:"phase,omitempty"`
	// deposit credited to (or judged for) this transfer.
	// +optional
	Deposit *DepositFacts `json:"deposit,omitempty"`
	// payout at the fiat provider.
	// +optional
	Payout *PayoutFacts `json:"payout,omitempty"`
	// failure, once failed.
	// +optional
	Failure *TransferFailure `json:"failure,omitempty"`
	// refund of the deposit, once at depth.
	// +optional
	Refund *RefundFacts `json:"refund,omitempty"`
	// notifications mailed, one per outcome.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	Notifications []NotificationRecord `json:"notifications,omitempty"`
	// strayDeposits to the address that do not pay the transfer, each refundable once with
	// `kubectl payout refund`. The newest MaxStrays are listed; the Deposit objects of the
	// transfer are the whole record.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	StrayDeposits []StrayDeposit `json:"strayDeposits,omitempty"`
	// txMatch (v2) is what became of the confirmed hash.
	// +optional
	TxMatch *TxMatch `json:"txMatch,omitempty"`
	// senderScreening is the screening of the wallet that paid, at depth, before any payout.
	// +optional
	SenderScreening *ScreeningFacts `json:"senderScreening,omitempty"`
	// updatedAt is the time of the last change of phase or facts.
	// +optional
	UpdatedAt *metav1.Time `json:"updatedAt,omitempty"`
	// history of the public status, oldest first, the newest MaxHistory lines.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	History []StatusChange `json:"history,omitempty"`

	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ErrorText is the public error of a failed transfer (spec 2.5), empty otherwise.
func (s *TransferStatus) ErrorText() string {
	if s.Failure == nil {
		return ""
	}
	return s.Failure.Message
}

// Transfer is one payout from a stablecoin deposit to a recipient, in the account's namespace,
// named by its 24-character id.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName={tr,trs},categories=payouts
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Amount",type=string,JSONPath=`.spec.amount`
// +kubebuilder:printcolumn:name="Currency",type=string,JSONPath=`.spec.quote.targetCurrency`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.spec.sourceNetwork`
// +kubebuilder:printcolumn:name="Recipient",type=integer,JSONPath=`.spec.recipientId`
// +kubebuilder:printcolumn:name="Method",type=string,JSONPath=`.spec.method`,priority=1
// +kubebuilder:printcolumn:name="Token",type=string,JSONPath=`.spec.sourceToken`,priority=1
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=`.status.failure.reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[0-9a-f]{24}$')",message="a transfer is named by its 24-character id"
type Transfer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TransferSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={}
	Status TransferStatus `json:"status,omitempty"`
}

// DefaultPhase is the phase the schema gives a transfer whose status was never written (the
// default of status.phase above): a fresh v1 transfer's.
const DefaultPhase = PhaseReadyToProcess

// TransferList is a list of Transfer.
//
// +kubebuilder:object:root=true
type TransferList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Transfer `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Transfer{}, &TransferList{})
}
