package tenancy

import (
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

const ns = "payout-acme"

func id(n int) string { return "ac" + strings.Repeat("0", 20) + strconv.Itoa(10+n) }

func failedWithDeposit(t *payoutv1.Transfer) {
	testgen.Failed(payoutv1.FailureDepositShort, "short")(t)
	t.Status.Deposit = testgen.Deposit()
}

func refundOf(transfer, name string, state payoutv1.RefundState, deposit *payoutv1.DepositRef) payoutv1.Refund {
	return payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: payoutv1.RefundSpec{Transfer: transfer, Deposit: deposit},
		Status: payoutv1.RefundStatus{State: state, TxHash: "0xfe"}}
}

func strayOf(transfer, tx string) payoutv1.Deposit {
	return payoutv1.Deposit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: payoutv1.DepositName(payoutv1.NetworkBase, tx, 0)},
		Spec: payoutv1.DepositSpec{Transfer: transfer, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, From: "0x1111111111111111111111111111111111111111",
			Amount: "5", TxHash: tx, BlockNumber: 9}}
}

// TestHolds: what keeps a deleted account's namespace, one case at a time.
func TestHolds(t *testing.T) {
	completed := func(t *payoutv1.Transfer) {
		t.Status.Deposit = testgen.Deposit()
		t.Status.Payout = &payoutv1.PayoutFacts{State: payoutv1.PayoutCompleted}
	}
	processing := func(t *payoutv1.Transfer) { t.Status.Deposit = testgen.Deposit() }
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	returnable := func(ends time.Time) func(*payoutv1.Transfer) {
		return func(t *payoutv1.Transfer) {
			completed(t)
			t.Status.Payout.ReturnWindowEndsAt = &metav1.Time{Time: ends}
		}
	}
	hashed := func(t *payoutv1.Transfer) { t.Spec.TxHash = "0x" + strings.Repeat("ab", 32) }
	refunded := func(t *payoutv1.Transfer) {
		failedWithDeposit(t)
		t.Status.Refund = &payoutv1.RefundFacts{TxHash: "0xfe"}
	}
	cases := []struct {
		name string
		c    Contents
		want string // the one hold's message, "" for none
	}{
		{"nothing", Contents{}, ""},
		{"a completed transfer", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), completed)}}, ""},
		{"a refunded transfer", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), refunded)},
			Refunds: []payoutv1.Refund{refundOf(id(1), id(1), payoutv1.RefundConfirmed, nil)}}, ""},
		{"a failed transfer's deposit", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), failedWithDeposit)}},
			"transfer " + id(1) + " owes its senders money"},
		{"its refund on its way", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), failedWithDeposit)},
			Refunds: []payoutv1.Refund{refundOf(id(1), id(1), payoutv1.RefundBroadcast, nil)}}, "a refund of transfer " + id(1) + " is on its way"},
		{"its refund refused", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), failedWithDeposit)},
			Refunds: []payoutv1.Refund{refundOf(id(1), id(1), payoutv1.RefundRefused, nil)}}, "owes its senders money"},
		{"a completed payout within its return window", Contents{Now: now, Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), returnable(now.Add(time.Hour)))}},
			"the payout of transfer " + id(1) + " may still be returned by the recipient's bank until 2026-11-25 13:00:00 UTC"},
		{"a completed payout past its return window", Contents{Now: now, Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), returnable(now.Add(-time.Hour)))}}, ""},
		{"a stray of a completed transfer", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), completed)},
			Deposits: []payoutv1.Deposit{strayOf(id(1), "0x5a")}}, "transfer " + id(1) + " owes its senders money"},
		{"a payout under way", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), processing)}},
			"transfer " + id(1) + " is processing: its deposit arrived"},
		{"an open v1 transfer", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1))}}, "is open until it expires at 2126-"},
		{"a v2 transfer with a hash", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), testgen.V2(), hashed)}},
			"waits for its transaction 0xabab"},
		{"a v2 transfer without a hash", Contents{Transfers: []payoutv1.Transfer{*testgen.Transfer(ns, id(1), testgen.V2())}}, ""},
		{"a refund of a transfer that is gone", Contents{Refunds: []payoutv1.Refund{refundOf(id(2), id(2), payoutv1.RefundSigned, nil)}},
			"refund " + id(2) + " of transfer " + id(2) + " is on its way"},
		{"a confirmed refund of a transfer that is gone", Contents{Refunds: []payoutv1.Refund{refundOf(id(2), id(2), payoutv1.RefundConfirmed, nil)}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			holds := Holds(tc.c)
			switch {
			case tc.want == "" && len(holds) != 0:
				t.Fatalf("holds %+v", holds)
			case tc.want != "" && (len(holds) != 1 || !strings.Contains(holds[0].Why, tc.want)):
				t.Fatalf("holds %+v, want one saying %q", holds, tc.want)
			}
		})
	}
}

func TestHoldsMessageNamesTheFirstFive(t *testing.T) {
	var c Contents
	for i := range 7 {
		c.Transfers = append(c.Transfers, *testgen.Transfer(ns, id(i), failedWithDeposit))
	}
	msg := HoldsMessage(Holds(c))
	if !strings.Contains(msg, id(4)) || strings.Contains(msg, id(5)) || !strings.HasSuffix(msg, "; and 2 more") {
		t.Fatalf("%s", msg)
	}
}
