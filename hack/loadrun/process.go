package main

// The process mode (`-phases process`, `make loadrun-process`): the cached reads of what a user
// runs, payoutd as its own process with its controllers, informers and chain watchers beside it
// (as `make run` starts it), against a bare net/http handler that is a process of its own too, so
// that both sides pay the same loopback and process costs. The in-process phases (main.go) cannot
// show those costs: their facade shares the load generator's process.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/freeport"
	"github.com/stablepay/payout-operator/internal/scheme"
	"github.com/stablepay/payout-operator/test/testgen"
)

var (
	envFile   = flag.String("env", "", "process mode: the .dev/env of a running `make run` to drive; empty starts an instance of its own (bin/payout-dev, a temporary DEV_DIR)")
	pprofURL  = flag.String("pprof-url", "", "process mode with -env: payoutd's pprof base URL (it was started with --pprof-address), for -cpuprofile")
	readRate  = flag.Int("read-rate", 40000, "the most facade reads a second expected: sizes the pool of keys, so that none passes its budget (a 429 stops the run)")
	serveBare = flag.String("serve-bare", "", "internal: serve the bare handler on this address and print it (the process mode's baseline process)")
	bareMode  = flag.String("bare", "same", "what the bare handler is sent and answers: same (the facade's request headers, and its answer replayed: status, headers and body) or body (no request headers; a body of the answer's size with Content-Type only, the floor before 2026-11-26)")
)

// runProcess measures the cached reads of a separately running payoutd against the bare
// handler's process: GET deposit-options and GET transfer, alternating windows as main.go's.
func runProcess(ctx context.Context) error {
	vars, pprofBase, stop, err := instance(ctx)
	if err != nil {
		return err
	}
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", vars["KUBECONFIG"])
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	url := vars["PAYOUT_BASE_URL"]
	keys, ids, err := readFixtures(ctx, c, url, fmt.Sprintf("load-reads-%d", time.Now().Unix()), 1)
	if err != nil {
		return err
	}
	if err := payoutdIdle(ctx, pprofBase); err != nil {
		return err
	}
	bareURL, stopBare, err := bareProcess()
	if err != nil {
		return err
	}
	defer stopBare()
	facadeName = "payoutd"
	fmt.Printf("loadrun, process mode: payoutd at %s, bare handler in its own process, %d workers, %s windows\n\n", url, *workers, *duration)
	_, err = measureReads(url, bareURL, keys, ids, pprofBase)
	return err
}

// payoutdIdle waits until the payoutd process serving pprofBase (found by its --pprof-address)
// uses under a tenth of a core over 2 s: after the fixtures, its informers decode tens of
// thousands of events and its controllers reconcile the stored transfers, and a window that
// starts then measures that work beside the reads (the in-process phases wait for the
// service's writes instead, apiCalls.quiet). Without a process to watch (-env without
// -pprof-url) it returns at once.
func payoutdIdle(ctx context.Context, pprofBase string) error {
	pid := ""
	if addr := strings.TrimPrefix(pprofBase, "http://"); addr != "" {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range procs {
			cmdline, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			// payout-dev's own command line holds the flag too, inside --payoutd-arg
			args := strings.Split(string(cmdline), "\x00")
			if filepath.Base(args[0]) == "payoutd" && slices.Contains(args, "--pprof-address="+addr) {
				pid = filepath.Base(filepath.Dir(f))
			}
		}
	}
	if pid == "" {
		return nil
	}
	// utime and stime, in clock ticks (USER_HZ, 100 a second on Linux)
	ticks := func() (int64, error) {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return 0, err
		}
		// the fields after the command's closing parenthesis: state is field 3, utime 14, stime 15
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 13 {
			return 0, fmt.Errorf("/proc/%s/stat: %d fields", pid, len(fields))
		}
		u, uerr := strconv.ParseInt(fields[11], 10, 64)
		st, serr := strconv.ParseInt(fields[12], 10, 64)
		return u + st, errors.Join(uerr, serr)
	}
	start := time.Now()
	before, err := ticks()
	if err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, false, func(context.Context) (bool, error) {
		now, err := ticks()
		if err != nil {
			return false, err
		}
		used := float64(now-before) / 100 / 2
		before = now
		if used < 0.1 {
			fmt.Printf("payoutd went idle (%.2f of a core) in %v\n", used, time.Since(start).Round(100*time.Millisecond))
		}
		return used < 0.1, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("payoutd was still busy after 10 minutes")
	}
	return err
}

