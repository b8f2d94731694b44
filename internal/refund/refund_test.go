package refund

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/test/testgen"
)

const wallet = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"

// tronSender is the Tron spelling (Base58Check) of testgen.Deposit's sender
// 0x8ba1f109551bd432803012645ac136ddd64dba72.
var tronSender, _ = chain.TronAddressFromHex("0x8ba1f109551bd432803012645ac136ddd64dba72")

func refundOf(id string) *payoutv1.Refund {
	return &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: "payout-acme", Name: id}, Spec: payoutv1.RefundSpec{Transfer: id}}
}

// addressOnly is a test double of a refund wallet that only names itself: Admit reads no more.
type addressOnly struct {
	Wallet
	network payoutv1.Network
	token   payoutv1.Token
}

func (a addressOnly) Address() string           { return wallet }
func (a addressOnly) Network() payoutv1.Network { return a.network }
func (a addressOnly) Token() payoutv1.Token     { return a.token }

// wallets on base (USDC) and polygon (USDC), as a deployment with those networks has.
type twoNetworks struct{}

func (twoNetworks) For(n payoutv1.Network, t payoutv1.Token) (Wallet, bool) {
	if t == payoutv1.TokenUSDC && (n == payoutv1.NetworkBase || n == payoutv1.NetworkPolygon) {
		return addressOnly{network: n, token: t}, true
	}
	return nil, false
}

func TestAdmit(t *testing.T) {
	id := "0123456789abcdef01234567"
	failedWithDeposit := func(tr *payoutv1.Transfer) {
		testgen.Failed(payoutv1.FailureDepositShort, "short")(tr)
		tr.Status.Deposit = testgen.Deposit()
	}
	cases := []struct {
		name     string
		transfer *payoutv1.Transfer
		state    payoutv1.RefundState
		message  string
	}{
		{"no transfer", nil, payoutv1.RefundRefused, "does not exist"},
		{"not failed", testgen.Transfer("payout-acme", id), payoutv1.RefundRefused, "only a failed transfer"},
		{"failed before the deposit", testgen.Transfer("payout-acme", id, testgen.Failed(payoutv1.FailureExpired, "expired")), payoutv1.RefundRefused, "nothing to send back"},
		{"a Solana sender", testgen.Transfer("payout-acme", id, failedWithDeposit, func(tr *payoutv1.Transfer) {
			tr.Status.Deposit.From = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
		}), payoutv1.RefundRefused, "no address on Base"},
		{"already refunded", testgen.Transfer("payout-acme", id, failedWithDeposit, func(tr *payoutv1.Transfer) {
			tr.Status.Refund = &payoutv1.RefundFacts{TxHash: "0x01"}
		}), payoutv1.RefundRefused, "already refunded"},
		{"a zero amount", testgen.Transfer("payout-acme", id, failedWithDeposit, func(tr *payoutv1.Transfer) { tr.Status.Deposit.Amount = "0" }), payoutv1.RefundRefused, "did not fail with a deposit"},
		{"refundable", testgen.Transfer("payout-acme", id, failedWithDeposit), payoutv1.RefundPending, "25000000 usdc base units"},
		// a Tron sender is refunded at its 0x body on Base: the same key's address
		{"a Tron sender", testgen.Transfer("payout-acme", id, failedWithDeposit, func(tr *payoutv1.Transfer) {
			tr.Status.Deposit.Network, tr.Status.Deposit.Token, tr.Status.Deposit.From = payoutv1.NetworkTron, payoutv1.TokenUSDT, tronSender
		}), payoutv1.RefundPending, "from " + tronSender},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var owed []transfer.Owed
			var why error
			if tc.transfer != nil {
				owed, why = transfer.OwedOf(tc.transfer, nil, false), Refundable(tc.transfer)
			}
			st := Admit(refundOf(id), tc.transfer, owed, twoNetworks{}, why)
			if st.State != tc.state || !strings.Contains(st.Message, tc.message) {
				t.Fatalf("state %s message %q, want %s and %q", st.State, st.Message, tc.state, tc.message)
			}
			if tc.state == payoutv1.RefundRefused {
				if st.To != "" || st.Amount != "" || st.SignedTx != "" {
					t.Fatalf("a refused refund records a transfer: %+v", st)
				}
				if Next(st) != ActionNone {
					t.Fatal("a refused refund does something more")
				}
				return
			}
			if st.To != "0x8ba1f109551bd432803012645ac136ddd64dba72" || st.Amount != "25000000" || st.Network != payoutv1.NetworkBase ||
				st.Token != payoutv1.TokenUSDC || st.From != wallet || Next(st) != ActionSign {
				t.Fatalf("pending refund %+v", st)
			}
		})
	}
}

