// Package refund is the one home of the refund's decisions: whether a transfer's deposit may be
// refunded (Refundable) and what an operator's request records (Requestable, for
// admin.RequestRefund), and the steps of sending money a transfer owes back to its sender: pure
// functions of a Refund's status and what was observed, for the refund controller
// (controllers/refund_controller.go) to load, apply and persist, with the reasons it reports
// them by. The transfer records a confirmed refund itself (transfer.Decide). What is owed is
// transfer.OwedOf's list: a failed transfer's deposit (sent in USDC on Base, spec 2.5) or one
// stray deposit (sent on its own network in its own token when the refund wallet can pay
// there, else in USDC on Base); a Refund refunds exactly the item whose name it bears.
//
// A Refund moves Pending → Signed → Broadcast → Confirmed, or to Refused when nothing is owed
// under its name. Before it is signed its destination is screened: a blocked address holds it
// (Held) until a later screening clears it, and a screening service that cannot answer keeps it
// Pending (fail closed). The signed transaction is persisted (Signed) before it is first
// broadcast, and from then on only those bytes are (re)broadcast until their receipt is at
// depth: a restart between signing and broadcasting sends the persisted transaction, never a
// second one. The one exception is a transaction whose receipt shows it reverted, at depth: it
// provably moved nothing, so the refund goes back to Pending, with the transaction listed in
// revertedTxs, and a new transaction is signed once the chain confirms each listed one
// reverted (UnprovenRevert). The CRD's transition rules refuse every other move backwards, so
// a status edited by hand cannot make the controller sign again; and a Refund being deleted
// stays (MoneyFinalizer) while its deletion could let the money go out twice (Release).
//
//	        Admit            screen, Sign            broadcast ok          receipt at depth
//	(new) ───────▶ Pending ──────────────▶ Signed ───────────────▶ Broadcast ───────────────▶ Confirmed
//	   │            │   ▲ ▲                  │  ▲ (same bytes again while no receipt)  │
//	   └──▶ Refused │   │ └── reverted at depth ◀─────────────────────────────────────┘
//	                ▼   │ cleared
//	               Held ┘ (destination blocked; screened again now and then)
package refund

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// Wallet is a refund wallet as the controller uses it: an evm.Wallet of one token on one network.
type Wallet interface {
	Address() string
	Network() payoutv1.Network
	Token() payoutv1.Token
	PendingNonce(ctx context.Context) (uint64, error)
	SignTransfer(ctx context.Context, to string, amount *big.Int, nonce uint64) (*evm.Signed, error)
	Broadcast(ctx context.Context, raw []byte) error
	// Receipt is what the chain says of the transaction: with the network's depth, as the
	// confirmations it requires now (ReceiptOf reads it).
	Receipt(ctx context.Context, hash string) (*chain.TxObservation, error)
	// SentTo lists the transfers of the wallet's token the wallet made to `to` since a time.
	SentTo(ctx context.Context, to string, since time.Time) ([]evm.Sent, error)
}

var _ Wallet = (*evm.Wallet)(nil)

// Wallets are the refund wallets of a deployment: one key, and a wallet for each token of each
// EVM network the chain configuration names.
type Wallets interface {
	// For is the wallet that sends token on network, if there is one.
	For(network payoutv1.Network, token payoutv1.Token) (Wallet, bool)
}

// Single is a set of one wallet.
func Single(w Wallet) Wallets { return single{w} }

type single struct{ w Wallet }

func (s single) For(network payoutv1.Network, token payoutv1.Token) (Wallet, bool) {
	if s.w == nil || s.w.Network() != network || s.w.Token() != token {
		return nil, false
	}
	return s.w, true
}

// Spec's refund rail: a failed transfer's deposit is sent back in USDC on Base (spec 2.5
// refund_tx_hash "on the Base network"), and so is a stray deposit no wallet can send back where
// it came from.
const (
	BaseNetwork = payoutv1.NetworkBase
	BaseToken   = payoutv1.TokenUSDC
)

// Action is what the controller does next for a refund.
type Action int

const (
	// ActionNone: the refund is Confirmed or Refused; nothing more happens.
	ActionNone Action = iota
	// ActionAdmit: check the transfer and record the recipient and amount (or refuse).
	ActionAdmit
	// ActionSign: assign a nonce, sign, persist the signed transaction.
	ActionSign
	// ActionWatch: look up the persisted transaction's receipt; while there is none, broadcast
	// the persisted bytes again.
	ActionWatch
)

