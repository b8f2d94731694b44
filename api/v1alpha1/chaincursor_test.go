package v1alpha1_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

func TestChainCursorScannedPast(t *testing.T) {
	expiry := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *payoutv1.ChainCursor {
		bt := metav1.NewTime(expiry.Add(d))
		return &payoutv1.ChainCursor{Status: payoutv1.ChainCursorStatus{Block: 100, BlockTime: &bt}}
	}
	for _, tc := range []struct {
		name   string
		cursor *payoutv1.ChainCursor
		want   bool
	}{
		{"a block after the time", at(time.Second), true},
		{"a block at the time: one mined then may come after it, at the same second", at(0), false},
		{"a block before the time", at(-time.Second), false},
		{"no block time (solana, or a status written before it was kept)", &payoutv1.ChainCursor{Status: payoutv1.ChainCursorStatus{Block: 100}}, false},
		{"no cursor", nil, false},
	} {
		if got := tc.cursor.ScannedPast(expiry); got != tc.want {
			t.Errorf("%s: ScannedPast = %v, want %v", tc.name, got, tc.want)
		}
	}
}
