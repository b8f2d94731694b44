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

// Terminal reports whether no further transition can happen on its own (refunded is reached
// from failed by an operator only).
func (p TransferPhase) Terminal() bool {
	return p == PhaseCompleted || p == PhaseFailed || p == PhaseRefunded
}

// Transition moves a transfer to phase at the given time and records the change in its history.
func (t *Transfer) Transition(phase TransferPhase, reason, message string, at metav1.Time) {
	t.Status.Phase = phase
	t.Status.UpdatedAt = &at
	t.Status.History = append(t.Status.History, StatusChange{Status: phase, At: at, Reason: reason, Message: message})
}

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
// changes afterwards, except the v2 transaction hash (set once by confirm-transfer) and an
// operator's refund request (one-way).
// +kubebuilder:validation:XValidation:rule="self.method != 'v2' || self.sourceToken == 'usdc'",message="v2 transfers take USDC only"
// +kubebuilder:validation:XValidation:rule="self.method != 'v2' || self.sourceNetwork != 'tron'",message="v2 transfers are not available on tron"
// +kubebuilder:validation:XValidation:rule="self.method != 'v1' || self.walletAddress.matches('^0x[0-9a-fA-F]{40}$')",message="v1 wallet addresses are EVM addresses"
// +kubebuilder:validation:XValidation:rule="self.method == 'v2' || !has(self.txHash)",message="only v2 transfers are confirmed with a transaction hash"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.txHash) || (has(self.txHash) && self.txHash == oldSelf.txHash)",message="txHash is set once and never overwritten"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.refundRequested) || !oldSelf.refundRequested || (has(self.refundRequested) && self.refundRequested)",message="a refund request cannot be withdrawn"
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
	// txHash is the v2 deposit transaction supplied by confirm-transfer.
	// +optional
	// +kubebuilder:validation:Pattern=`^(0x[0-9a-f]{64}|[1-9A-HJ-NP-Za-km-z]{85,88})$`
	TxHash string `json:"txHash,omitempty"`
	// refundRequested records an operator's refund request (kubectl-payout refund).
	// +optional
	RefundRequested bool `json:"refundRequested,omitempty"`
}

// ObservedDeposit is a deposit seen on chain for the transfer.
type ObservedDeposit struct {
	// +required
	TxHash string `json:"txHash"`
	// from is the sending address.
	// +optional
	From string `json:"from,omitempty"`
	// amount in token base units (6 decimals).
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{1,30}$`
	Amount string `json:"amount"`
	// +required
	Token Token `json:"token"`
	// +optional
	BlockNumber int64 `json:"blockNumber,omitempty"`
	// +required
	DetectedAt metav1.Time `json:"detectedAt"`
}

// PayoutState tracks the fiat payout at the provider. The intent (reference, requestedAt) is
// written before the provider is called, so that a crash between the two is recovered by a
// lookup of the reference rather than a second payout.
type PayoutState struct {
	// reference is the idempotency key at the provider: the transfer id.
	// +required
	Reference string `json:"reference"`
	// +required
	Provider string `json:"provider"`
	// providerID is the provider's id of the payout, once known.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// state at the provider.
	// +optional
	State string `json:"state,omitempty"`
	// +required
	RequestedAt metav1.Time `json:"requestedAt"`
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
	Message string `json:"message,omitempty"`
}

// TransferStatus is what the controllers observed and did.
type TransferStatus struct {
	// phase is the public status (spec 3.1).
	// +optional
	Phase TransferPhase `json:"phase,omitempty"`
	// error explains a failure.
	// +optional
	Error string `json:"error,omitempty"`
	// deposit observed on chain.
	// +optional
	Deposit *ObservedDeposit `json:"deposit,omitempty"`
	// payout at the fiat provider.
	// +optional
	Payout *PayoutState `json:"payout,omitempty"`
	// refundTxHash is the Base transaction that returned the deposit.
	// +optional
	RefundTxHash string `json:"refundTxHash,omitempty"`
	// updatedAt is the time of the last change of phase or facts.
	// +optional
	UpdatedAt *metav1.Time `json:"updatedAt,omitempty"`
	// history of the public status, oldest first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
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

// Transfer is one payout from a stablecoin deposit to a recipient, in the account's namespace,
// named by its 24-character id.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName={tr,trs},categories=payouts
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Method",type=string,JSONPath=`.spec.method`
// +kubebuilder:printcolumn:name="Amount",type=string,JSONPath=`.spec.amount`
// +kubebuilder:printcolumn:name="Currency",type=string,JSONPath=`.spec.quote.targetCurrency`
// +kubebuilder:printcolumn:name="Token",type=string,JSONPath=`.spec.sourceToken`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.spec.sourceNetwork`
// +kubebuilder:printcolumn:name="Recipient",type=integer,JSONPath=`.spec.recipientId`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[0-9a-f]{24}$')",message="a transfer is named by its 24-character id"
type Transfer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TransferSpec `json:"spec"`
	// +optional
	Status TransferStatus `json:"status,omitempty"`
}

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
