// Command loadrun measures the facade under load against baselines on the same machine, in one
// run on one control plane (issue 13):
//
//   - v1 transfer creates per second through the facade, against raw creates of a trivial object
//     (a ConfigMap) through a plain client of the same API server, and against the floor: the
//     claim and transfer creates that no facade can leave out, and two claims (the floor were a
//     transfer no larger than a claim);
//   - the cached reads (GET deposit-options, and GET transfer with -transfers stored) per second,
//     each against a bare net/http handler that answers a body of the same size.
//
// The load is spread over enough API keys that no per-key limit of spec 8.1 is hit. The facade
// runs with the controllers beside it, as payoutd runs them, in this process. Run it with `make
// loadrun` (see docs/benchmarks.md); -duration and -workers change the windows. `-phases
// retention` (`make bench-retention`) measures the archive of issue 17 instead: see
// retention.go. `-phases quotas` (`make loadrun-quotas`) measures the heap with accounts at
// their caps: see quotas.go. `-phases mcp` (`make loadrun-mcp`, in `make loadrun` too) measures
// get_transfer tool calls of the MCP tool server against REST GET transfer: see mcp.go.
// `-phases process` (`make loadrun-process`) measures the same reads of a payoutd process
// against a bare handler's process: see process.go.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/apiserver"
	"github.com/stablepay/payout-operator/controllers"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	chainconfig "github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/compliance/kyc"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/fiat/wise"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/secret"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

var (
	duration = flag.Duration("duration", 10*time.Second, "length of each measured window")
	workers  = flag.Int("workers", 16, "concurrent clients")
	stored   = flag.Int("transfers", 10000, "transfers stored for the lookup measurement")
	phases   = flag.String("phases", "creates,gets,mcp", "which measurements to run: creates, gets, mcp (mcp.go), retention (retention.go), quotas alone (quotas.go); process alone drives a payoutd process instead (process.go)")
	rounds   = flag.Int("rounds", 4, "baseline and facade windows alternate this many times, so that both see the same machine; every other round runs the facade first, so an even count balances the order")
	profile  = flag.String("cpuprofile", "", "write a CPU profile of the measured windows to this file")
	lastUsed = flag.Duration("key-last-used", 0, "the in-process facade's granularity of an API key's recorded last use (apiserver.Config.KeyLastUsedInterval; 0: payoutd's default)")
)