// instance is the payoutd to drive: the one of -env, or one started here with bin/payout-dev in
// a temporary directory, with its pprof endpoint on; stop ends what was started.
func instance(ctx context.Context) (vars map[string]string, pprofBase string, stop func(), err error) {
	if *envFile != "" {
		vars, err = readEnv(*envFile)
		return vars, *pprofURL, func() {}, err
	}
	dir, err := os.MkdirTemp("", "loadrun-dev")
	if err != nil {
		return nil, "", nil, err
	}
	pprofAddr, err := freeport.Loopback()
	if err != nil {
		return nil, "", nil, err
	}
	// as `make run` starts it (Makefile), with the pprof endpoint added
	cmd := exec.Command("bin/payout-dev", "--dir", dir, "--assets", "bin/k8s", "--crds", "config/crd/bases",
		"--policies", "config/policy", "--bin", "bin", "--anvil", "bin/anvil", "--quiet", "--payoutd-arg=--pprof-address="+pprofAddr)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", nil, fmt.Errorf("starting bin/payout-dev (make build): %w", err)
	}
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}
	fmt.Fprintf(os.Stderr, "loadrun: started payout-dev in %s; waiting for its env\n", dir)
	for deadline := time.Now().Add(5 * time.Minute); ; {
		if vars, err = readEnv(filepath.Join(dir, "env")); err == nil {
			return vars, "http://" + pprofAddr, stop, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			stop()
			return nil, "", nil, fmt.Errorf("payout-dev wrote no env (see %s/payoutd.log): %w", dir, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// readEnv reads the `export NAME=value` lines of a .dev/env (CONTRACT.md).
func readEnv(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(value, "'") {
			value = strings.ReplaceAll(strings.Trim(value, "'"), `'\''`, "'")
		}
		vars[name] = value
	}
	for _, name := range []string{"KUBECONFIG", "PAYOUT_BASE_URL"} {
		if vars[name] == "" {
			return nil, fmt.Errorf("%s: no %s", path, name)
		}
	}
	return vars, nil
}

// readFixtures makes an account with -transfers transfers and enough keys that no key passes
// its budgets (a key changes every 25 reads; each read goes through the keys from the first, as
// deposit-options and lookups are separate budgets; sides measured windows of up to -read-rate
// reads a second each spend one budget, as REST and MCP lookups do),
// and waits until the facade knows the last key and transfer.
func readFixtures(ctx context.Context, c client.Client, url, name string, sides int) ([]*keyed, []string, error) {
	if _, err := admin.CreateAccount(ctx, c, name, admin.DefaultAccountSettings(name)); err != nil {
		return nil, nil, err
	}
	ns := payoutv1.AccountNamespace(name)
	if err := waitNamespace(ctx, c, ns); err != nil {
		return nil, nil, err
	}
	ids := make([]string, *stored)
	if err := parallel(len(ids), func(i int) error {
		ids[i] = fmt.Sprintf("%024x", 0x20000000+i)
		return c.Create(ctx, testgen.Transfer(ns, ids[i], func(t *payoutv1.Transfer) {
			t.Spec.Account = name
			t.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(240 * time.Hour)}
		}))
	}); err != nil {
		return nil, nil, err
	}
	keys := make([]*keyed, (sides*(*readRate)*int(*duration/time.Second)+*stored)/25+*workers)
	if err := parallel(len(keys), func(i int) (err error) {
		keys[i], err = newKeyed(c, name)
		return err
	}); err != nil {
		return nil, nil, err
	}
	if err := keysSettled(ctx, c, name, len(keys)); err != nil {
		return nil, nil, err
	}
	for _, k := range []*keyed{keys[0], keys[len(keys)-1]} {
		for st := 0; st != 200; time.Sleep(100 * time.Millisecond) {
			st, _ = k.do("GET", url+"/api/payouts/transfer/"+ids[len(ids)-1], nil, nil)
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
		}
	}
	return keys, ids, nil
}

// keysSettled waits until the key controller has written the status of account's n keys (one
// write each, after their create), so that the windows measure reads and not that backlog: the
// API server's writes, and the informers' decoding of them, fell into the first windows of a
// run and slowed whichever read came first.
func keysSettled(ctx context.Context, c client.Client, account string, n int) error {
	start, done := time.Now(), 0
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &payoutv1.APIKeyList{}
		if err := c.List(ctx, list); err != nil {
			return false, err
		}
		done = 0
		for _, k := range list.Items {
			if k.Spec.Account == account && k.Status.ObservedGeneration == k.Generation && len(k.Status.Conditions) > 0 {
				done++
			}
		}
		return done >= n, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("the key controller wrote the status of %d of %d keys in 10 minutes", done, n)
	}
	if err == nil {
		fmt.Printf("the key controller wrote the status of %d keys in %v\n", n, time.Since(start).Round(100*time.Millisecond))
	}
	return err
}