// TestAdmitStray: a stray deposit goes back to its own sender on its own network when the refund
// wallet can pay there, else in USDC on Base to the same key; a refund is admitted only under the
// name of what it refunds.
func TestAdmitStray(t *testing.T) {
	id := "0123456789abcdef01234567"
	tr := testgen.Transfer("payout-acme", id)
	stranger := "0x1111111111111111111111111111111111111111"
	dep := func(n payoutv1.Network, tok payoutv1.Token, from string) payoutv1.Deposit {
		return payoutv1.Deposit{Spec: payoutv1.DepositSpec{Transfer: id, Network: n, Token: tok, From: from, Amount: "7",
			TxHash: "0x" + strings.Repeat("0", 63) + "7", BlockTime: testgen.Epoch}}
	}
	cases := []struct {
		name    string
		dep     payoutv1.Deposit
		network payoutv1.Network
		token   payoutv1.Token
		to      string
	}{
		{"on polygon, where the wallet pays", dep(payoutv1.NetworkPolygon, payoutv1.TokenUSDC, stranger), payoutv1.NetworkPolygon, payoutv1.TokenUSDC, stranger},
		{"USDT on ethereum: no wallet there, so USDC on Base", dep(payoutv1.NetworkEthereum, payoutv1.TokenUSDT, stranger), payoutv1.NetworkBase, payoutv1.TokenUSDC, stranger},
		{"a Tron sender: its key's address on Base", dep(payoutv1.NetworkTron, payoutv1.TokenUSDT, chain.TronAddress([20]byte{0x11, 0x11})), payoutv1.NetworkBase, payoutv1.TokenUSDC, "0x1111000000000000000000000000000000000000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			owed := transfer.OwedOf(tr, []payoutv1.Deposit{tc.dep}, false)
			if len(owed) != 1 || owed[0].Deposit == nil {
				t.Fatalf("owed %+v", owed)
			}
			rf := &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: "payout-acme", Name: owed[0].Name},
				Spec: payoutv1.RefundSpec{Transfer: id, Deposit: owed[0].Deposit}}
			st := Admit(rf, tr, owed, twoNetworks{}, nil)
			if st.State != payoutv1.RefundPending || st.Network != tc.network || st.Token != tc.token || st.To != tc.to || st.Amount != "7" {
				t.Fatalf("admitted %+v", st)
			}
			renamed := rf.DeepCopy()
			renamed.Name = id + "-0000000000000000"
			if st := Admit(renamed, tr, owed, twoNetworks{}, nil); st.State != payoutv1.RefundRefused {
				t.Errorf("a refund under another name is refused: %+v", st)
			}
			other := rf.DeepCopy()
			other.Spec.Deposit = &payoutv1.DepositRef{Network: tc.dep.Spec.Network, TxHash: "0xff", LogIndex: 1}
			if st := Admit(other, tr, owed, twoNetworks{}, nil); st.State != payoutv1.RefundRefused {
				t.Errorf("a refund naming another deposit than its name's is refused: %+v", st)
			}
		})
	}
}

func nonce(n int64) *int64 { return &n }