func main() {
	flag.Parse()
	logger = zap.New(zap.WriteTo(io.Discard))
	ctrl.SetLogger(logger)
	if *serveBare != "" {
		if err := runBare(*serveBare); err != nil {
			fmt.Fprintln(os.Stderr, "loadrun:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadrun:", err)
		os.Exit(1)
	}
}

func run() error {
	// an interrupt stops the measurement and still stops the control plane (and the archive's
	// PostgreSQL) on the way out
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if *phases == "process" {
		return runProcess(ctx)
	}
	var configure []func(*envtest.Environment)
	if strings.Contains(*phases, "retention") {
		configure = append(configure, etcdCompaction)
	}
	env, err := testenv.Start(configure...)
	if err != nil {
		return err
	}
	restCfg = env.Config
	defer profiling.Wait()
	defer func() { _ = env.Stop() }()
	if strings.Contains(*phases, "retention") {
		if err := runRetention(ctx, env); err != nil {
			return err
		}
	}
	if strings.Contains(*phases, "quotas") {
		return runQuotas(ctx, env)
	}
	if !strings.Contains(*phases, "creates") && !strings.Contains(*phases, "gets") && !strings.Contains(*phases, "mcp") {
		return nil
	}
	url, err := startService(ctx, env)
	if err != nil {
		return err
	}
	fmt.Printf("loadrun: %d workers, %s windows, GOMAXPROCS=%d\n\n", *workers, *duration, runtime.GOMAXPROCS(0))

	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		profileFile = f
	}
	if strings.Contains(*phases, "creates") {
		rawOp, err := rawCreates(ctx, env.Client)
		if err != nil {
			return err
		}
		createOp, template, err := facadeCreates(ctx, env.Client, url)
		if err != nil {
			return err
		}
		floorOp, fixtureOp, claimsOp, err := floorCreates(ctx, env.Client, template)
		if err != nil {
			return err
		}
		if err := calls.quiet(ctx); err != nil {
			return err
		}
		base, creates, err := alternate(createOp, rawOp, floorOp, fixtureOp, claimsOp)
		if err != nil {
			return err
		}
		raw, floor, fixture, claims := base[0], base[1], base[2], base[3]
		raw.print("raw creates of a ConfigMap (client, API server)")
		floor.print("raw claim + transfer creates (client, API server)")
		fixture.print("raw claim + fixture transfer creates")
		claims.print("raw claim + claim creates (client, API server)")
		creates.print("v1 creates through the facade")
		printRatio("ratio facade / ConfigMap", creates.rate/raw.rate, "goal >= 0.40")
		printRatio("ratio claim + transfer / ConfigMap", floor.rate/raw.rate, "the most any facade could reach")
		printRatio("ratio claim + fixture transfer / ConfigMap", fixture.rate/raw.rate, "the floor before 2026-11-27: a smaller transfer")
		printRatio("ratio claim + claim / ConfigMap", claims.rate/raw.rate, "were a transfer as small as a claim")
		printRatio("ratio facade / claim + transfer", creates.rate/floor.rate, "goal >= 0.85")
		fmt.Printf("    the same in each round: %s\n", creates.perRound(floor))
		fmt.Printf("API-server requests of the service per facade create (controllers included, watches aside):\n%s\n", calls.per(creates.n))
		fmt.Printf("of which the facade's, on the request path:\n%s\n", facadeCalls.per(creates.n))
	}
	if strings.Contains(*phases, "gets") {
		// the bare handler in this process too, as the facade: the process mode (process.go)
		// puts both in processes of their own
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		go func() { _ = serveBareOn(ln) }()
		defer ln.Close()
		keys, ids, err := readFixtures(ctx, env.Client, url, "load-lookups", 1)
		if err != nil {
			return err
		}
		if err := calls.quiet(ctx); err != nil {
			return err
		}
		n, err := measureReads(url, "http://"+ln.Addr().String(), keys, ids, "")
		if err != nil {
			return err
		}
		fmt.Printf("API-server requests of the service per facade GET (both reads):\n%s\n", calls.per(n))
		fmt.Printf("of which the facade's, on the request path:\n%s\n", facadeCalls.per(n))
	}
	if strings.Contains(*phases, "mcp") {
		keys, ids, err := readFixtures(ctx, env.Client, url, "load-mcp", 2)
		if err != nil {
			return err
		}
		if err := calls.quiet(ctx); err != nil {
			return err
		}
		floorURL, err := serveMCPFloor()
		if err != nil {
			return err
		}
		n, err := runMCP(keys, ids, url, floorURL)
		if err != nil {
			return err
		}
		fmt.Printf("API-server requests of the service per tool call:\n%s\n", calls.per(n))
		fmt.Printf("of which the facade's, on the request path:\n%s\n", facadeCalls.per(n))
	}
	return nil
}