// parallel runs f for 0..n-1, 16 at a time, and returns the first error.
func parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	var first error
	var mu sync.Mutex
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(i); err != nil {
				mu.Lock()
				first = errors.Join(first, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// reads are the cached reads both modes measure: each a path of the facade, answered from the
// informer cache without an API-server request.
func reads(ids []string) []read {
	return []read{
		{"GET deposit-options", func(int64) string { return "/api/payouts/deposit-options" }, 100},
		{"GET transfer", func(n int64) string {
			if *sameTransfer {
				return "/api/payouts/transfer/" + ids[0]
			}
			return "/api/payouts/transfer/" + ids[int(n*7919)%len(ids)]
		}, len(ids)},
	}
}

// sameTransfer makes every GET transfer read the first stored transfer: against the default,
// reads at random among -transfers, it shows what the random reads' misses of the CPU's caches
// cost (docs/benchmarks.md, "GET transfer from a book of its own").
var sameTransfer = flag.Bool("same-transfer", false, "GET transfer reads one stored transfer every time rather than all of them at random")

// read is a cached read: its path for the nth request, and how many reads warm it up.
type read struct {
	name string
	path func(n int64) string
	warm int
}

// facadeName names the facade in the report: payoutd's process, or the facade in this one.
var facadeName = "the facade"

// measureReads warms each read up (every stored transfer looked up once, unmeasured, as polling
// callers keep the body cache warm), then alternates it with the bare handler, and prints both
// with their ratio; it returns the facade's reads measured. The bare handler is the floor of the
// exchange: with -bare same (the default) it gets the facade's request (the same client code and
// headers, an API key's Authorization among them) and answers the facade's answer replayed
// (status, headers, body: the spec's rate-limit headers and the rest), so that both sides carry
// the same bytes and differ only by the facade's work; with -bare body, the floor of the runs
// before 2026-11-26, it gets a bare GET and answers a body of the answer's size with a
// Content-Type alone. With pprofBase, payoutd's CPU profile of each read's first facade window
// goes to -cpuprofile, suffixed with the read.
func measureReads(url, bareURL string, keys []*keyed, ids []string, pprofBase string) (int64, error) {
	clients := make([]*http.Client, *workers)
	for i := range clients {
		clients[i] = httpClient()
	}
	var total int64
	for _, rd := range reads(ids) {
		facade := keyedGets(keys, clients, func(n int64) string { return url + rd.path(n) }, 200, rd.name)
		if err := parallel(rd.warm, func(i int) error { return facade(i % *workers) }); err != nil {
			return 0, err
		}
		ans, err := answerOf(keys[0], url+rd.path(0))
		if err != nil {
			return 0, err
		}
		bare, bareName := bareOp(fmt.Sprintf("%s/%d", bareURL, len(ans.Body)), clients), fmt.Sprintf("bare handler, %d-byte body", len(ans.Body))
		if *bareMode == "same" {
			path := "/" + strings.ReplaceAll(strings.TrimPrefix(rd.name, "GET "), " ", "-")
			if err := teach(bareURL+path, ans); err != nil {
				return 0, err
			}
			// the same client code as the facade's op, on a counter of its own: the facade's keys
			// are sized for its own reads (-read-rate), and the bare handler limits nothing
			bare = keyedGets(keys, clients, func(int64) string { return bareURL + path }, ans.Status, "bare handler")
			bareName = fmt.Sprintf("bare handler, the same exchange (%d-byte body, %d headers)", len(ans.Body), len(ans.Header))
		}
		facadeWindowHook = nil
		if pprofBase != "" && *profile != "" {
			file := *profile + "." + strings.ReplaceAll(strings.TrimPrefix(rd.name, "GET "), " ", "-")
			taken := false
			facadeWindowHook = func(d time.Duration) {
				if !taken {
					taken = true
					fetchProfile(pprofBase, d, file)
				}
			}
		}
		base, f, err := alternate(facade, bare)
		if err != nil {
			return 0, err
		}
		total += f.n
		base[0].print(bareName)
		f.print(rd.name + " through " + facadeName)
		printRatio("ratio", f.rate/base[0].rate, "goal >= 0.8")
		fmt.Printf("    the same in each round: %s\n", f.perRound(base[0]))
		printRatio("p99 / bare p99", float64(f.p99)/float64(base[0].p99), "goal <= 2")
		fmt.Println()
	}
	profiling.Wait()
	return total, nil
}

// keyedGets is an op that GETs url(n) for the nth request with the nth request's key (a new one
// every 25 requests, so that no key passes its budget) and wants status.
func keyedGets(keys []*keyed, clients []*http.Client, url func(n int64) string, status int, name string) op {
	var next atomic.Int64
	return func(w int) error {
		n := next.Add(1)
		k := *keys[int(n/25)%len(keys)]
		k.hc = clients[w]
		st, err := k.do("GET", url(n), nil, nil)
		if err != nil || st != status {
			return fmt.Errorf("%s: %d %v", name, st, err)
		}
		return nil
	}
}

// answer is an HTTP answer as the bare handler replays it.
type answer struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// answerOf is the facade's answer at url, with the headers net/http writes for every handler
// (Date, Content-Length) left out: the bare handler's server writes its own.
func answerOf(k *keyed, url string) (answer, error) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+k.key)
	resp, err := k.hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	h := resp.Header.Clone()
	h.Del("Date")
	h.Del("Content-Length")
	return answer{Status: resp.StatusCode, Header: h, Body: b}, err
}

