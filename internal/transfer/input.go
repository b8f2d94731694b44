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
//	                 ┌──────────── Deposits (v1: Deposit objects of the watcher)
//	                 ├──────────── Tx (v2: the confirmed hash looked up on chain)
//	Transfer ───────▶├──────────── Provider (the payout asked by reference, once the intent is stored)
//	                 ├──────────── Recipient (the head of the recipient's lineage)
//	                 ├──────────── Refund (the operator's one-shot refund request)
//	                 └──────────── Now
type Input struct {
	// Transfer is the transfer as stored (from the cache). Decide never changes it.
	Transfer *payoutv1.Transfer
	// Now is the controller's clock.
	Now time.Time

	// Deposits are the v1 deposits the chain watcher recorded for the transfer's address.
	Deposits []payoutv1.Deposit
	// Tx is what the chain says about a v2 transfer's confirmed hash; nil when not looked up.
	Tx *chain.TxObservation
	// V2Address is the platform's fixed deposit address of a v2 transfer's token and network.
	V2Address string

	// Provider is the provider's answer about the payout of the transfer's reference; nil when
	// the provider was not asked (no payout intent is stored yet).
	Provider *ProviderPayout
	// ProviderName names the provider payouts go to.
	ProviderName string

	// Recipient is what the recipient store says about the transfer's recipient.
	Recipient RecipientState

	// Refund is the transfer's refund request, if an operator made one.
	Refund *payoutv1.Refund
}

// ProviderPayout is the provider's word on a payout, asked by reference.
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