// startService runs the facade and the controllers against env, with the simulated bank, and a
// base deposit watcher reported in sync; it returns the facade's URL.
func startService(ctx context.Context, env *testenv.Env) (string, error) {
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(calls.wrap)
	// the cache as payoutd configures it: managed fields stripped
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()}})
	if err != nil {
		return "", err
	}
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "loadrun")
	if err != nil {
		return "", err
	}
	bank, err := simbank.Start(simbank.Options{Addr: "127.0.0.1:0", Dir: dir, Token: "loadrun"})
	if err != nil {
		return "", err
	}
	bankCfg := wise.DefaultConfig()
	bankCfg.BaseURL, bankCfg.Token, bankCfg.ProfileID = bank.URL(), secret.New("loadrun"), 1
	opts := controllers.DefaultOptions()
	opts.ChainHeartbeatMaxAge = 24 * time.Hour
	if opts.Provider, err = wise.New(bankCfg); err != nil {
		return "", err
	}
	if err := controllers.Setup(mgr, opts); err != nil {
		return "", err
	}
	cachedReader = mgr.GetClient()
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return "", fmt.Errorf("cache did not sync")
	}
	cursor := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: "base"}, Spec: payoutv1.ChainCursorSpec{Network: payoutv1.NetworkBase}}
	if err := env.Client.Create(ctx, cursor); err != nil {
		return "", err
	}
	now := metav1.Now()
	cursor.Status = payoutv1.ChainCursorStatus{Synced: true, HeartbeatAt: &now}
	if err := env.Client.Status().Update(ctx, cursor); err != nil {
		return "", err
	}
	pub, err := newDepositKey()
	if err != nil {
		return "", err
	}
	chains, err := chainconfig.Parse([]byte("networks:\n  base:\n    rpc: [http://127.0.0.1:1]\n    tokens:\n      usdc:\n        contract: \"0x00000000000000000000000000000000000000c1\"\n"))
	if err != nil {
		return "", err
	}
	srv, err := openFacade(mgr, depositkey.Addresses{Public: pub, Config: chains}, nil)
	if err != nil {
		return "", err
	}
	// the deposit option of usdc on base turns available once its controller has seen the cursor
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		o := &payoutv1.DepositOption{}
		if mgr.GetClient().Get(ctx, client.ObjectKey{Name: "usdc-base"}, o) == nil && o.Status.Available {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("usdc on base never became available")
		}
	}
	facadeHandler = srv.Handler()
	return srv.URL(), nil
}

// newDepositKey is a fresh deposit key's public side, for the facade's v1 addresses.
func newDepositKey() (*depositkey.Public, error) {
	_, xpub, err := depositkey.Generate()
	if err != nil {
		return nil, err
	}
	return depositkey.NewPublic(xpub)
}

// openFacade starts the facade on a free loopback port over mgr's cache, reading the archive on a
// cache miss when one is given. Its requests to the API server go through a client of its own,
// so that they are counted apart from the controllers' (facadeCalls): the request path's.
func openFacade(mgr ctrl.Manager, deposits apiserver.DepositAddresses, store *archive.Store) (*apiserver.Server, error) {
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.Wrap(facadeCalls.wrap)
	opts := client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()}
	reader, err := client.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	opts.Cache = &client.CacheOptions{Reader: mgr.GetCache()}
	c, err := client.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	rates, err := pricing.NewSnapshot()
	if err != nil {
		return nil, err
	}
	srv, err := apiserver.New(apiserver.Config{
		Client: c, APIReader: reader, Informers: mgr.GetCache(), Catalog: bankaccount.Default(),
		Sanctions: sanctions.NewScreener(sanctions.Embedded), KYC: kyc.Store{Reader: mgr.GetClient()},
		WalletScreen: walletscreen.LocalList{Reader: mgr.GetClient()}, Rates: rates, Clock: clock.RealClock{},
		Log: logger.WithName("facade"), Deposits: deposits, Archive: store, KeyLastUsedInterval: *lastUsed,
	})
	if err != nil {
		return nil, err
	}
	return srv, srv.Open("127.0.0.1:0")
}

// result is a measured rate and the latencies of one window.
type result struct {
	n        int64
	rate     float64
	p50, p99 time.Duration
	cpu      string    // what one operation cost each process in CPU (cpuTimes.perOp)
	rounds   []float64 // the rate of each window, in the order of the rounds
}