// Next is the action a refund's status calls for.
func Next(st payoutv1.RefundStatus) Action {
	switch st.State {
	case "":
		return ActionAdmit
	case payoutv1.RefundPending, payoutv1.RefundHeld:
		return ActionSign
	case payoutv1.RefundSigned, payoutv1.RefundBroadcast:
		return ActionWatch
	}
	return ActionNone
}

// Admit is the status of a new refund: Pending with what to send (network, token, destination,
// amount) when owed holds an item under the refund's name, else Refused saying why. owed is
// transfer.OwedOf of the transfer (nil when it does not exist), or for a refund in
// OrphanNamespace transfer.OrphanOwed of the deposits recorded there (its transfer need not
// exist); wallets says where the refund wallet can send; why explains, when nothing is owed
// under the name, what the transfer's deposit is (Refundable), or that an operator wrote the
// refund's stray deposit off (ErrWrittenOff: owed is then without it, Unwritten).
func Admit(rf *payoutv1.Refund, t *payoutv1.Transfer, owed []transfer.Owed, wallets Wallets, why error) payoutv1.RefundStatus {
	st := rf.Status
	if t == nil && rf.Namespace != payoutv1.OrphanNamespace {
		return refused(st, fmt.Sprintf("transfer %s does not exist in namespace %s", rf.Spec.Transfer, rf.Namespace))
	}
	id := rf.Spec.Transfer
	var item *transfer.Owed
	for i := range owed {
		if owed[i].Name == rf.Name {
			item = &owed[i]
		}
	}
	switch {
	case item == nil && errors.Is(why, ErrWrittenOff):
		return refused(st, why.Error())
	case item == nil && rf.Spec.Deposit == nil && why != nil:
		return refused(st, why.Error())
	case item == nil && rf.Spec.Deposit == nil:
		return refused(st, fmt.Sprintf("transfer %s owes no deposit: it did not fail with a deposit of its own", id))
	case item == nil:
		return refused(st, fmt.Sprintf("transfer %s owes no stray deposit refunded by the name %s", id, rf.Name))
	case !sameDeposit(rf.Spec.Deposit, item.Deposit):
		return refused(st, fmt.Sprintf("refund %s names another deposit than the one its name refunds", rf.Name))
	}
	amount, ok := new(big.Int).SetString(item.Units, 10)
	if !ok || amount.Sign() <= 0 {
		return refused(st, fmt.Sprintf("transfer %s: %s is not a positive number of base units", id, item.What()))
	}
	network, token, to := BaseNetwork, BaseToken, ""
	if w, ok := wallets.For(item.Network, item.Token); ok && item.Deposit != nil && chain.IsEVMAddress(item.From) {
		// a stray deposit goes back where it came from, when the wallet can pay there
		network, token, to = w.Network(), w.Token(), payoutv1.NormalizeWallet(item.From)
	} else if a, ok := chain.RefundAddressOnBase(item.From); ok {
		to = a
	} else {
		return refused(st, fmt.Sprintf("transfer %s: %s came from %s, which has no address on Base where refunds are sent from", id, item.What(), item.From))
	}
	st.State = payoutv1.RefundPending
	st.Network, st.Token, st.To, st.Amount = network, token, to, amount.String()
	if w, ok := wallets.For(network, token); ok {
		st.From = w.Address()
	}
	st.Message = fmt.Sprintf("refunding %s: %s %s base units to %s on %s", item.What(), st.Amount, token, st.To, network)
	return truncateMessage(st)
}

func sameDeposit(a, b *payoutv1.DepositRef) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Network == b.Network && strings.EqualFold(a.TxHash, b.TxHash) && a.LogIndex == b.LogIndex
}

// Adopt looks for the refund among the wallet's transfers to its destination (sent): a refund
// restored from a snapshot taken before it was sent, or whose record was lost, is found on chain
// instead of being sent again. The first transfer of the refund's amount whose transaction no
// other refund records (taken) is adopted: the refund goes to Broadcast with that transaction and
// no signed bytes of its own, and is followed to depth like any other. ok is false when none
// matches.
func Adopt(st payoutv1.RefundStatus, sent []evm.Sent, taken map[string]bool) (payoutv1.RefundStatus, bool) {
	want, ok := new(big.Int).SetString(st.Amount, 10)
	if !ok {
		return st, false
	}
	for _, s := range sent {
		if s.Amount == nil || s.Amount.Cmp(want) != 0 || taken[strings.ToLower(s.TxHash)] {
			continue
		}
		st.State, st.TxHash, st.SignedTx, st.Nonce = payoutv1.RefundBroadcast, strings.ToLower(s.TxHash), "", nil
		st.BlockNumber, st.Confirmations = s.Block, 0
		st.Message = fmt.Sprintf("the refund wallet already sent %s base units to %s in %s (block %d), which no refund recorded: adopted, not sent again",
			st.Amount, st.To, st.TxHash, s.Block)
		return st, true
	}
	return st, false
}

