package transfer

import (
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/test/testgen"
)

// bytesource turns fuzz input into choices; it reads zeros once exhausted.
type bytesource struct {
	b []byte
	i int
}

func (s *bytesource) next() byte {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return s.b[s.i-1]
}

func (s *bytesource) bool() bool         { return s.next()&1 == 1 }
func (s *bytesource) pick(n int) int     { return int(s.next()) % n }
func (s *bytesource) dur() time.Duration { return time.Duration(s.next()) * 15 * time.Minute }

var (
	fuzzTokens     = []payoutv1.Token{payoutv1.TokenUSDC, payoutv1.TokenUSDT}
	fuzzAmounts    = []string{"25000000", "24999999", "25000001", "0", "30000000", "1", "25e6", ""}
	fuzzStates     = []payoutv1.PayoutState{payoutv1.PayoutRequested, payoutv1.PayoutAccepted, payoutv1.PayoutCompleted, payoutv1.PayoutRejected}
	fuzzRefunds    = []payoutv1.RefundState{payoutv1.RefundPending, payoutv1.RefundSigned, payoutv1.RefundBroadcast, payoutv1.RefundConfirmed, payoutv1.RefundRefused}
	fuzzScreenings = []payoutv1.ScreeningResult{payoutv1.ScreeningCleared, payoutv1.ScreeningBlocked, payoutv1.ScreeningUnavailable}
	fuzzFailures   = []payoutv1.FailureReason{payoutv1.FailureRecipientDeleted, payoutv1.FailureExpired, payoutv1.FailureDepositShort, payoutv1.FailurePayoutRejected}
)

// fuzzTransfer builds a transfer in some reachable or unreachable state, and what was observed.
func fuzzInput(s *bytesource) Input {
	tr := v1()
	if s.bool() {
		tr = v2()
		if s.bool() {
			hashed(tr)
		}
	}
	tr.Spec.KeepRecipient = s.bool()
	if s.bool() {
		tr.Spec.Cancellation = &payoutv1.TransferCancellation{Reason: payoutv1.FailureRecipientDeleted, RequestedAt: metav1.NewTime(epoch)}
	}
	st := &tr.Status
	if s.bool() {
		st.Deposit = testgen.Deposit()
		st.Deposit.Amount = fuzzAmounts[s.pick(len(fuzzAmounts))]
		st.Deposit.Token = fuzzTokens[s.pick(2)]
		if s.bool() {
			st.Deposit.ConfirmedAt = nil
		}
	}
	if s.bool() {
		st.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: fuzzStates[s.pick(len(fuzzStates))], RequestedAt: metav1.NewTime(epoch)}
	}
	if s.bool() {
		st.Failure = &payoutv1.TransferFailure{Reason: fuzzFailures[s.pick(len(fuzzFailures))], Message: "x", At: metav1.NewTime(epoch)}
	}
	if s.bool() && OwesDeposit(tr) {
		// status.refund is recorded only on a transfer that owes its deposit (recordRefunds): a
		// refund fact on a transfer still waiting for its payout is no state the machine reaches
		st.Refund = &payoutv1.RefundFacts{TxHash: "0xfeed", ConfirmedAt: metav1.NewTime(epoch)}
	}
	if s.bool() {
		tr.Status = Decide(input(tr, at(s.dur()))).Status // a history, as the controller writes it
	}

	in := input(tr, at(s.dur()))
	in.Cursor.BlockTime = at(s.dur())
	in.MatchTimeout = s.dur()
	for range s.pick(5) {
		dep := deposit(fuzzAmounts[s.pick(len(fuzzAmounts))], fuzzTokens[s.pick(2)], int64(s.pick(5)), int64(s.pick(3)), at(s.dur()))
		if s.bool() {
			dep = from(stranger, dep)
		}
		if s.bool() {
			dep = on(payoutv1.NetworkPolygon, dep)
		}
		in.Deposits = append(in.Deposits, dep)
	}
	switch s.pick(3) {
	case 1:
		in.DepositHolder = ""
	case 2:
		in.DepositHolder = "payout-other/0123456789abcdef0123ffff"
	}
	switch s.pick(3) {
	case 1:
		in.ProviderBefore = nil
	case 2:
		in.ProviderBefore = &ProviderPayout{Found: true, State: fuzzStates[s.pick(len(fuzzStates))], ProviderID: "po_8"}
	}
	if s.bool() {
		in.ScreenSender = true
		if s.bool() {
			in.Screening = &Screening{Address: wallet, Result: fuzzScreenings[s.pick(len(fuzzScreenings))]}
		}
	}
	if s.bool() {
		var ts []chain.TokenTransfer
		for range s.pick(3) {
			to := v2Addr
			if s.bool() {
				to = stranger
			}
			from := wallet
			if s.bool() {
				from = stranger
			}
			amount, _ := new(big.Int).SetString("2"+strconv.Itoa(s.pick(7))+"000000", 10)
			ts = append(ts, chain.TokenTransfer{Token: fuzzTokens[s.pick(2)], From: from, To: to, Amount: amount, LogIndex: int64(s.pick(9))})
		}
		in.Tx = tx(s.bool(), s.bool(), int64(s.pick(5)), ts...)
	}
	if s.bool() {
		in.Provider = &ProviderPayout{Found: s.bool(), State: fuzzStates[s.pick(len(fuzzStates))], ProviderID: "po_9"}
	}
	in.Recipient.Deleted = s.bool()
	in.Recipient.DeletedAt = at(s.dur())
	in.Recipient.Inactive = in.Recipient.Deleted || s.bool()
	in.Recipient.Known = !s.bool() || in.Recipient.Inactive
	if s.bool() {
		in.Refund = &payoutv1.Refund{Status: payoutv1.RefundStatus{State: fuzzRefunds[s.pick(len(fuzzRefunds))], TxHash: "0xfeed"}}
	}
	return in
}