// perRound is the ratio of r to base in each round, for how much the windows of a run differ.
func (r result) perRound(base result) string {
	var parts []string
	for i := range min(len(r.rounds), len(base.rounds)) {
		parts = append(parts, fmt.Sprintf("%.2f", r.rounds[i]/base.rounds[i]))
	}
	return strings.Join(parts, " ")
}

// print writes r as a line of the report, and what it cost in CPU on a line under it.
func (r result) print(label string) {
	fmt.Printf("%-52s %9.1f /s  (p50 %v, p99 %v)\n", label, r.rate, r.p50, r.p99)
	if r.cpu != "" {
		fmt.Printf("    %s\n", r.cpu)
	}
}

// printRatio writes a ratio as a line of the report, with what it is measured against.
func printRatio(label string, v float64, note string) {
	if note == "" {
		fmt.Printf("%-52s %9.2f\n", label, v)
		return
	}
	fmt.Printf("%-52s %9.2f     (%s)\n", label, v, note)
}

// apiProfile, when set, receives a CPU profile of kube-apiserver during the facade's create
// window (-apiserver-profile).
// logger is payoutd's kind of logger (zap's, production sampling), written nowhere; the facade
// takes it directly, as payoutd's does (cmd/payoutd facadeLog).
var logger logr.Logger

var apiProfile = flag.String("apiserver-profile", "", "write kube-apiserver's CPU profile of the create window to this file")

// calls counts the service's API-server requests during the facade's windows, and facadeCalls
// those of the facade alone.
var (
	calls       = &apiCalls{counts: map[string]int{}, spent: map[string]time.Duration{}}
	facadeCalls = &apiCalls{counts: map[string]int{}, spent: map[string]time.Duration{}}
)

// apiProfiled is set once the API server's profile was taken.
var apiProfiled bool

// profiling waits for the API server's profile before the control plane stops.
var profiling sync.WaitGroup

// facadeWindowHook, when set, is called as each facade window of alternate starts, with its length
// (the process mode fetches payoutd's profile there).
var facadeWindowHook func(d time.Duration)

// profileFile receives a CPU profile of the first facade window (-cpuprofile).
var profileFile *os.File

// restCfg is the control plane's configuration, for the API server's profile.
var restCfg *rest.Config

// profileAPIServer fetches a CPU profile of kube-apiserver over the next d.
func profileAPIServer(d time.Duration) {
	if *apiProfile == "" || apiProfiled {
		return
	}
	apiProfiled = true // one window's profile is enough
	profiling.Add(1)
	go func() {
		defer profiling.Done()
		rc, err := rest.RESTClientFor(&rest.Config{Host: restCfg.Host, TLSClientConfig: restCfg.TLSClientConfig,
			BearerToken: restCfg.BearerToken, APIPath: "/", ContentConfig: rest.ContentConfig{
				GroupVersion: &corev1.SchemeGroupVersion, NegotiatedSerializer: scheme.Codecs.WithoutConversion()}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "apiserver profile:", err)
			return
		}
		data, err := rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", fmt.Sprint(int(d.Seconds()))).Timeout(d + 30*time.Second).DoRaw(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, "apiserver profile:", err)
			return
		}
		_ = os.WriteFile(*apiProfile, data, 0o644)
	}()
}

// op is one request of a measurement, made by worker w.
type op func(worker int) error

// window runs op on *workers goroutines for d and returns the successes, their latencies and the
// CPU each process spent meanwhile.
func window(o op, d time.Duration) (int64, []time.Duration, cpuTimes, error) {
	var ok atomic.Int64
	var firstErr atomic.Value
	var mu sync.Mutex
	var lat []time.Duration
	cpuBefore := readCPU()
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(stop) {
				t := time.Now()
				if err := o(w); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				mine = append(mine, time.Since(t))
				ok.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	cpu := readCPU().since(cpuBefore)
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, nil, nil, err
	}
	return ok.Load(), lat, cpu, nil
}