// teach has the bare handler at url answer a as it stands from now on.
func teach(url string, a answer) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(b))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("bare handler: PUT %s: %d", url, resp.StatusCode)
	}
	return nil
}

// bareOp reads url of the bare handler, one keep-alive connection per worker.
func bareOp(url string, clients []*http.Client) op {
	return func(w int) error {
		resp, err := clients[w].Get(url)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("bare handler: %d", resp.StatusCode)
		}
		return nil
	}
}

// fetchProfile writes payoutd's CPU profile of the next d to file, in the background.
func fetchProfile(base string, d time.Duration, file string) {
	profiling.Add(1)
	go func() {
		defer profiling.Done()
		hc := &http.Client{Timeout: d + 30*time.Second}
		resp, err := hc.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, max(1, int(d.Seconds()))))
		if err != nil {
			fmt.Fprintln(os.Stderr, "payoutd profile:", err)
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		_ = os.WriteFile(file, data, 0o644)
	}()
}

// bareProcess starts this program again as the bare handler's process and returns its URL.
func bareProcess() (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe, "-serve-bare", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("bare handler: %w", err)
	}
	return "http://" + strings.TrimSpace(line), stop, nil
}

// runBare is the bare handler's process: it prints its address and serves until killed.
func runBare(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	return serveBareOn(ln)
}

// serveBareOn is the bare handler: GET /N answers N bytes of JSON-typed body, each body made
// once; PUT /name stores an answer (JSON: status, header, body) that GET /name replays.
func serveBareOn(ln net.Listener) error {
	var bodies, answers sync.Map
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			var a answer
			if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			answers.Store(r.URL.Path, &a)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if a, ok := answers.Load(r.URL.Path); ok {
			a := a.(*answer)
			h := w.Header()
			for k, v := range a.Header {
				h[k] = v // the stored slices, as the facade writes its constant headers' values
			}
			w.WriteHeader(a.Status)
			_, _ = w.Write(a.Body)
			return
		}
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil || n < 0 || n > 1<<20 {
			http.NotFound(w, r)
			return
		}
		b, ok := bodies.Load(n)
		if !ok {
			b, _ = bodies.LoadOrStore(n, []byte(strings.Repeat("x", n)))
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b.([]byte))
	}))
}
