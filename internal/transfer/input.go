package transfer

import (
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
)

// Input is everything the transfer controller observed before deciding: the transfer as stored,
// and what the chain, the provider, the recipient store, the refund request and the clock say.
// The gatherer fills it; Decide only reads it.
//
//	                 ┌──────────── Deposits (v1: Deposit objects of the watchers, every network)
//	                 ├──────────── Cursor (v1: how far the transfer's network is scanned at depth)
//	                 ├──────────── Tx, WalletBindings (v2: the confirmed hash on chain; its senders' bindings)
//	Transfer ───────▶├──────────── Screening (the risk service on the wallet that paid, when asked)
//	                 ├──────────── Provider (the payout asked by reference, once the intent is stored)
//	                 ├──────────── Recipient (the head of the recipient's lineage)
//	                 ├──────────── Refund, StrayRefunds (the operator's one-shot refund requests)
//	                 └──────────── Now
type Input struct {
	// Transfer is the transfer as stored (from the cache). Decide never changes it.
	Transfer *payoutv1.Transfer
	// Now is the controller's clock.
	Now time.Time

	// Deposits are the v1 deposits the chain watchers recorded for the transfer's address, on
	// every network that shares it (a deposit on another network than the transfer's is a
	// stray).
	Deposits []payoutv1.Deposit
	// Cursor is how far the watcher of a v1 transfer's network has scanned at depth (its
	// expiry is judged on the chain, not on the clock).
	Cursor ChainProgress
	// Tx is what the chain says about a v2 transfer's confirmed hash; nil when not looked up.
	Tx *chain.TxObservation
	// V2Address is the platform's fixed deposit address of a v2 transfer's token and network.
	V2Address string
	// MatchTimeout is how long a confirmed v2 hash may stay unfound on chain before the
	// transfer fails (DepositNotFound) and releases it; 0 waits for ever.
	MatchTimeout time.Duration
	// WalletBindings are the accounts (their namespaces) the senders of the v2 transaction are
	// bound to, by chain.SenderKey; a sender bound to no account is absent.
	WalletBindings map[string]string
	// BindWallets: the transfer's account binds the wallets its v2 transfers are paid from,
	// once their owners proved control for it (ProvenWallets).
	BindWallets bool
	// ProvenWallets are the senders of the v2 deposit (by chain.SenderKey) whose owner proved
	// control for the transfer's account on the wallet verification site (Wallet spec.proof).
	// Only those are bound: a binding is not first come, first served (issue 28).
	ProvenWallets map[string]bool
	// DepositHolder is the transfer ("namespace/name") that holds the claim binding a v2
	// transfer's deposit log (DepositClaimKey), once read or made; "" when none is known.
	DepositHolder string
	// Paused says why money may not move now (the recovery check of this start has not
	// finished, an operator paused, or a check found the cluster behind the ledgers): no deposit
	// is bound and no payout created; "" when money moves.
	Paused string

	// ScreenSender: the wallet that paid must be cleared by the risk service before the payout
	// (v1 always, spec 4.10 rule 2; v2 when the account screens wallets, 4.11).
	ScreenSender bool
	// Screening is the risk service's answer on Screening.Address, when the controller asked
	// (Decision.Screen); nil otherwise.
	Screening *Screening

	// Provider is the provider's word on the payout of the stored intent, as PayoutStep made it
	// of the provider's answer (and of Create's, when it created); nil when the provider was not
	// asked (no payout intent is stored yet).
	Provider *ProviderPayout
	// ProviderBefore is the provider's answer by reference for a transfer with no payout intent,
	// asked before a transfer whose deposit was seen may fail (Decision.AskProvider); nil when
	// not asked.
	ProviderBefore *ProviderPayout
	// ProviderName names the provider payouts go to.
	ProviderName string
	// Mailing: outcome e-mails are sent in this deployment (an outcome is stored to be mailed).
	Mailing bool

	// Recipient is what the recipient store says about the transfer's recipient.
	Recipient RecipientState

	// Refund is the refund request of the transfer's deposit, if an operator made one.
	Refund *payoutv1.Refund
	// StrayRefunds are the refund requests of its stray deposits.
	StrayRefunds []payoutv1.Refund
}

// ChainProgress is how far a network's watcher has scanned at confirmation depth.
type ChainProgress struct {
	// Known is false when no cursor of the network could be read.
	Known bool
	// Block is the newest block scanned at depth, BlockTime its timestamp (zero when the
	// watcher has not recorded it).
	Block     int64
	BlockTime time.Time
}

// Passed reports whether the scan at depth has passed a block mined after t: every deposit
// mined at or before t is recorded by then.
func (c ChainProgress) Passed(t time.Time) bool {
	return c.Known && !c.BlockTime.IsZero() && c.BlockTime.After(t)
}

// Screening is the risk service's answer on an address.
type Screening struct {
	Address string
	Result  payoutv1.ScreeningResult
	// Message says why the address is not cleared (the service's error when Unavailable).
	Message string
}

// ProviderPayout is the provider's word on a payout, asked by its id once the provider gave one,
// by reference before.
type ProviderPayout struct {
	// Found is false when the provider holds no payout with the reference.
	Found bool
	State payoutv1.PayoutState
	// ProviderID is the provider's id of the payout.
	ProviderID string
	// SourceAmount (USD), TargetAmount and Rate as the provider converted, decimal text.
	SourceAmount, TargetAmount, Rate string
	// Message is the provider's reason for a rejection.
	Message string
	// ReturnWindow is how long after the payout completed the provider may still report it
	// returned (fiat.Provider.ReturnWindow); 0 when it never does.
	ReturnWindow time.Duration
}

// RecipientState is the recipient of a transfer as the store has it now: the newest recipient of
// its lineage (an update creates a new id), since that is the one a deletion acts on.
type RecipientState struct {
	// Known is false when the recipient could not be found (it never goes away in practice:
	// deleted recipients stay readable).
	Known bool
	// ID of the newest recipient of the lineage.
	ID int64
	// Inactive: the newest recipient takes no more transfers (deleted in any way).
	Inactive bool
	// Deleted: the recipient was deleted through the API (DELETE recipient) at DeletedAt, which
	// stops its transfers in progress (spec 3.2). The automatic deletion after another transfer
	// ended (spec 2.1) does not: it only tidies the saved recipient, and the transfers in flight
	// pay out to their snapshot.
	Deleted   bool
	DeletedAt time.Time
}

// RecipientDeletionGrace is how long after a recipient's deletion through the API the transfer
// controller waits before it fails a transfer of the recipient that the deletion did not stop
// itself. The deletion records its cancellations within the request; the wait keeps the
// controller from failing those transfers first, which would take them out of the deletion's
// transfers_failed count.
const RecipientDeletionGrace = 30 * time.Second

// Active reports whether the recipient can still take transfers (and so is deleted after this
// transfer ends, unless keepRecipient).
func (r RecipientState) Active() bool { return r.Known && !r.Inactive }

// CurrentPayoutIntent is the payout intent as stored: set only when the intent has been
// persisted, which is the condition for any call to the provider.
func (in *Input) CurrentPayoutIntent() *payoutv1.PayoutFacts {
	return in.Transfer.Status.Payout
}