// alternate measures baselines and the facade in alternating windows (*rounds each, of *duration
// in all per side), so that a busy machine slows all alike; the facade's windows are
// CPU-profiled with -cpuprofile. Every other round runs the facade first (baselines, facade;
// facade, baselines; ...), so that neither side always follows the other: what a window leaves
// behind (garbage to collect, queued writes, a cooler cache) falls on both sides alike. It
// returns the baselines' results in order, then the facade's.
func alternate(facade op, baselines ...op) ([]result, result, error) {
	per := *duration / time.Duration(*rounds)
	b := make([]tally, len(baselines))
	var f tally
	measureBaselines := func() error {
		for i, o := range baselines {
			n, lat, cpu, err := window(o, per)
			if err != nil {
				return err
			}
			b[i].add(n, lat, cpu, per)
		}
		return nil
	}
	measureFacade := func() error {
		if profileFile != nil {
			_ = pprof.StartCPUProfile(profileFile)
		}
		profileAPIServer(per)
		if facadeWindowHook != nil {
			facadeWindowHook(per)
		}
		calls.on.Store(true)
		facadeCalls.on.Store(true)
		n, lat, cpu, err := window(facade, per)
		calls.on.Store(false)
		facadeCalls.on.Store(false)
		if profileFile != nil {
			pprof.StopCPUProfile()
			profileFile = nil // one window's profile is enough
		}
		if err != nil {
			return err
		}
		f.add(n, lat, cpu, per)
		return nil
	}
	for r := range *rounds {
		first, second := measureBaselines, measureFacade
		if r%2 == 1 {
			first, second = second, first
		}
		if err := first(); err != nil {
			return nil, result{}, err
		}
		if err := second(); err != nil {
			return nil, result{}, err
		}
	}
	out := make([]result, len(b))
	for i := range b {
		out[i] = b[i].result()
	}
	return out, f.result(), nil
}

type tally struct {
	n     int64
	lat   []time.Duration
	cpu   cpuTimes
	d     time.Duration
	rates []float64 // each window's
}

func (t *tally) add(n int64, lat []time.Duration, cpu cpuTimes, d time.Duration) {
	t.n, t.lat, t.d = t.n+n, append(t.lat, lat...), t.d+d
	t.cpu.add(cpu)
	t.rates = append(t.rates, float64(n)/d.Seconds())
}

func (t *tally) result() result {
	sort.Slice(t.lat, func(i, j int) bool { return t.lat[i] < t.lat[j] })
	r := result{n: t.n, rate: float64(t.n) / t.d.Seconds(), cpu: t.cpu.perOp(t.n, t.d), rounds: t.rates}
	if n := len(t.lat); n > 0 {
		r.p50, r.p99 = t.lat[n/2].Round(10*time.Microsecond), t.lat[n*99/100].Round(10*time.Microsecond)
	}
	return r
}

// rawCreates creates ConfigMaps as fast as the API server takes them.
func rawCreates(ctx context.Context, c client.Client) (op, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "loadrun-raw"}}); err != nil {
		return nil, err
	}
	var n atomic.Int64
	return op(func(int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "loadrun-raw", Name: fmt.Sprintf("cm-%d", n.Add(1))},
			Data: map[string]string{"k": "v"}}
		return c.Create(ctx, cm)
	}), nil
}

