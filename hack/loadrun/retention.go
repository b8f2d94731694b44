package main

// The retention measurement (issue 17, `make bench-retention`): finished transfers are written at
// a steady rate while the archiver moves each one into PostgreSQL a retention after it ended;
// every -sample the program prints what etcd holds (object counts read through the API server,
// etcd's key count and database sizes from its /metrics), then reads archived transfers through
// the facade and prints the latency percentiles.
//
// The transfers are written finished, directly through the API server (the Transfer, its status
// as the transfer controller leaves a completed one, and the Claim of its customer_uuid the facade
// would have taken): the controllers that finish real transfers are not running, so that the
// machine's two cores go to what is measured, the archiver's effect on etcd and the lookups of
// what it archived. The archiver and the facade are the production code, over one manager's
// cache as payoutd runs them.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/apiserver"
	"github.com/stablepay/payout-operator/controllers"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/test/pgtest"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

var (
	finished        = flag.Int("finished", 100000, "retention: finished transfers written")
	finishRate      = flag.Float64("finish-rate", 150, "retention: finished transfers written per second")
	retentionFor    = flag.Duration("retention", time.Minute, "retention: how long a finished transfer stays live (payoutd's --retention)")
	archiveRate     = flag.Float64("archive-rate", 1000, "retention: the archiver's --archive-rate")
	sampleEvery     = flag.Duration("sample", 30*time.Second, "retention: time between two rows of the etcd table")
	archivedLookups = flag.Int("archived-lookups", 10000, "retention: lookups of archived transfers through the facade")
	compactEvery    = flag.Duration("etcd-compaction", time.Minute, "retention: kube-apiserver's --etcd-compaction-interval (its default is 5m)")
	checkEvery      = flag.Int("check-every", 500, "retention: every n-th transfer's live lookup is kept and compared byte for byte with its archived one")
)

// etcdCompaction sets how often kube-apiserver compacts etcd's history: until a compaction, the
// revisions of deleted objects still take space.
func etcdCompaction(env *envtest.Environment) {
	env.ControlPlane.GetAPIServer().Configure().Set("etcd-compaction-interval", compactEvery.String())
}

func runRetention(ctx context.Context, env *testenv.Env) error {
	pg, err := pgtest.StartServer()
	if err != nil {
		return err
	}
	defer pg.Remove()
	store, err := archive.Open(ctx, pg.DSN())
	if err != nil {
		return err
	}
	defer store.Close()
	url, err := startArchiving(ctx, env, store)
	if err != nil {
		return err
	}
	etcd := env.ControlPlane.Etcd.URL.String()
	name := "retention"
	if _, err := admin.CreateAccount(ctx, env.Client, name, admin.DefaultAccountSettings(name)); err != nil {
		return err
	}
	ns := payoutv1.AccountNamespace(name)
	if err := waitNamespace(ctx, env.Client, ns); err != nil {
		return err
	}
	checker, err := newKeyed(env.Client, name)
	if err != nil {
		return err
	}

	fmt.Printf("retention: %d finished transfers at %.0f/s, retention %s, archiver at most %.0f/s, kube-apiserver compacts etcd every %s\n\n",
		*finished, *finishRate, *retentionFor, *archiveRate, *compactEvery)
	fmt.Printf("%8s %9s %9s %7s %9s %10s %11s %11s\n", "elapsed", "written", "transfers", "claims", "archived", "etcd keys", "db size", "db in use")
	start := time.Now()
	var lastLive int64
	sample := func() error {
		row, err := measure(ctx, env.Client, store, etcd)
		if err != nil {
			return err
		}
		fmt.Printf("%8s %9d %9d %7d %9d %10d %11s %11s\n", time.Since(start).Round(time.Second), written.Load(),
			row.transfers, row.claims, row.archived, row.keys, mib(row.dbSize), mib(row.dbInUse))
		lastLive = row.transfers
		return nil
	}
	if err := sample(); err != nil {
		return err
	}
	done := make(chan error, 1)
	live := &liveBodies{bodies: map[string][]byte{}}
	go func() { done <- writeFinished(ctx, env.Client, ns, name, url, checker, live) }()
	tick := time.NewTicker(*sampleEvery)
	defer tick.Stop()
	var writeErr error
	writing := true
	for writing {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case writeErr = <-done:
			writing = false
		case <-tick.C:
			if err := sample(); err != nil {
				return err
			}
		}
	}
	if writeErr != nil {
		return writeErr
	}
	// the tail: everything ends a retention after the last write, then a compaction frees it
	drained := time.Now().Add(*retentionFor + *compactEvery + 2**sampleEvery)
	for time.Now().Before(drained) || lastLive > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if err := sample(); err != nil {
			return err
		}
		if time.Now().After(drained.Add(10 * *retentionFor)) {
			return fmt.Errorf("%d transfers still live long after the last one was due", lastLive)
		}
	}
	if err := defragment(etcd); err != nil {
		return err
	}
	fmt.Print("after etcd's defragmentation (an operator's step: compaction frees pages for reuse, defragmentation returns them):\n")
	if err := sample(); err != nil {
		return err
	}

	mismatches, compared, err := live.compare(url, checker, func() (*keyed, error) { return newKeyed(env.Client, name) })
	if err != nil {
		return err
	}
	fmt.Printf("\nbyte-for-byte: %d transfers' live lookups compared with their archived ones: %d differ\n", compared, mismatches)
	return archivedLookupLatency(ctx, env.Client, name, url)
}