// Adopted reports whether the refund follows a transaction found on chain rather than one it
// signed (it has no bytes to broadcast again).
func Adopted(st payoutv1.RefundStatus) bool { return st.SignedTx == "" && st.TxHash != "" }

// Lost is the status of an adopted refund whose transaction is no longer on chain (a reorg took
// it): Pending again, looked for and signed afresh.
func Lost(st payoutv1.RefundStatus) payoutv1.RefundStatus {
	msg := fmt.Sprintf("the adopted transaction %s is no longer on chain; the refund is sent again", st.TxHash)
	st = payoutv1.RefundStatus{State: payoutv1.RefundPending, Network: st.Network, Token: st.Token, To: st.To, Amount: st.Amount, From: st.From,
		Conditions: st.Conditions, ObservedGeneration: st.ObservedGeneration}
	st.Message = msg
	return st
}

// Held is the status of a refund whose destination failed wallet screening: nothing is sent.
func Held(st payoutv1.RefundStatus, msg string) payoutv1.RefundStatus {
	st.State = payoutv1.RefundHeld
	st.Message = truncate(fmt.Sprintf("held: the destination %s failed wallet screening (%s); nothing is sent, and it is screened again later", st.To, msg))
	return st
}

// Unscreened is the status of a refund whose destination could not be screened: it stays as it
// is (Pending or Held), saying why it waits.
func Unscreened(st payoutv1.RefundStatus, err error) payoutv1.RefundStatus {
	st.Message = truncate(fmt.Sprintf("waiting to screen the destination %s: %v; nothing is sent until it is cleared", st.To, err))
	return st
}

// Cleared is the status of a held refund whose destination is cleared now: Pending again.
func Cleared(st payoutv1.RefundStatus) payoutv1.RefundStatus {
	st.State = payoutv1.RefundPending
	st.Message = fmt.Sprintf("the destination %s is cleared; signing", st.To)
	return st
}

func truncateMessage(st payoutv1.RefundStatus) payoutv1.RefundStatus {
	st.Message = truncate(st.Message)
	return st
}

func refused(st payoutv1.RefundStatus, msg string) payoutv1.RefundStatus {
	st.State = payoutv1.RefundRefused
	st.Message = truncate(msg)
	return st
}

// NextNonce is the nonce of the next refund transaction from wallet from on network: the
// wallet's pending nonce on chain, or one past the highest nonce held by another refund from it
// on that network that is signed and not yet confirmed (whose transaction the node may not have
// yet), whichever is higher. self is excluded.
func NextNonce(pending uint64, refunds []payoutv1.Refund, self metav1.Object, network payoutv1.Network, from string) uint64 {
	next := pending
	for i := range refunds {
		r := &refunds[i]
		if r.Namespace == self.GetNamespace() && r.Name == self.GetName() {
			continue
		}
		if networkOf(r.Status) != network || !strings.EqualFold(r.Status.From, from) {
			continue
		}
		if r.Status.Nonce == nil || (r.Status.State != payoutv1.RefundSigned && r.Status.State != payoutv1.RefundBroadcast) {
			continue
		}
		if n := uint64(*r.Status.Nonce) + 1; n > next {
			next = n
		}
	}
	return next
}

// Signed is the status once the transaction is signed: it is persisted before any broadcast.
func Signed(st payoutv1.RefundStatus, from string, nonce uint64, tx *evm.Signed) payoutv1.RefundStatus {
	n := int64(nonce)
	st.State = payoutv1.RefundSigned
	st.From = from
	st.Nonce = &n
	st.SignedTx = "0x" + hex.EncodeToString(tx.Raw)
	st.TxHash = strings.ToLower(tx.Hash.Hex())
	st.BlockNumber, st.Confirmations = 0, 0
	st.Message = fmt.Sprintf("signed transaction %s (nonce %d); broadcasting it", st.TxHash, n)
	return st
}