// floorCreates returns what no facade can avoid for one v1 create: the customer_uuid claim and
// the transfer, the two atomic creates of rules 6 and 7 of spec 4.10, made one after the other
// through a plain client, as the facade makes them, without anything else. The transfer is a
// copy of template, a transfer the facade made, under a new id, customer_uuid and quote: the
// same object in the same account's namespace, so that the API server validates, stores and
// sends to the informers the same bytes, and the controllers see the same transfers, in the
// floor's windows as in the facade's.
//
// Beside it, two series for comparison: the floor as it was measured until 2026-11-27, with the
// test fixture's transfer (testgen.Transfer, in a namespace of its own: without the facade's
// label and deposit path, 225 bytes smaller); and two claims one after the other, the floor
// again were the transfer no larger than a claim (a few fields), for what a smaller Transfer
// could ever gain; their claims name a transfer that exists, so that none is released during
// the run.
func floorCreates(ctx context.Context, c client.Client, template *payoutv1.Transfer) (floor, fixture, claimPairs op, err error) {
	const ns = "loadrun-floor"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, nil, nil, err
	}
	holder := payoutv1.ObjectRef{Namespace: ns, Name: "f0000000000000000000000f"}
	if err := c.Create(ctx, testgen.Transfer(holder.Namespace, holder.Name)); err != nil {
		return nil, nil, nil, err
	}
	var n atomic.Int64
	claimThen := func(t *payoutv1.Transfer) error {
		if err := c.Create(ctx, testgen.Claim(payoutv1.ClaimCustomerUUID, t.Spec.CustomerUUID, payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name})); err != nil {
			return err
		}
		return c.Create(ctx, t)
	}
	floor = func(int) error {
		t := &payoutv1.Transfer{ObjectMeta: metav1.ObjectMeta{Namespace: template.Namespace, Labels: template.Labels}, Spec: template.Spec}
		t.Spec.QuoteID = uuid.NewString()
		t.Name = payoutv1.TransferNameForQuote(t.Spec.QuoteID)
		t.Spec.CustomerUUID = uuid.NewString()
		return claimThen(t)
	}
	expires := metav1.NewTime(time.Now().Add(240 * time.Hour))
	fixture = func(int) error {
		id := fmt.Sprintf("%024x", 0xf100000000+n.Add(1))
		return claimThen(testgen.Transfer(ns, id, func(t *payoutv1.Transfer) {
			t.Spec.Account, t.Spec.CustomerUUID, t.Spec.ExpiresAt = "loadrun-floor", uuid.NewString(), &expires
		}))
	}
	claimPairs = func(int) error {
		for range 2 {
			if err := c.Create(ctx, testgen.Claim(payoutv1.ClaimCustomerUUID, uuid.NewString(), holder)); err != nil {
				return err
			}
		}
		return nil
	}
	return floor, fixture, claimPairs, nil
}

// keyed is an API key with its own HTTP client and a source address of its own.
type keyed struct {
	account string
	key     string
	hc      *http.Client
}

var addrSeq atomic.Uint32

// newKeyed issues a key of account as operators do (admin.IssueKey, the path of `kubectl payout
// apikey create`): bound to the account's UID at its create, so that the key controller has no
// binding to write for it, only the key's status.
func newKeyed(c client.Client, account string) (*keyed, error) {
	full, _, err := admin.IssueKey(context.Background(), c, account)
	if err != nil {
		return nil, err
	}
	return &keyed{account: account, key: full, hc: httpClient()}, nil
}

func httpClient() *http.Client {
	n := addrSeq.Add(1)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 99, byte(n/250), byte(n%250+2))}}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}}
}