func TestNextNonce(t *testing.T) {
	self := refundOf("000000000000000000000001")
	other := func(name string, state payoutv1.RefundState, n *int64) payoutv1.Refund {
		r := refundOf(name)
		r.Status.State, r.Status.Nonce, r.Status.From = state, n, wallet
		return *r
	}
	elsewhere := other("p", payoutv1.RefundSigned, nonce(40))
	elsewhere.Status.Network = payoutv1.NetworkPolygon
	cases := []struct {
		name    string
		pending uint64
		refunds []payoutv1.Refund
		want    uint64
	}{
		{"nothing recorded: the chain's pending nonce", 7, nil, 7},
		{"a signed refund not yet broadcast holds its nonce", 7, []payoutv1.Refund{other("a", payoutv1.RefundSigned, nonce(7))}, 8},
		{"a broadcast one too", 7, []payoutv1.Refund{other("a", payoutv1.RefundBroadcast, nonce(9)), other("b", payoutv1.RefundSigned, nonce(8))}, 10},
		{"confirmed ones are on chain already", 12, []payoutv1.Refund{other("a", payoutv1.RefundConfirmed, nonce(11))}, 12},
		{"the chain is ahead", 20, []payoutv1.Refund{other("a", payoutv1.RefundBroadcast, nonce(9))}, 20},
		{"pending and refused ones hold none", 3, []payoutv1.Refund{other("a", payoutv1.RefundPending, nil), other("b", payoutv1.RefundRefused, nil)}, 3},
		{"its own earlier nonce does not count", 4, []payoutv1.Refund{other("000000000000000000000001", payoutv1.RefundSigned, nonce(4))}, 4},
		{"a refund on another network has nonces of its own", 4, []payoutv1.Refund{elsewhere}, 4},
	}
	for _, tc := range cases {
		if got := NextNonce(tc.pending, tc.refunds, self, payoutv1.NetworkBase, wallet); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestSignBroadcastObserve(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	pending := payoutv1.RefundStatus{State: payoutv1.RefundPending, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
		To: "0x8ba1f109551bd432803012645ac136ddd64dba72", Amount: "25000000", From: wallet}

	failed := SignFailed(pending, errors.New("insufficient funds: the refund wallet holds 0"))
	if failed.State != payoutv1.RefundPending || failed.Nonce != nil || !strings.Contains(failed.Message, "insufficient funds") {
		t.Fatalf("after a failed signature: %+v", failed)
	}

	signed := Signed(pending, wallet, 5, &evm.Signed{Raw: []byte{1, 2}, Hash: common.HexToHash("0xab")})
	if signed.State != payoutv1.RefundSigned || *signed.Nonce != 5 || signed.SignedTx != "0x0102" || !strings.HasPrefix(signed.TxHash, "0x00") || Next(signed) != ActionWatch {
		t.Fatalf("signed %+v", signed)
	}
	if st := Broadcasted(signed, errors.New("connection refused")); st.State != payoutv1.RefundSigned || st.SignedTx != signed.SignedTx || !strings.Contains(st.Message, "sent again") {
		t.Fatalf("after a failed broadcast: %+v", st)
	}
	broadcast := Broadcasted(signed, nil)
	if broadcast.State != payoutv1.RefundBroadcast || Next(broadcast) != ActionWatch {
		t.Fatalf("broadcast %+v", broadcast)
	}

	cases := []struct {
		name    string
		from    payoutv1.RefundStatus
		receipt Receipt
		state   payoutv1.RefundState
		message string
	}{
		{"no receipt yet", broadcast, Receipt{Required: 3}, payoutv1.RefundBroadcast, "waiting"},
		{"mined, not at depth", broadcast, Receipt{Found: true, Block: 10, Confirmations: 2, Required: 3}, payoutv1.RefundBroadcast, "2 of 3"},
		{"mined while still Signed (broadcast before a crash)", signed, Receipt{Found: true, Block: 10, Confirmations: 1, Required: 3}, payoutv1.RefundBroadcast, "1 of 3"},
		{"at depth", broadcast, Receipt{Found: true, Block: 10, Confirmations: 3, Required: 3}, payoutv1.RefundConfirmed, "confirmed in block 10"},
		{"reverted, not at depth", broadcast, Receipt{Found: true, Reverted: true, Block: 10, Confirmations: 1, Required: 3}, payoutv1.RefundBroadcast, "reverted"},
		{"reverted at depth: nothing moved, sign again", broadcast, Receipt{Found: true, Reverted: true, Block: 10, Confirmations: 3, Required: 3}, payoutv1.RefundPending, "a new transaction is signed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := Observed(tc.from, tc.receipt, now)
			if st.State != tc.state || !strings.Contains(st.Message, tc.message) {
				t.Fatalf("state %s message %q, want %s and %q", st.State, st.Message, tc.state, tc.message)
			}
			switch st.State {
			case payoutv1.RefundConfirmed:
				if st.ConfirmedAt == nil || !st.ConfirmedAt.Time.Equal(now) || st.BlockNumber != 10 || st.TxHash != signed.TxHash || Next(st) != ActionNone {
					t.Fatalf("confirmed %+v", st)
				}
			case payoutv1.RefundPending:
				if st.Nonce != nil || st.SignedTx != "" || st.TxHash != "" || st.To != pending.To || st.Amount != pending.Amount || Next(st) != ActionSign {
					t.Fatalf("pending again %+v", st)
				}
			default:
				if st.SignedTx != signed.SignedTx || *st.Nonce != 5 {
					t.Fatalf("the persisted transaction changed: %+v", st)
				}
			}
		})
	}
}

func TestSignedBytesAreChecked(t *testing.T) {
	st := payoutv1.RefundStatus{SignedTx: "0xzz", TxHash: "0x01", Nonce: nonce(1)}
	if _, err := SignedBytes(st); err == nil {
		t.Fatal("bad hex accepted")
	}
	st.SignedTx = "0x0102"
	if _, err := SignedBytes(st); err == nil {
		t.Fatal("bytes that are no transaction accepted")
	}
}