// SignFailed records why no transaction could be signed (the wallet lacks tokens or gas, the
// node failed); the refund stays Pending and is retried with backoff, with no nonce taken.
func SignFailed(st payoutv1.RefundStatus, err error) payoutv1.RefundStatus {
	st.Message = truncate("not signed yet: " + err.Error())
	return st
}

// Broadcasted is the status after a broadcast of the persisted bytes: Broadcast when the node
// took them, the same state with the error as message when not.
func Broadcasted(st payoutv1.RefundStatus, err error) payoutv1.RefundStatus {
	if err != nil {
		st.Message = truncate(fmt.Sprintf("broadcast of %s failed (the same transaction is sent again): %v", st.TxHash, err))
		return st
	}
	st.State = payoutv1.RefundBroadcast
	st.Message = fmt.Sprintf("transaction %s broadcast; waiting for its receipt", st.TxHash)
	return st
}

// Receipt is what the chain says about the refund's transaction.
type Receipt struct {
	Found, Reverted      bool
	Block, Confirmations int64
	// Required is the network's depth, in confirmations the transaction's block needs now (with
	// depth finalized, those the node's finalized block has).
	Required int64
}

// AtDepth reports whether the transaction's block has the confirmations the network requires.
func (r Receipt) AtDepth() bool { return r.Found && r.Required > 0 && r.Confirmations >= r.Required }

// ReceiptOf is the receipt of a lookup of the refund's transaction (Wallet.Receipt).
func ReceiptOf(obs *chain.TxObservation) Receipt {
	if obs == nil || !obs.Found {
		return Receipt{}
	}
	return Receipt{Found: true, Reverted: obs.Reverted, Block: obs.BlockNumber, Confirmations: obs.Confirmations, Required: obs.Required}
}

// Observed is the status after looking up the receipt: Confirmed at depth; Pending again (the
// transaction cleared, and listed in revertedTxs) when it reverted and that is at depth, unless
// MaxRevertedTxs transactions reverted already (then it waits for an operator); otherwise
// waiting.
func Observed(st payoutv1.RefundStatus, r Receipt, now time.Time) payoutv1.RefundStatus {
	if !r.Found {
		return st
	}
	st.BlockNumber, st.Confirmations = r.Block, r.Confirmations
	atDepth := r.AtDepth()
	switch {
	case r.Reverted && atDepth && len(st.RevertedTxs) >= payoutv1.MaxRevertedTxs:
		st.State = payoutv1.RefundBroadcast
		st.Message = truncate(fmt.Sprintf("transaction %s reverted in block %d, and %d transactions of this refund reverted before: nothing more is signed; an operator must look (docs/operations/refunds.md)",
			st.TxHash, r.Block, len(st.RevertedTxs)))
	case r.Reverted && atDepth:
		msg := fmt.Sprintf("transaction %s reverted in block %d and moved nothing; a new transaction is signed", st.TxHash, r.Block)
		reverted := append(append([]string(nil), st.RevertedTxs...), st.TxHash)
		st = payoutv1.RefundStatus{
			State: payoutv1.RefundPending, Network: st.Network, Token: st.Token, To: st.To, Amount: st.Amount, From: st.From,
			RevertedTxs: reverted, Conditions: st.Conditions, ObservedGeneration: st.ObservedGeneration,
		}
		st.Message = msg
	case atDepth:
		t := metav1.NewTime(now)
		st.State, st.ConfirmedAt = payoutv1.RefundConfirmed, &t
		st.Message = fmt.Sprintf("transaction %s confirmed in block %d (%d confirmations)", st.TxHash, r.Block, r.Confirmations)
	default:
		st.State = payoutv1.RefundBroadcast
		what := "mined"
		if r.Reverted {
			what = "reverted"
		}
		st.Message = fmt.Sprintf("transaction %s %s in block %d: %d of %d confirmations", st.TxHash, what, r.Block, r.Confirmations, r.Required)
	}
	return st
}

// UnprovenRevert says why the chain does not show txHash, listed in the refund's revertedTxs,
// reverted at depth ("" when it does): a refund goes back to Pending and is signed again only
// because its transaction moved nothing, and the list is status, which a hand edit can write.
func UnprovenRevert(txHash string, r Receipt) string {
	switch {
	case !r.Found:
		return fmt.Sprintf("transaction %s, listed as reverted, is not on chain", txHash)
	case !r.Reverted:
		return fmt.Sprintf("transaction %s, listed as reverted, succeeded in block %d", txHash, r.Block)
	case !r.AtDepth():
		return fmt.Sprintf("transaction %s, listed as reverted, has %d of %d confirmations", txHash, r.Confirmations, r.Required)
	}
	return ""
}

