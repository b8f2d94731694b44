package refund

// Reasons of a Refund's Ready condition and events.
const (
	ReasonAccepted  = "Accepted"
	ReasonRefused   = "Refused"
	ReasonSigned    = "Signed"
	ReasonBroadcast = "Broadcast"
	ReasonConfirmed = "Confirmed"
	// ReasonNoWallet: no refund wallet is configured; the refund waits.
	ReasonNoWallet = "NoRefundWallet"
	// ReasonNotSigned: the wallet cannot pay now (tokens, gas) or the node failed; retried.
	ReasonNotSigned = "NotSigned"
	// ReasonBroadcastFailed: the node did not take the signed transaction; the same bytes
	// are sent again.
	ReasonBroadcastFailed = "BroadcastFailed"
	// ReasonReverted: the transaction reverted at depth (nothing moved); a new one is signed.
	ReasonReverted = "Reverted"
	// ReasonAdopted (Warning): the refund was found already sent on chain (its record was
	// lost, e.g. by an etcd restore) and is followed instead of sent again.
	ReasonAdopted = "Adopted"
	// ReasonPaused: money may not move now (the recovery check, an operator's pause);
	// nothing is signed until it may.
	ReasonPaused = "Paused"
	// ReasonHeld: the destination failed wallet screening; nothing is sent.
	ReasonHeld = "Held"
	// ReasonUnscreened: the destination could not be screened (the service cannot
	// answer); nothing is sent until it is cleared.
	ReasonUnscreened = "ScreeningUnavailable"
	// ReasonRevertUnproven: a transaction listed in status.revertedTxs is not reverted at
	// depth on chain; nothing is signed.
	ReasonRevertUnproven = "RevertUnproven"
	// ReasonDeletionWaits: the Refund is deleted, and stays (its finalizer) while its
	// deletion could let the money go out twice (Release says why).
	ReasonDeletionWaits = "DeletionWaits"
	// ReasonReleased: a deleted Refund's finalizer is removed; it goes.
	ReasonReleased = "Released"
)
