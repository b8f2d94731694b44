package metrics_test

import (
	"context"
	"errors"
	"math/big"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/scheme"
	"github.com/stablepay/payout-operator/test/metricstest"
	"github.com/stablepay/payout-operator/test/testgen"
)

// TestCatalogIsRegistered: every metric of the catalog is on controller-runtime's registry
// with its documented type and labels, and the registry holds no payout_ metric the catalog
// does not list.
func TestCatalogIsRegistered(t *testing.T) {
	described := map[string]string{}
	// Gathering lists only metrics with series: give each one.
	metrics.WatchRatesAge(func() (time.Duration, bool) { return time.Minute, true })
	metrics.WatchBusiestClientShare(func() float64 { return 0.5 })
	metrics.WatchSanctionsAge(func() (time.Duration, bool) { return time.Hour, true })
	expired := metav1.NewTime(time.Now().Add(-time.Hour))
	waiting := testgen.Transfer("payout-acme", "0123456789abcdef01234567", func(t *payoutv1.Transfer) { t.Spec.ExpiresAt = &expired })
	metrics.CountTransfers(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(waiting).Build())
	metrics.FacadeRequest("x", "GET", 200, time.Millisecond)
	metrics.RateLimited("x")
	metrics.ProviderCall(metrics.OpFind, nil, time.Millisecond)
	metrics.ChainHead(payoutv1.NetworkBase, 10, 8)
	metrics.DepositDetected(payoutv1.NetworkBase, time.Now(), time.Now())
	metrics.ChainGap(payoutv1.NetworkBase, 0)
	metrics.ChainCrossCheck(payoutv1.NetworkBase, metrics.CrossCheckAgreed)
	metrics.TransferTransition("", payoutv1.PhaseReadyToProcess, time.Second)
	metrics.LedgerChecked(nil, time.Now())
	metrics.Treasury(payoutv1.NetworkBase, payoutv1.TokenUSDC, big.NewInt(1), big.NewInt(2), 3)
	s := metricstest.MustGather(t)
	for _, m := range metrics.Catalog {
		f := s[m.Name]
		if f == nil {
			t.Errorf("%s is in the catalog but not registered", m.Name)
			continue
		}
		described[m.Name] = f.GetType().String()
		if got := strings.ToLower(f.GetType().String()); got != string(m.Type) {
			t.Errorf("%s: type %s, catalog says %s", m.Name, got, m.Type)
		}
		if f.GetHelp() != m.Help {
			t.Errorf("%s: help %q, catalog says %q", m.Name, f.GetHelp(), m.Help)
		}
		for _, series := range f.Metric {
			var names []string
			for _, l := range series.Label {
				names = append(names, l.GetName())
			}
			if strings.Join(names, ",") != strings.Join(sorted(m.Labels), ",") {
				t.Errorf("%s: labels %v, catalog says %v", m.Name, names, m.Labels)
			}
		}
	}
	for name := range s {
		if strings.HasPrefix(name, "payout_") && described[name] == "" {
			t.Errorf("%s is registered but not in the catalog", name)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// moved is how far the series name{labels} moved from before to after.
func moved(before, after metricstest.Samples, name string, labels ...string) float64 {
	return after.Sum(name, labels...) - before.Sum(name, labels...)
}

func TestTransferStatusChanged(t *testing.T) {
	created := testgen.Epoch.Time
	before := testgen.Transfer("payout-acme", "0123456789abcdef01234567", func(tr *payoutv1.Transfer) {
		tr.CreationTimestamp = metav1.NewTime(created)
		tr.Status.Phase = payoutv1.PhaseProcessing
		tr.Status.History = []payoutv1.StatusChange{
			{Status: payoutv1.PhaseReadyToProcess, At: metav1.NewTime(created)},
			{Status: payoutv1.PhaseProcessing, At: metav1.NewTime(created.Add(time.Minute))},
		}
	})
	after := before.DeepCopy()
	after.Status.Phase = payoutv1.PhaseCompleted

	s0 := metricstest.MustGather(t)
	metrics.TransferStatusChanged(before, after, created.Add(4*time.Minute))
	metrics.TransferStatusChanged(after, after, created.Add(5*time.Minute)) // no change: nothing
	s1 := metricstest.MustGather(t)

	if d := moved(s0, s1, metrics.TransferTransitionsName, "from", "processing", "to", "completed"); d != 1 {
		t.Errorf("transitions processing->completed moved by %v, want 1", d)
	}
	if d := moved(s0, s1, metrics.TransferStatusDurationName+"_count", "status", "processing"); d != 1 {
		t.Errorf("processing durations observed %v, want 1", d)
	}
	// three minutes in processing: from its history entry, not from the creation
	if d := moved(s0, s1, metrics.TransferStatusDurationName+"_sum", "status", "processing"); d != 180 {
		t.Errorf("time in processing %vs, want 180", d)
	}

	// the time in a status without a history line runs from the creation: before any status
	// ("none"), and in a fresh v1 transfer's unwritten one, its phase the schema's default
	for _, c := range []struct {
		from, to payoutv1.TransferPhase
		label    string
		after    time.Duration
	}{
		{"", payoutv1.PhaseReadyToProcess, "none", 2 * time.Second},
		{payoutv1.DefaultPhase, payoutv1.PhaseProcessing, "ready_to_process", 90 * time.Second},
	} {
		was := before.DeepCopy()
		was.Status = payoutv1.TransferStatus{Phase: c.from}
		now := was.DeepCopy()
		now.Status.Phase = c.to
		s := metricstest.MustGather(t)
		metrics.TransferStatusChanged(was, now, created.Add(c.after))
		if d := moved(s, metricstest.MustGather(t), metrics.TransferStatusDurationName+"_sum", "status", c.label); d != c.after.Seconds() {
			t.Errorf("time in %q before %s: %vs, want %v", c.label, c.to, d, c.after.Seconds())
		}
	}
}

func TestLabelsStayBounded(t *testing.T) {
	metrics.TransferTransition("bogus", "also-bogus", -1)
	metrics.ChainHead("mars", 5, 1)
	metrics.ProviderCall("delete-everything", errors.New("boom"), time.Second)
	metrics.FacadeRequest("/api/payouts/transfer/0123456789abcdef01234567", "BREW", 418, time.Millisecond)
	metrics.RateLimited("whatever")
	metrics.AuthFailure("because")
	metrics.ChainCrossCheck("mars", "maybe")
	metrics.Treasury("mars", "doge", big.NewInt(1), big.NewInt(1), 1)
	s := metricstest.MustGather(t)
	for name, want := range map[string]string{
		metrics.ChainCrossChecksName:    "network=other,result=other",
		metrics.TransferTransitionsName: "from=other,to=other",
		metrics.ChainHeadBlockName:      "network=other",
		metrics.ProviderRequestsName:    "operation=other,outcome=transient",
		metrics.FacadeRequestsName:      "code=418,method=OTHER,route=other",
		metrics.FacadeRateLimitedName:   "limit=other",
		metrics.FacadeAuthFailuresName:  "reason=other",
		metrics.TreasuryBalanceName:     "network=other,token=other",
		metrics.SweeperGasBatchesName:   "network=other",
	} {
		if !contains(s.Series(name), want) {
			t.Errorf("%s: no series %s among %v", name, want, s.Series(name))
		}
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// fakeProvider is a test double of a payout provider: it answers from fixed values.
type fakeProvider struct{ err error }

func (fakeProvider) Name() string                { return "fake" }
func (fakeProvider) ReturnWindow() time.Duration { return time.Hour }
func (p fakeProvider) Find(context.Context, string, time.Time) (*fiat.Payout, error) {
	return nil, p.err
}
func (p fakeProvider) Create(context.Context, fiat.PayoutRequest) (*fiat.Payout, error) {
	return &fiat.Payout{}, p.err
}
func (p fakeProvider) Get(context.Context, string) (*fiat.Payout, error) { return nil, p.err }

func TestInstrumentProvider(t *testing.T) {
	ctx := context.Background()
	s0 := metricstest.MustGather(t)
	ok := metrics.InstrumentProvider(fakeProvider{})
	if ok.Name() != "fake" {
		t.Errorf("Name = %q", ok.Name())
	}
	_, _ = ok.Find(ctx, "ref", time.Time{})
	_, _ = ok.Create(ctx, fiat.PayoutRequest{})
	refused := metrics.InstrumentProvider(fakeProvider{err: fiat.Errorf(fiat.Permanent, "no")})
	if _, err := refused.Create(ctx, fiat.PayoutRequest{}); !fiat.IsPermanent(err) {
		t.Errorf("the error must pass through, got %v", err)
	}
	_, _ = metrics.InstrumentProvider(fakeProvider{err: errors.New("timeout")}).Get(ctx, "po_1")
	s1 := metricstest.MustGather(t)
	for _, c := range []struct{ op, outcome string }{
		{"find", "success"}, {"create", "success"}, {"create", "permanent"}, {"get", "transient"},
	} {
		if d := moved(s0, s1, metrics.ProviderRequestsName, "operation", c.op, "outcome", c.outcome); d != 1 {
			t.Errorf("%s/%s moved by %v, want 1", c.op, c.outcome, d)
		}
	}
	if d := moved(s0, s1, metrics.ProviderDurationName+"_count", "operation", "create"); d != 2 {
		t.Errorf("create latencies observed %v, want 2", d)
	}
}

func TestChain(t *testing.T) {
	s0 := metricstest.MustGather(t)
	metrics.ChainHead(payoutv1.NetworkPolygon, 120, 108)
	mined := time.Unix(1_800_000_000, 0)
	metrics.DepositDetected(payoutv1.NetworkPolygon, mined, mined.Add(27*time.Second))
	s1 := metricstest.MustGather(t)
	for name, want := range map[string]float64{
		metrics.ChainHeadBlockName: 120, metrics.ChainScannedBlockName: 108, metrics.ChainHeadLagName: 12,
		metrics.ChainDetectionLagName: 27,
	} {
		if got := s1.Sum(name, "network", "polygon"); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if d := moved(s0, s1, metrics.ChainDepositsName, "network", "polygon"); d != 1 {
		t.Errorf("deposits moved by %v", d)
	}

	// a gap counts what is left of it, never below 0
	for _, c := range []struct{ remaining, want int64 }{{1500, 1500}, {12, 12}, {-3, 0}} {
		metrics.ChainGap(payoutv1.NetworkPolygon, c.remaining)
		if got := metricstest.MustGather(t).Sum(metrics.ChainGapName, "network", "polygon"); got != float64(c.want) {
			t.Errorf("gap of %d blocks left reads %v", c.remaining, got)
		}
	}
	metrics.ChainCrossCheck(payoutv1.NetworkPolygon, metrics.CrossCheckDisagreed)
	metrics.ChainCrossCheck(payoutv1.NetworkPolygon, metrics.CrossCheckAgreed)
	metrics.ChainCrossCheck(payoutv1.NetworkPolygon, metrics.CrossCheckAgreed)
	s2 := metricstest.MustGather(t)
	for result, want := range map[string]float64{metrics.CrossCheckAgreed: 2, metrics.CrossCheckDisagreed: 1, metrics.CrossCheckUnchecked: 0} {
		if d := moved(s1, s2, metrics.ChainCrossChecksName, "network", "polygon", "result", result); d != want {
			t.Errorf("cross-checks %s moved by %v, want %v", result, d, want)
		}
	}
}

func TestCountTransfers(t *testing.T) {
	objs := []payoutv1.Transfer{
		*testgen.Transfer("payout-a", "000000000000000000000001", func(tr *payoutv1.Transfer) { tr.Status.Phase = payoutv1.PhaseCompleted }),
		*testgen.Transfer("payout-a", "000000000000000000000002", func(tr *payoutv1.Transfer) { tr.Status.Phase = payoutv1.PhaseCompleted }),
		*testgen.Transfer("payout-b", "000000000000000000000003"),
	}
	b := fake.NewClientBuilder().WithScheme(scheme.New())
	for i := range objs {
		b = b.WithObjects(&objs[i])
	}
	metrics.CountTransfers(b.Build())
	s := metricstest.MustGather(t)
	for status, want := range map[string]float64{"completed": 2, "none": 1, "failed": 0} {
		if got := s.Sum(metrics.TransfersName, "status", status); got != want {
			t.Errorf("transfers{status=%s} = %v, want %v", status, got, want)
		}
	}
}

func TestRatesAge(t *testing.T) {
	metrics.WatchRatesAge(func() (time.Duration, bool) { return 0, false })
	if got := metricstest.MustGather(t).Sum(metrics.RatesAgeName); got != -1 {
		t.Errorf("before the first poll: %v, want -1", got)
	}
	metrics.WatchRatesAge(func() (time.Duration, bool) { return 90 * time.Second, true })
	if got := metricstest.MustGather(t).Sum(metrics.RatesAgeName); got != 90 {
		t.Errorf("rates age %v, want 90", got)
	}
}

// The registry must be controller-runtime's: the manager serves that one.
var _ prometheus.Gatherer = ctrlmetrics.Registry

// TestAwaitingChain: a v1 transfer past its expiry on the clock, without its deposit and not
// failed, is counted as waiting for its network's watcher; no other is.
func TestAwaitingChain(t *testing.T) {
	now := time.Now()
	expired := func(t *payoutv1.Transfer) { e := metav1.NewTime(now.Add(-time.Minute)); t.Spec.ExpiresAt = &e }
	cases := []struct {
		name string
		mods []func(*payoutv1.Transfer)
		want bool
	}{
		{"expired on the clock, no deposit", []func(*payoutv1.Transfer){expired}, true},
		{"not expired", nil, false},
		{"expired with its deposit", []func(*payoutv1.Transfer){expired, func(t *payoutv1.Transfer) { t.Status.Deposit = testgen.Deposit() }}, false},
		{"expired and failed", []func(*payoutv1.Transfer){expired, testgen.Failed(payoutv1.FailureExpired, "no deposit")}, false},
		{"v2", []func(*payoutv1.Transfer){expired, testgen.V2()}, false},
	}
	for _, c := range cases {
		if got := metrics.AwaitingChain(testgen.Transfer("payout-acme", "0123456789abcdef01234567", c.mods...), now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestStuckAndAttention: the age of the longest-waiting transfer in each status that is not an
// end is a gauge, so an alert fires for a transfer that never leaves its status (the histogram
// observes only leaving one); payouts the provider lost or the recipient's bank returned are
// counted until a person settles them.
func TestStuckAndAttention(t *testing.T) {
	now := time.Now()
	in := func(id string, phase payoutv1.TransferPhase, since time.Duration, mods ...func(*payoutv1.Transfer)) payoutv1.Transfer {
		return *testgen.Transfer("payout-a", id, append([]func(*payoutv1.Transfer){func(tr *payoutv1.Transfer) {
			tr.CreationTimestamp = metav1.NewTime(now.Add(-48 * time.Hour))
			tr.Status.Phase = phase
			tr.Status.History = []payoutv1.StatusChange{
				{Status: payoutv1.PhaseReadyToProcess, At: tr.CreationTimestamp},
				{Status: phase, At: metav1.NewTime(now.Add(-since))},
			}
		}}, mods...)...)
	}
	at := metav1.NewTime(now.Add(-time.Hour))
	payout := func(mod func(*payoutv1.PayoutFacts)) func(*payoutv1.Transfer) {
		return func(tr *payoutv1.Transfer) {
			tr.Status.Payout = &payoutv1.PayoutFacts{Reference: tr.Name, State: payoutv1.PayoutAccepted}
			mod(tr.Status.Payout)
		}
	}
	returned := func(p *payoutv1.PayoutFacts) {
		p.State, p.Returned = payoutv1.PayoutCompleted, &payoutv1.PayoutReturn{At: at, Message: "account closed"}
	}
	objs := []payoutv1.Transfer{
		in("000000000000000000000001", payoutv1.PhaseTransferCreated, 3*time.Hour),
		in("000000000000000000000002", payoutv1.PhaseTransferCreated, 10*time.Minute, payout(func(p *payoutv1.PayoutFacts) { p.LostAt = &at })),
		in("000000000000000000000003", payoutv1.PhaseProcessing, 20*time.Minute),
		in("000000000000000000000004", payoutv1.PhaseCompleted, 30*24*time.Hour, payout(returned)),
		in("000000000000000000000005", payoutv1.PhaseCompleted, 30*24*time.Hour, payout(returned), func(tr *payoutv1.Transfer) {
			tr.Status.Refund = &payoutv1.RefundFacts{TxHash: "0xfeed"}
		}),
	}
	b := fake.NewClientBuilder().WithScheme(scheme.New())
	for i := range objs {
		b = b.WithObjects(&objs[i])
	}
	metrics.CountTransfers(b.Build())
	s := metricstest.MustGather(t)
	for _, c := range []struct {
		status string
		want   time.Duration
	}{
		{"transfer_created", 3 * time.Hour}, {"processing", 20 * time.Minute}, {"ready_to_process", 0}, {"pending_match", 0},
	} {
		got := s.Sum(metrics.OldestInStatusName, "status", c.status)
		if got < c.want.Seconds() || got > c.want.Seconds()+60 {
			t.Errorf("oldest in %s: %vs, want %vs", c.status, got, c.want.Seconds())
		}
	}
	if series := s.Series(metrics.OldestInStatusName); len(series) != 6 {
		t.Errorf("one series per status that is not an end: %v", series)
	}
	for reason, want := range map[string]float64{metrics.AttentionPayoutLost: 1, metrics.AttentionPayoutReturned: 1} {
		if got := s.Sum(metrics.TransfersAttentionName, "reason", reason); got != want {
			t.Errorf("needing attention{reason=%s} = %v, want %v", reason, got, want)
		}
	}
}

func TestSanctionsAge(t *testing.T) {
	metrics.WatchSanctionsAge(func() (time.Duration, bool) { return 0, false })
	if got := metricstest.MustGather(t).Sum(metrics.SanctionsAgeName); got != -1 {
		t.Errorf("sanctions age %v without a dated list, want -1", got)
	}
	metrics.WatchSanctionsAge(func() (time.Duration, bool) { return 3 * 24 * time.Hour, true })
	if got := metricstest.MustGather(t).Sum(metrics.SanctionsAgeName); got != 3*86400 {
		t.Errorf("sanctions age %v, want 259200", got)
	}
}

// TestLedgerChecked: a check sets each invariant's failures, a later one that finds none clears
// them, and a name outside the known invariants cannot add a series.
func TestLedgerChecked(t *testing.T) {
	at := time.Unix(1_790_000_000, 0)
	metrics.LedgerChecked(map[string]int{"ChainAgrees": 2, "PaidAsQuoted": 1, "made-up": 1}, at)
	s := metricstest.MustGather(t)
	if got := s.Sum(metrics.LedgerFailuresName, "invariant", "ChainAgrees"); got != 2 {
		t.Errorf("ChainAgrees failures %v, want 2", got)
	}
	if got := s.Sum(metrics.LedgerFailuresName, "invariant", "other"); got != 1 {
		t.Errorf("failures of an unknown invariant %v under other, want 1", got)
	}
	if got := len(s.Series(metrics.LedgerFailuresName)); got != len(metrics.LedgerInvariants)+1 {
		t.Errorf("%d series, want one per invariant and other", got)
	}
	if got := s.Sum(metrics.LedgerCheckedName); got != 1_790_000_000 {
		t.Errorf("checked at %v", got)
	}
	metrics.LedgerChecked(nil, at.Add(time.Minute))
	if got := metricstest.MustGather(t).Sum(metrics.LedgerFailuresName); got != 0 {
		t.Errorf("failures %v after a check that found none, want 0", got)
	}
}