// written counts the finished transfers written so far.
var written atomic.Int64

// startArchiving runs, over one manager's cache, the archiver (the only controller) and the
// facade reading the archive on a cache miss; it returns the facade's URL.
func startArchiving(ctx context.Context, env *testenv.Env, store *archive.Store) (string, error) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return "", err
	}
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		return "", err
	}
	cfg := archive.DefaultConfig()
	cfg.Retention, cfg.Rate, cfg.Batch, cfg.Interval = *retentionFor, *archiveRate, 500, 2*time.Second
	if err := mgr.Add(&controllers.Archiver{Client: mgr.GetClient(), Store: store, Clock: clock.RealClock{}, Config: cfg,
		TransferJSON: apiserver.TransferLookupJSON, RecipientJSON: apiserver.RecipientLookupJSON, Log: ctrl.Log.WithName("archiver")}); err != nil {
		return "", err
	}
	pub, err := newDepositKey()
	if err != nil {
		return "", err
	}
	srv, err := openFacade(mgr, depositkey.Addresses{Public: pub}, store)
	if err != nil {
		return "", err
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return "", errors.New("cache did not sync")
	}
	return srv.URL(), nil
}

// writeFinished writes *finished completed transfers at *finishRate, each with its customer_uuid
// claim; every *checkEvery-th one's live lookup is kept for the byte-for-byte comparison.
func writeFinished(ctx context.Context, c client.Client, ns, account, url string, checker *keyed, live *liveBodies) error {
	jobs := make(chan int)
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := writeOne(ctx, c, ns, account, i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				written.Add(1)
				if *checkEvery > 0 && i%*checkEvery == 0 {
					live.keep(url, checker, transferID(i))
				}
			}
		}()
	}
	interval := time.Duration(float64(time.Second) / *finishRate)
	next := time.Now()
	for i := range *finished {
		if err, _ := firstErr.Load().(error); err != nil || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Until(next))
		next = next.Add(interval)
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	live.wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	return nil
}

func transferID(i int) string { return fmt.Sprintf("%024x", 0x30000000+i) }