// RevertUnproven is the status of a Pending refund whose revertedTxs the chain does not bear
// out (why is UnprovenRevert's answer): nothing is signed, and it is looked at again later.
func RevertUnproven(st payoutv1.RefundStatus, why string) payoutv1.RefundStatus {
	st.Message = truncate("nothing is signed: " + why + "; an operator must look (docs/operations/refunds.md)")
	return st
}

// Release says whether a Refund being deleted may go (its MoneyFinalizer removed), and why not:
// only when its deletion cannot make money go out twice. A refund with nothing signed (new,
// Pending, Held) or Refused sent nothing, so a new request starts afresh. A Signed or Broadcast
// refund's transaction may be on its way: the refund goes on and stays until Confirmed. A
// Confirmed refund goes once something else records it: its transfer (status.refund for its
// deposit, the stray's refund in status.strayDeposits), or nothing at all when the transfer is
// gone (archived, or its account deleted); in OrphanNamespace the Refund is the only record of
// the money sent, and it stays. t is the refund's transfer, nil when it does not exist.
func Release(rf *payoutv1.Refund, t *payoutv1.Transfer) (bool, string) {
	switch rf.Status.State {
	case "", payoutv1.RefundPending, payoutv1.RefundHeld, payoutv1.RefundRefused:
		return true, "nothing was sent"
	case payoutv1.RefundSigned, payoutv1.RefundBroadcast:
		return false, fmt.Sprintf("its transaction %s may be on its way: the refund goes on, and goes once confirmed", rf.Status.TxHash)
	}
	switch {
	case rf.Namespace == payoutv1.OrphanNamespace:
		return false, "it is the only record of the money it sent back"
	case t == nil:
		return true, "its transfer is gone"
	case rf.Spec.Deposit == nil && t.Status.Refund != nil && strings.EqualFold(t.Status.Refund.TxHash, rf.Status.TxHash):
		return true, "its transfer records it"
	case rf.Spec.Deposit != nil:
		for _, sd := range t.Status.StrayDeposits {
			if sd.Refund != nil && sd.Refund.Name == rf.Name {
				return true, "its transfer records it"
			}
		}
	}
	return false, fmt.Sprintf("transfer %s does not record it yet", rf.Spec.Transfer)
}

// DeletionWaits is the status of a deleted refund that stays (why is Release's answer).
func DeletionWaits(st payoutv1.RefundStatus, why string) payoutv1.RefundStatus {
	st.Message = truncate("deleted, and kept until it may go: " + why)
	return st
}

// SignedBytes reads back the persisted transaction and checks it is the one whose hash is
// recorded.
func SignedBytes(st payoutv1.RefundStatus) ([]byte, error) {
	raw, err := hex.DecodeString(strings.TrimPrefix(st.SignedTx, "0x"))
	if err != nil || len(raw) == 0 {
		return nil, fmt.Errorf("the persisted signed transaction is not hex")
	}
	tx, err := evm.DecodeRaw(raw)
	if err != nil {
		return nil, fmt.Errorf("the persisted signed transaction does not decode: %w", err)
	}
	if !strings.EqualFold(tx.Hash().Hex(), st.TxHash) {
		return nil, fmt.Errorf("the persisted transaction hashes to %s, the status says %s", tx.Hash().Hex(), st.TxHash)
	}
	if st.Nonce == nil || tx.Nonce() != uint64(*st.Nonce) {
		return nil, fmt.Errorf("the persisted transaction has nonce %d, the status another", tx.Nonce())
	}
	return raw, nil
}

// Amount is the refund's amount in base units.
func Amount(st payoutv1.RefundStatus) (*big.Int, error) {
	a, ok := new(big.Int).SetString(st.Amount, 10)
	if !ok || a.Sign() <= 0 || !common.IsHexAddress(st.To) {
		return nil, fmt.Errorf("the refund records amount %q to %q", st.Amount, st.To)
	}
	return a, nil
}

// networkOf is the network a refund is sent on (refunds recorded before stray refunds existed
// name none: they were all on Base).
func networkOf(st payoutv1.RefundStatus) payoutv1.Network {
	if st.Network == "" {
		return BaseNetwork
	}
	return st.Network
}

func truncate(s string) string {
	if len(s) > 500 {
		return s[:497] + "..."
	}
	return s
}
