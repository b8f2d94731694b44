// Package refund decides the steps of sending a failed transfer's deposit back to its sender on
// Base: pure functions of a Refund's status and what was observed, for the refund controller
// (controllers/refund_controller.go) to load, apply and persist.
//
// A Refund moves Pending → Signed → Broadcast → Confirmed, or to Refused when the transfer
// cannot be refunded. The signed transaction is persisted (Signed) before it is first
// broadcast, and from then on only those bytes are (re)broadcast until their receipt is at
// depth: a restart between signing and broadcasting sends the persisted transaction, never a
// second one. The one exception is a transaction whose receipt shows it reverted, at depth: it
// provably moved nothing, so the refund goes back to Pending and a new transaction is signed.
//
//	        Admit                Sign                broadcast ok          receipt at depth
//	(new) ───────▶ Pending ──────────────▶ Signed ───────────────▶ Broadcast ───────────────▶ Confirmed
//	   │                ▲                    │  ▲ (same bytes again while no receipt)  │
//	   └──▶ Refused     └──── reverted at depth ◀─────────────────────────────────────┘
package refund

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/evm"
)

// Wallet is the refund wallet as the controller uses it (evm.Wallet on Base).
type Wallet interface {
	Address() string
	Network() payoutv1.Network
	Confirmations() int64
	PendingNonce(ctx context.Context) (uint64, error)
	SignTransfer(ctx context.Context, to string, amount *big.Int, nonce uint64) (*evm.Signed, error)
	Broadcast(ctx context.Context, raw []byte) error
	Receipt(ctx context.Context, hash string) (found, reverted bool, block, confirmations int64, err error)
}

var _ Wallet = (*evm.Wallet)(nil)

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
	case payoutv1.RefundPending:
		return ActionSign
	case payoutv1.RefundSigned, payoutv1.RefundBroadcast:
		return ActionWatch
	}
	return ActionNone
}

// Admit is the status of a new refund: Refused when the transfer cannot be refunded (it does
// not exist, is not failed, its deposit did not arrive, its sender has no address on Base), else
// Pending with the deposit's sender's address on Base (chain.RefundAddressOnBase: a Tron
// sender's 0x body) and amount, to be sent in USDC on Base from wallet.
func Admit(rf *payoutv1.Refund, t *payoutv1.Transfer, wallet string) payoutv1.RefundStatus {
	st := rf.Status
	if t == nil {
		return refused(st, fmt.Sprintf("transfer %s does not exist in namespace %s", rf.Spec.Transfer, rf.Namespace))
	}
	if err := admin.CheckRefundable(t); err != nil {
		return refused(st, err.Error())
	}
	amount, ok := new(big.Int).SetString(t.Status.Deposit.Amount, 10)
	if !ok || amount.Sign() <= 0 {
		return refused(st, fmt.Sprintf("transfer %s: the deposit's amount %q is not a positive number of base units", t.Name, t.Status.Deposit.Amount))
	}
	st.State = payoutv1.RefundPending
	st.Network, st.Token = payoutv1.NetworkBase, payoutv1.TokenUSDC
	st.To, _ = chain.RefundAddressOnBase(t.Status.Deposit.From) // CheckRefundable saw one
	st.Amount = amount.String()
	st.From = wallet
	st.Message = fmt.Sprintf("refunding %s USDC base units to %s on base", st.Amount, st.To)
	if from := t.Status.Deposit.From; !strings.EqualFold(from, st.To) {
		st.Message += fmt.Sprintf(", the same key as the deposit's sender %s on %s", from, t.Status.Deposit.Network)
	}
	return st
}

func refused(st payoutv1.RefundStatus, msg string) payoutv1.RefundStatus {
	st.State = payoutv1.RefundRefused
	st.Message = truncate(msg)
	return st
}

// NextNonce is the nonce of the next refund transaction: the wallet's pending nonce on chain,
// or one past the highest nonce held by another refund that is signed and not yet confirmed
// (whose transaction the node may not have yet), whichever is higher. self is excluded.
func NextNonce(pending uint64, refunds []payoutv1.Refund, self metav1.Object) uint64 {
	next := pending
	for i := range refunds {
		r := &refunds[i]
		if r.Namespace == self.GetNamespace() && r.Name == self.GetName() {
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
	// Required is the network's depth.
	Required int64
}

// Observed is the status after looking up the receipt: Confirmed at depth; Pending again (the
// transaction cleared) when it reverted and that is at depth; otherwise waiting.
func Observed(st payoutv1.RefundStatus, r Receipt, now time.Time) payoutv1.RefundStatus {
	if !r.Found {
		return st
	}
	st.BlockNumber, st.Confirmations = r.Block, r.Confirmations
	atDepth := r.Required > 0 && r.Confirmations >= r.Required
	switch {
	case r.Reverted && atDepth:
		msg := fmt.Sprintf("transaction %s reverted in block %d and moved nothing; a new transaction is signed", st.TxHash, r.Block)
		st = payoutv1.RefundStatus{
			State: payoutv1.RefundPending, Network: st.Network, Token: st.Token, To: st.To, Amount: st.Amount, From: st.From,
			Conditions: st.Conditions, ObservedGeneration: st.ObservedGeneration,
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

func truncate(s string) string {
	if len(s) > 500 {
		return s[:497] + "..."
	}
	return s
}