// writeOne writes transfer i as the transfer controller leaves a completed one, and the claim of
// its customer_uuid as the facade takes it.
func writeOne(ctx context.Context, c client.Client, ns, account string, i int) error {
	id := transferID(i)
	customer := uuid.NewString()
	t := testgen.Transfer(ns, id, func(t *payoutv1.Transfer) {
		t.Spec.Account, t.Spec.CustomerUUID = account, customer
		t.Spec.QuoteID = uuid.NewString()
	})
	if err := c.Create(ctx, t); err != nil {
		return fmt.Errorf("transfer %s: %w", id, err)
	}
	now := metav1.Now()
	t.Status = payoutv1.TransferStatus{
		Phase: payoutv1.PhaseCompleted, UpdatedAt: &now,
		Payout: &payoutv1.PayoutFacts{Reference: id, Provider: "wise", State: payoutv1.PayoutCompleted, RequestedAt: now,
			ProviderID: strconv.Itoa(1000000 + i)},
	}
	if err := c.Status().Update(ctx, t); err != nil {
		return fmt.Errorf("transfer %s status: %w", id, err)
	}
	claim := testgen.Claim(payoutv1.ClaimCustomerUUID, customer, payoutv1.ObjectRef{Namespace: ns, Name: id})
	if err := c.Create(ctx, claim); err != nil {
		return fmt.Errorf("claim of %s: %w", id, err)
	}
	return nil
}

// liveBodies are lookups of transfers taken while they were live.
type liveBodies struct {
	mu     sync.Mutex
	bodies map[string][]byte
	wg     sync.WaitGroup
}

// keep reads transfer id through the facade once its cache has it finished, in the background.
func (l *liveBodies) keep(url string, k *keyed, id string) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for deadline := time.Now().Add(*retentionFor / 2); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			st, body, err := k.raw(url + "/api/payouts/transfer/" + id)
			if err == nil && st == 200 && bytes.Contains(body, []byte(`"status":"completed"`)) {
				l.mu.Lock()
				l.bodies[id] = body
				l.mu.Unlock()
				return
			}
		}
	}()
}

// compare reads every kept transfer again, archived now, and counts the answers that differ. It
// takes a new key (from next) every 25 reads, within the lookup's limit of 30 a minute a key.
func (l *liveBodies) compare(url string, k *keyed, next func() (*keyed, error)) (mismatches, compared int, err error) {
	for id, before := range l.bodies {
		if compared > 0 && compared%25 == 0 {
			if k, err = next(); err != nil {
				return 0, 0, err
			}
			// The facade learns a new key from its cache in a moment. An unknown key is a bad
			// credential of the caller's address (spec 5.3 blocks the fifth): wait before asking,
			// and ask at most four times (each new key calls from an address of its own).
			st := 401
			for try := 0; st == 401 && try < 4; try++ {
				time.Sleep(500 * time.Millisecond)
				if st, _, err = k.raw(url + "/api/payouts/amount-limits"); err != nil {
					return 0, 0, err
				}
			}
		}
		st, after, err := k.raw(url + "/api/payouts/transfer/" + id)
		if err != nil {
			return 0, 0, err
		}
		if st != 200 || !bytes.Equal(before, after) {
			mismatches++
			fmt.Printf("  %s: %d %s\n  was %s\n", id, st, after, before)
		}
		compared++
	}
	if compared == 0 && *checkEvery > 0 {
		return 0, 0, errors.New("no live lookup was kept to compare")
	}
	return mismatches, compared, nil
}

// raw is a GET with k's key, answering the status and the body.
func (k *keyed) raw(url string) (int, []byte, error) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+k.key)
	resp, err := k.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// etcdRow is one sample of what etcd holds.
type etcdRow struct {
	transfers, claims, archived, keys int64
	dbSize, dbInUse                   float64
}

func measure(ctx context.Context, c client.Client, store *archive.Store, etcd string) (etcdRow, error) {
	var row etcdRow
	var err error
	if row.transfers, err = count(ctx, c, &payoutv1.TransferList{}); err != nil {
		return row, err
	}
	if row.claims, err = count(ctx, c, &payoutv1.ClaimList{}); err != nil {
		return row, err
	}
	counts, err := store.Count(ctx)
	if err != nil {
		return row, err
	}
	row.archived = counts.Transfers
	m, err := etcdMetrics(etcd)
	if err != nil {
		return row, err
	}
	row.keys, row.dbSize, row.dbInUse = int64(m["etcd_debugging_mvcc_keys_total"]), m["etcd_mvcc_db_total_size_in_bytes"], m["etcd_mvcc_db_total_size_in_use_in_bytes"]
	return row, nil
}