func (k *keyed) do(method, url string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+k.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := k.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out != nil {
		dec := json.NewDecoder(resp.Body)
		dec.UseNumber()
		if err := dec.Decode(out); err != nil && resp.StatusCode < 300 {
			return resp.StatusCode, err
		}
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, nil
}

// facadeCreates creates v1 transfers through the facade: accounts with a recipient each, and
// keys with their quotes prepared beforehand (a key may quote and create 20 a minute). It makes
// one before the run and returns it as the API server stored it, the floor's template.
func facadeCreates(ctx context.Context, c client.Client, url string) (op, *payoutv1.Transfer, error) {
	const perKey = 15
	keysNeeded := int(*duration/time.Second)*500/perKey + 1 // room for 500 creates a second
	jobs := make(chan createJob, keysNeeded*perKey)
	var wg sync.WaitGroup
	errs := make(chan error, keysNeeded)
	for a := 0; a < keysNeeded; a += 20 {
		name := fmt.Sprintf("load-%d", a/20)
		settings := admin.DefaultAccountSettings(name)
		// a load generator's account: its creates measure the service, not the account's caps
		settings.Quotas = payoutv1.Quotas{MaxOpenV1Transfers: 100000, MaxOpenV2Transfers: 100000, MaxActiveRecipients: 1000, MaxClaims: 1000000}
		if _, err := admin.CreateAccount(ctx, c, name, settings); err != nil {
			return nil, nil, err
		}
		first, err := newKeyed(c, name)
		if err != nil {
			return nil, nil, err
		}
		var rcp map[string]any
		for range 100 { // the key reaches the facade's cache in a moment
			st, err := first.do("POST", url+"/api/payouts/recipients", map[string]any{"currency": "EUR", "type": "iban", "accountHolderName": "Load Payee",
				"details": map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}}, &rcp)
			if err == nil && st == 201 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		rid, err := rcp["id"].(json.Number).Int64()
		if err != nil {
			return nil, nil, fmt.Errorf("recipient: %v", rcp)
		}
		for i := 0; i < 20 && a+i < keysNeeded; i++ {
			k := first
			if i > 0 {
				if k, err = newKeyed(c, name); err != nil {
					return nil, nil, err
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for q := 0; q < perKey; q++ {
					var m map[string]any
					st, err := k.do("GET", url+"/api/payouts/quote?targetCurrency=EUR&sourceAmount=25.00", nil, &m)
					if err != nil || st != 200 {
						if st == 401 {
							time.Sleep(100 * time.Millisecond)
							q--
							continue
						}
						errs <- fmt.Errorf("quote: %d %v %v", st, err, m)
						return
					}
					jobs <- createJob{k: k, quote: m["quoteId"].(string), recipient: rid}
				}
			}()
		}
	}
	wg.Wait()
	close(jobs)
	close(errs)
	if err := <-errs; err != nil {
		return nil, nil, err
	}
	create := func(int) error {
		_, err := createOne(url, jobs)
		return err
	}
	made, err := createOne(url, jobs)
	if err != nil {
		return nil, nil, err
	}
	template := &payoutv1.Transfer{}
	if err := c.Get(ctx, made, template); err != nil {
		return nil, nil, fmt.Errorf("the floor's template: %w", err)
	}
	return create, template, nil
}

// createOne creates the transfer of the next prepared quote through the facade and returns where
// it is stored.
func createOne(url string, jobs <-chan createJob) (client.ObjectKey, error) {
	j, ok := <-jobs
	if !ok {
		return client.ObjectKey{}, fmt.Errorf("ran out of prepared quotes: raise keysNeeded")
	}
	body := map[string]any{"quote_id": j.quote, "amount": json.Number("25.00"), "recipientId": j.recipient,
		"customer_uuid": uuid.NewString(), "customer_email": "load@example.com", "source_token": "usdc",
		"source_network": "base", "wallet_address": "0x8ba1f109551bD432803012645Ac136ddd64DBA72"}
	var m struct {
		Transfer struct {
			ID string `json:"id"`
		} `json:"transfer"`
	}
	st, err := j.k.do("POST", url+"/api/payouts/transfer", body, &m)
	if err != nil || st != 200 || m.Transfer.ID == "" {
		return client.ObjectKey{}, fmt.Errorf("create: %d %v %+v", st, err, m)
	}
	return client.ObjectKey{Namespace: payoutv1.AccountNamespace(j.k.account), Name: m.Transfer.ID}, nil
}

// createJob is a prepared create: a key, its quote and its account's recipient.
type createJob struct {
	k         *keyed
	quote     string
	recipient int64
}

// waitNamespace waits for an account's namespace (its controller makes it).
func waitNamespace(ctx context.Context, c client.Client, ns string) error {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s never appeared", ns)
		}
	}
}
