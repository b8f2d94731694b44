package metrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// statusNone is the status label of a transfer the controller has not given a status yet.
const statusNone = "none"

var statuses = set(statusNone,
	string(payoutv1.PhaseReadyToProcess), string(payoutv1.PhaseAwaitingDeposit), string(payoutv1.PhasePendingMatch),
	string(payoutv1.PhaseDepositSent), string(payoutv1.PhaseProcessing), string(payoutv1.PhaseTransferCreated),
	string(payoutv1.PhaseCompleted), string(payoutv1.PhaseFailed), string(payoutv1.PhaseRefunded))

func statusLabel(p payoutv1.TransferPhase) string {
	if p == "" {
		return statusNone
	}
	return oneOf(string(p), statuses)
}

// TransferTransition counts a status change and observes how long the transfer was in from.
// spent < 0 means unknown: the change is counted, no duration observed.
func TransferTransition(from, to payoutv1.TransferPhase, spent time.Duration) {
	f := statusLabel(from)
	transferTransitions.WithLabelValues(f, statusLabel(to)).Inc()
	if spent >= 0 {
		transferStatusDuration.WithLabelValues(f).Observe(spent.Seconds())
	}
}

// TransferStatusChanged records the change from before's status to after's, once after's is
// stored: nothing when the phase did not change. The time in the old status runs from its
// entry in before's history (the creation for a transfer without a status yet) to now.
//
// The transfer controller calls it after a successful status write:
//
//	metrics.TransferStatusChanged(before, t, r.Clock.Now())
func TransferStatusChanged(before, after *payoutv1.Transfer, now time.Time) {
	if before == nil || after == nil || before.Status.Phase == after.Status.Phase {
		return
	}
	TransferTransition(before.Status.Phase, after.Status.Phase, timeIn(before, now))
}

// timeIn is how long t has been in its current phase as of now, or -1 when its history does
// not say.
func timeIn(t *payoutv1.Transfer, now time.Time) time.Duration {
	since := t.CreationTimestamp.Time
	// a status never written (no history: a fresh v1 transfer, its phase the schema's default)
	// has been in its phase since the creation
	if p := t.Status.Phase; p != "" && len(t.Status.History) > 0 {
		since = time.Time{}
		for i := len(t.Status.History) - 1; i >= 0; i-- {
			if h := t.Status.History[i]; h.Status == p {
				since = h.At.Time
				break
			}
		}
	}
	if since.IsZero() || now.Before(since) {
		return -1
	}
	return now.Sub(since)
}

// CountTransfers makes payout_transfers count the transfers reader holds (the manager's
// cache, so a scrape costs no API call) at every scrape. Until it is called the gauge has no
// series. A later call replaces the reader.
func CountTransfers(reader client.Reader) {
	transfers.reader.Store(&readerBox{reader})
}

type readerBox struct{ client.Reader }

// transferCounter is the collector of the gauges read from the transfers in the cache at
// scrape time: payout_transfers, payout_transfers_awaiting_chain,
// payout_transfers_needing_attention and payout_transfer_oldest_in_status_seconds.
type transferCounter struct {
	desc, awaitingChain, attention, oldest *prometheus.Desc
	reader                                 atomic.Pointer[readerBox]
}

func newTransferCounter() *transferCounter {
	return &transferCounter{desc: newDesc(TransfersName), awaitingChain: newDesc(TransfersAwaitingChainName),
		attention: newDesc(TransfersAttentionName), oldest: newDesc(OldestInStatusName)}
}

// Reasons of payout_transfers_needing_attention.
const (
	AttentionPayoutLost     = "payout_lost"
	AttentionPayoutReturned = "payout_returned"
)

// scrapeTimeout bounds a scrape's wait for the cache (which blocks a list until it has synced).
const scrapeTimeout = 5 * time.Second

func (c *transferCounter) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.awaitingChain
	ch <- c.attention
	ch <- c.oldest
}

func (c *transferCounter) Collect(ch chan<- prometheus.Metric) {
	box := c.reader.Load()
	if box == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	list := &payoutv1.TransferList{}
	// The cache's objects are read, not kept: no copy needed.
	if err := box.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	counts := map[string]int{}
	for s := range statuses {
		counts[s] = 0
	}
	awaiting := map[payoutv1.Network]int{}
	attention := map[string]int{AttentionPayoutLost: 0, AttentionPayoutReturned: 0}
	oldest := map[string]time.Duration{}
	for s := range statuses {
		if s != statusNone && !transfer.EndPhase(payoutv1.TransferPhase(s)) {
			oldest[s] = 0
		}
	}
	now := time.Now()
	for i := range list.Items {
		t := &list.Items[i]
		status := statusLabel(t.Status.Phase)
		counts[status]++
		if AwaitingChain(t, now) {
			awaiting[t.Spec.SourceNetwork]++
		}
		if reason := NeedsAttention(t); reason != "" {
			attention[reason]++
		}
		if was, open := oldest[status]; open {
			oldest[status] = max(was, timeIn(t, now))
		}
	}
	for s, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), s)
	}
	for n, count := range awaiting {
		ch <- prometheus.MustNewConstMetric(c.awaitingChain, prometheus.GaugeValue, float64(count), string(n))
	}
	for r, n := range attention {
		ch <- prometheus.MustNewConstMetric(c.attention, prometheus.GaugeValue, float64(n), r)
	}
	for s, d := range oldest {
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, d.Seconds(), s)
	}
}

// NeedsAttention is the reason t counts in payout_transfers_needing_attention, "" when it does
// not: its payout was lost by the provider, or returned by the recipient's bank and its deposit
// not refunded yet (the facts behind the transfer's NeedsAttention condition).
func NeedsAttention(t *payoutv1.Transfer) string {
	p := t.Status.Payout
	switch {
	case p == nil:
		return ""
	case p.Returned != nil && t.Status.Refund == nil:
		return AttentionPayoutReturned
	case p.Returned == nil && p.LostAt != nil:
		return AttentionPayoutLost
	}
	return ""
}

// AwaitingChain reports whether t is a v1 transfer past its expiry on the clock that holds no
// deposit and has not failed: the transfer controller expires it only once its network's
// watcher has scanned past the expiry, so such a transfer waits on the chain (a transfer the
// controller is about to fail is counted for the moment that takes).
func AwaitingChain(t *payoutv1.Transfer, now time.Time) bool {
	st := &t.Status
	return t.Spec.Method == payoutv1.TransferV1 && t.Spec.ExpiresAt != nil && !now.Before(t.Spec.ExpiresAt.Time) &&
		st.Deposit == nil && st.Failure == nil && st.Refund == nil
}