// count asks the API server how many objects of a kind it stores: one item and the count of
// the rest, read from etcd (no object is sent but the first).
func count(ctx context.Context, c client.Client, list client.ObjectList) (int64, error) {
	if err := c.List(ctx, list, client.Limit(1)); err != nil {
		return 0, err
	}
	n := int64(apimeta.LenList(list))
	if rest := list.GetRemainingItemCount(); rest != nil {
		n += *rest
	}
	return n, nil
}

// etcdMetrics reads etcd's gauges from its /metrics.
func etcdMetrics(base string) (map[string]float64, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// defragment asks etcd to defragment its database (its gRPC gateway's
// /v3/maintenance/defragment), as an operator does to give the freed pages back.
func defragment(base string) error {
	resp, err := http.Post(base+"/v3/maintenance/defragment", "application/json", strings.NewReader("{}"))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("etcd defragment: %d %s", resp.StatusCode, b)
	}
	return nil
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

// archivedLookupLatency reads archived transfers at random through the facade (*workers
// clients, a key for every 25 reads, so that no per-key limit is reached) and prints the
// percentiles of their latency. A first tenth warms the facade's key cache and the archive's
// connections up, unmeasured.
func archivedLookupLatency(ctx context.Context, c client.Client, account, url string) error {
	n := *archivedLookups
	if n <= 0 {
		return nil
	}
	warm := n / 10
	keys := make([]*keyed, (warm+n)/25+1)
	for i := range keys {
		k, err := newKeyed(c, account)
		if err != nil {
			return err
		}
		keys[i] = k
	}
	for _, k := range []*keyed{keys[0], keys[len(keys)-1]} { // every key reached the facade's cache
		for st := 0; st != 200; time.Sleep(100 * time.Millisecond) {
			st, _, _ = k.raw(url + "/api/payouts/transfer/" + transferID(0))
		}
	}
	clients := make([]*http.Client, *workers)
	for i := range clients {
		clients[i] = httpClient()
	}
	if _, _, err := randomLookups(url, keys[:warm/25+1], clients, warm); err != nil {
		return err
	}
	lat, elapsed, err := randomLookups(url, keys[warm/25+1:], clients, n)
	if err != nil {
		return err
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration { return lat[min(int(float64(n)*p), n-1)].Round(10 * time.Microsecond) }
	fmt.Printf("lookups of archived transfers through the facade: %d by %d clients in %s (%.0f/s), after %d to warm up: p50 %v, p90 %v, p99 %v, p99.9 %v, max %v (goal p99 < 10ms)\n",
		n, *workers, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), warm, pct(0.50), pct(0.90), pct(0.99), pct(0.999), lat[n-1].Round(10*time.Microsecond))
	return nil
}

// randomLookups makes n lookups of random archived transfers on the clients, 25 with each key,
// and answers their latencies and the time they took.
func randomLookups(url string, keys []*keyed, clients []*http.Client, n int) ([]time.Duration, time.Duration, error) {
	var next atomic.Int64
	lat := make([]time.Duration, n)
	var firstErr atomic.Value
	var wg sync.WaitGroup
	began := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				k := *keys[i/25]
				k.hc = clients[w]
				id := transferID(rand.IntN(*finished))
				t := time.Now()
				st, body, err := k.raw(url + "/api/payouts/transfer/" + id)
				lat[i] = time.Since(t)
				if err != nil || st != 200 || !bytes.Contains(body, []byte(id)) {
					firstErr.CompareAndSwap(nil, fmt.Errorf("lookup of archived %s: %d %v %s", id, st, err, body))
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, 0, err
	}
	return lat, time.Since(began), nil
}