// FuzzDecide checks the machine's invariants on any transfer and observation:
//   - only failed → refunded leaves a final status (completed, failed and refunded stay put);
//   - no payout intent without a deposit of the right token and amount at depth;
//   - no payout intent after a cancellation, a failure or a deleted recipient;
//   - the provider's state only moves forward;
//   - mail and recipient deletion only once the transfer ended;
//   - Decide does not change its input and is deterministic; the history is bounded;
//   - Ready, decided from the facts, is True at completed and refunded only.
func FuzzDecide(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 40})
	f.Add([]byte{0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 1, 1, 0, 0})
	f.Add([]byte{1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 3, 0, 1, 1, 1, 0, 1, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzInput(&bytesource{b: data})
		before := in.Transfer.DeepCopy()
		d := Decide(in)
		if again := Decide(in); !statusEqual(&d.Status, &again.Status) || len(d.Actions) != len(again.Actions) {
			t.Fatal("Decide is not deterministic")
		}
		if !statusEqual(&in.Transfer.Status, &before.Status) {
			t.Fatal("Decide changed its input")
		}
		// a status never written that gains no fact keeps its default, its phase the schema's default
		stillDefault := StillDefault(before, &d.Status)
		was, now := Phase(before), d.Status.Phase
		if stillDefault {
			now = payoutv1.DefaultPhase
		}
		if now != Phase(withStatus(before, &d.Status)) {
			t.Fatalf("stored phase %s is not the phase of the facts (stillDefault: %v)", now, stillDefault)
		}
		if stillDefault && (len(d.Events) > 0 || len(d.Actions) > 0) {
			t.Fatalf("a transfer still at its default status has events %+v or actions %+v", d.Events, d.Actions)
		}
		switch was {
		case payoutv1.PhaseCompleted, payoutv1.PhaseRefunded:
			if now != was {
				t.Fatalf("%s became %s", was, now)
			}
		case payoutv1.PhaseFailed:
			if now != payoutv1.PhaseFailed && now != payoutv1.PhaseRefunded {
				t.Fatalf("failed became %s", now)
			}
		}
		if now == payoutv1.PhaseRefunded && was != payoutv1.PhaseFailed && was != payoutv1.PhaseRefunded {
			t.Fatalf("refunded from %s", was)
		}
		adopted := in.ProviderBefore != nil && in.ProviderBefore.Found // the provider's payout, recorded as a fact
		if before.Status.Payout == nil && d.Status.Payout != nil && !adopted {
			dep := d.Status.Deposit
			switch {
			case dep == nil || dep.ConfirmedAt == nil:
				t.Fatal("payout intent without a deposit at depth")
			case dep.Token != before.Spec.SourceToken || baseUnits(dep.Amount).LessThan(expectedUnits(before)):
				t.Fatalf("payout intent for a wrong deposit: %s %s", dep.Amount, dep.Token)
			case before.Spec.WalletAddress != "" && !chain.SameSender(dep.From, before.Spec.WalletAddress):
				t.Fatalf("payout intent for a deposit from %s, not the transfer's wallet", dep.From)
			case in.ScreenSender && (d.Status.SenderScreening == nil || d.Status.SenderScreening.Result != payoutv1.ScreeningCleared):
				t.Fatalf("payout intent for a payer not cleared: %+v", d.Status.SenderScreening)
			case before.Spec.Method == payoutv1.TransferV1 && !SortDeposits(before, in.Deposits).Complete && before.Status.Deposit == nil:
				t.Fatal("payout intent before the wallet's deposits reached the amount")
			case before.Spec.Cancellation != nil:
				t.Fatal("payout intent after a cancellation")
			case before.Status.Failure != nil || d.Status.Failure != nil && d.Status.Failure.Reason != payoutv1.FailurePayoutRejected:
				t.Fatal("payout intent on a failed transfer")
			case in.Recipient.Deleted:
				t.Fatal("payout intent for a deleted recipient")
			}
		}
		if p0, p1 := before.Status.Payout, d.Status.Payout; p0 != nil && (p1 == nil || rank(p1.State) < rank(p0.State)) {
			t.Fatalf("payout went back from %s to %+v", p0.State, p1)
		}
		ended := d.Status.Failure != nil || d.Status.Payout != nil && d.Status.Payout.State == payoutv1.PayoutCompleted
		for _, a := range d.Actions {
			if a.Kind != ActReleaseHash && !ended {
				t.Fatalf("action %+v before the end", a)
			}
		}
		// a transfer whose deposit was seen fails (but by the provider's rejection) only once the
		// provider, asked by reference, holds no payout of it
		if f := d.Status.Failure; f != nil && before.Status.Failure == nil && f.Reason != payoutv1.FailurePayoutRejected && d.Status.Deposit != nil &&
			(in.ProviderBefore == nil || in.ProviderBefore.Found) {
			t.Fatalf("failed %s with its deposit seen, the provider's answer %+v", f.Reason, in.ProviderBefore)
		}
		// every deposit is credited, stray, or (v1, open, from the wallet) still adding up
		if before.Spec.Method == payoutv1.TransferV1 {
			after := withStatus(before, &d.Status)
			l := SortDeposits(after, in.Deposits)
			total, accounted := decimal.Zero, l.CreditedUnits
			seen := map[payoutv1.DepositRef]bool{}
			for i, dep := range in.Deposits {
				if ref := refOf(&in.Deposits[i]); !seen[ref] && baseUnits(dep.Spec.Amount).IsPositive() {
					seen[ref] = true
					total = total.Add(baseUnits(dep.Spec.Amount))
				}
			}
			for _, s := range l.Strays {
				accounted = accounted.Add(s.Units)
			}
			if !accounted.Equal(total) {
				t.Fatalf("deposits of %s units, %s accounted for (credited %s, strays %+v)", total, accounted, l.CreditedUnits, l.Strays)
			}
		}
		if n := len(d.Status.History); !stillDefault && (n == 0 || n > payoutv1.MaxHistory || d.Status.History[n-1].Status != now) {
			t.Fatalf("history %+v for phase %s", d.Status.History, now)
		}
		if ready := d.Ready.Status == metav1.ConditionTrue; ready != (now == payoutv1.PhaseCompleted || now == payoutv1.PhaseRefunded) {
			t.Fatalf("Ready %s at phase %s", d.Ready.Status, now)
		}
	})
}
