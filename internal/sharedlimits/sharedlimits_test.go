package sharedlimits

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/ulule/limiter/v3"

	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/secret"
	"github.com/stablepay/payout-operator/test/metricstest"
	"github.com/stablepay/payout-operator/test/testredis"
)

var policy = AuthPolicy{Window: 10 * time.Minute, MaxBad: 5, MaxNone: 10}

// open connects a Store (a replica) to srv with a key prefix of the test's own.
func open(t *testing.T, srv *testredis.Server, mods ...func(*Config)) *Store {
	t.Helper()
	cfg := Config{Addr: srv.Addr(), KeyPrefix: "test:" + t.Name() + ":"}
	for _, m := range mods {
		m(&cfg)
	}
	s, err := Open(cfg, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func mustFail(t *testing.T, l *AuthLog, addr string, kind Kind, at time.Time) Counts {
	t.Helper()
	c, err := l.Fail(context.Background(), addr, kind, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCount(t *testing.T, l *AuthLog, addr string, at time.Time) Counts {
	t.Helper()
	c, err := l.Counts(context.Background(), addr, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAuthLogWindow: the sixth bad credential within the window puts an address over, and it
// stays over until its oldest failure is exactly a window old (it has then left the window),
// not a microsecond earlier.
func TestAuthLogWindow(t *testing.T) {
	srv := testredis.StartForTest(t)
	l := open(t, srv).AuthLog(policy)
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	const addr = "192.0.2.7"
	for i := range 5 {
		c := mustFail(t, l, addr, BadCredential, t0.Add(time.Duration(i)*time.Second))
		if c.Bad != i+1 || l.Over(c) {
			t.Fatalf("bad credential %d: counts %+v, over %v", i+1, c, l.Over(c))
		}
	}
	if c := mustFail(t, l, addr, BadCredential, t0.Add(5*time.Second)); c.Bad != 6 || !l.Over(c) {
		t.Fatalf("sixth bad credential: counts %+v, over %v", c, l.Over(c))
	}
	if c := mustCount(t, l, addr, t0.Add(policy.Window-time.Microsecond)); !l.Over(c) {
		t.Errorf("a microsecond before the first failure leaves the window: %+v, not over", c)
	}
	if c := mustCount(t, l, addr, t0.Add(policy.Window)); c.Bad != 5 || l.Over(c) {
		t.Errorf("when the first failure is a window old: %+v, want 5 and not over", c)
	}
	if c := mustCount(t, l, "192.0.2.8", t0); c != (Counts{}) {
		t.Errorf("another address: %+v", c)
	}
}

// TestAuthLogKinds: requests without credentials have their own limit (10), and the two kinds
// do not count for each other.
func TestAuthLogKinds(t *testing.T) {
	srv := testredis.StartForTest(t)
	l := open(t, srv).AuthLog(policy)
	now := time.Now()
	const addr = "2001:db8:1:2::"
	for i := range 10 {
		if c := mustFail(t, l, addr, NoCredential, now); c.None != i+1 || c.Bad != 0 || l.Over(c) {
			t.Fatalf("request %d without credentials: %+v", i+1, c)
		}
	}
	c := mustFail(t, l, addr, BadCredential, now)
	if c.Bad != 1 || c.None != 10 || l.Over(c) {
		t.Fatalf("a bad credential after 10 without: %+v", c)
	}
	if c := mustFail(t, l, addr, NoCredential, now); c.None != 11 || !l.Over(c) {
		t.Fatalf("the 11th without credentials: %+v", c)
	}
}

// TestAuthLogKeys: the keys' names, the cap of limit+1 entries per set, and the TTL of a window
// and a second, renewed by every failure.
func TestAuthLogKeys(t *testing.T) {
	srv := testredis.StartForTest(t)
	s := open(t, srv, func(c *Config) { c.KeyPrefix = "payout:limits:" })
	l := s.AuthLog(policy)
	rc := srv.Client()
	defer rc.Close()
	ctx := context.Background()
	now := time.Now()
	for i := range 20 {
		mustFail(t, l, "198.51.100.1", BadCredential, now.Add(time.Duration(i)*time.Millisecond))
	}
	mustFail(t, l, "198.51.100.1", NoCredential, now)
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"payout:limits:auth:{198.51.100.1}:bad": true, "payout:limits:auth:{198.51.100.1}:none": true}
	if len(keys) != 2 || !want[keys[0]] || !want[keys[1]] {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	if n := rc.ZCard(ctx, "payout:limits:auth:{198.51.100.1}:bad").Val(); n != int64(policy.MaxBad+1) {
		t.Errorf("the bad log holds %d entries, want the cap %d", n, policy.MaxBad+1)
	}
	// the newest are kept
	newest := rc.ZRangeWithScores(ctx, "payout:limits:auth:{198.51.100.1}:bad", -1, -1).Val()
	if len(newest) != 1 || int64(newest[0].Score) != now.Add(19*time.Millisecond).UnixMicro() {
		t.Errorf("newest entry %+v, want the 20th failure", newest)
	}
	for _, k := range keys {
		ttl := rc.PTTL(ctx, k).Val()
		if ttl <= policy.Window || ttl > policy.Window+time.Second {
			t.Errorf("%s: TTL %v, want a window and a second", k, ttl)
		}
	}
}

// TestAuthLogAcrossReplicas: failures recorded through two connections (two replicas) count
// together, and concurrent failures at the same instant are all kept (members are unique).
func TestAuthLogAcrossReplicas(t *testing.T) {
	srv := testredis.StartForTest(t)
	a, b := open(t, srv).AuthLog(policy), open(t, srv).AuthLog(policy)
	now := time.Now()
	for i, l := range []*AuthLog{a, b, a, b, a} {
		if c := mustFail(t, l, "203.0.113.9", BadCredential, now); l.Over(c) {
			t.Fatalf("failure %d: over at %+v", i+1, c)
		}
	}
	if c := mustFail(t, b, "203.0.113.9", BadCredential, now); !b.Over(c) {
		t.Fatalf("the sixth, on the other replica: %+v, not over", c)
	}
	if c := mustCount(t, a, "203.0.113.9", now); !a.Over(c) {
		t.Fatalf("the first replica does not see the block: %+v", c)
	}

	wide := AuthPolicy{Window: time.Minute, MaxBad: 1000, MaxNone: 1000}
	la, lb := open(t, srv).AuthLog(wide), open(t, srv).AuthLog(wide)
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			l := la
			if i%2 == 1 {
				l = lb
			}
			if _, err := l.Fail(context.Background(), "203.0.113.10", BadCredential, now); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if c := mustCount(t, la, "203.0.113.10", now); c.Bad != 100 {
		t.Errorf("100 concurrent failures at one instant on two replicas: counted %d", c.Bad)
	}
}

// TestAuthLogScriptsReload: a Redis that lost its scripts (SCRIPT FLUSH, a restart, a
// failover) gets them again.
func TestAuthLogScriptsReload(t *testing.T) {
	srv := testredis.StartForTest(t)
	l := open(t, srv).AuthLog(policy)
	now := time.Now()
	mustFail(t, l, "192.0.2.1", BadCredential, now)
	rc := srv.Client()
	defer rc.Close()
	if err := rc.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if c := mustFail(t, l, "192.0.2.1", BadCredential, now); c.Bad != 2 {
		t.Fatalf("after SCRIPT FLUSH: %+v", c)
	}
	if c := mustCount(t, l, "192.0.2.1", now); c.Bad != 2 {
		t.Fatalf("after SCRIPT FLUSH: %+v", c)
	}
}

// TestRateStoreShared: limiter's Redis store counts one window for both replicas, Peek spends
// nothing, and the window's end is the same for both.
func TestRateStoreShared(t *testing.T) {
	srv := testredis.StartForTest(t)
	rate := limiter.Rate{Period: time.Minute, Limit: 3}
	a := limiter.New(open(t, srv).RateStore(), rate)
	b := limiter.New(open(t, srv).RateStore(), rate)
	ctx := context.Background()
	var resets []int64
	for i, l := range []*limiter.Limiter{a, b, a, b} {
		lc, err := l.Get(ctx, "quote/key1")
		if err != nil {
			t.Fatal(err)
		}
		if lc.Reached != (i == 3) || lc.Remaining != max(int64(2-i), 0) {
			t.Fatalf("request %d: %+v", i+1, lc)
		}
		resets = append(resets, lc.Reset)
		if i == 0 {
			p, err := b.Peek(ctx, "quote/key1")
			if err != nil || p.Remaining != 2 || p.Reached {
				t.Fatalf("peek on the other replica: %+v, %v", p, err)
			}
		}
	}
	for _, r := range resets {
		if d := r - resets[0]; d < 0 || d > 1 {
			t.Errorf("window ends %v disagree by more than the truncation of a second", resets)
		}
	}
	if d := resets[0] - time.Now().Unix(); d < 58 || d > 60 {
		t.Errorf("reset %d is %d s away, want about a minute", resets[0], d)
	}
	if p, _ := a.Peek(ctx, "quote/key2"); p.Remaining != 3 {
		t.Errorf("peek of a fresh key: %+v", p)
	}
}

// TestOpenWhileDown: a replica starts while Redis is down (limiter's store loads its scripts
// on first use), and its calls fail over to nothing until Redis answers.
func TestOpenWhileDown(t *testing.T) {
	srv := testredis.StartForTest(t)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	s := open(t, srv, func(c *Config) { c.Backoff = 50 * time.Millisecond })
	l := limiter.New(s.RateStore(), limiter.Rate{Period: time.Minute, Limit: 5})
	if _, err := l.Get(context.Background(), "k"); err == nil {
		t.Fatal("a Get while Redis is down succeeded")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if lc, err := l.Get(context.Background(), "k"); err != nil || lc.Remaining != 4 {
		t.Fatalf("after Redis started: %+v, %v", lc, err)
	}
}

// TestCallBypassesAFailingStore: a failing store is counted, bypassed for the backoff, tried
// again by one request, and back in use once it answers; a caller that left is not the
// store's failure.
func TestCallBypassesAFailingStore(t *testing.T) {
	srv := testredis.StartForTest(t)
	var logged []string
	var mu sync.Mutex
	log := funcr.New(func(prefix, args string) { mu.Lock(); logged = append(logged, args); mu.Unlock() }, funcr.Options{})
	s, err := Open(Config{Addr: srv.Addr(), Backoff: 300 * time.Millisecond, KeyPrefix: "test:call:"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ping := func(ctx context.Context) error { return s.Ping(ctx) }
	if !s.Call(ctx, metrics.LimitStorePerKey, ping) {
		t.Fatal("a call to a running store failed")
	}

	// the caller's own cancellation does not count against the store
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if s.Call(cancelled, metrics.LimitStorePerKey, ping) || s.Degraded() {
		t.Fatalf("a cancelled call: degraded %v", s.Degraded())
	}

	before := metricstest.MustGather(t)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	calls := 0
	counting := func(ctx context.Context) error { calls++; return s.Ping(ctx) }
	if s.Call(ctx, metrics.LimitStorePerKey, counting) || !s.Degraded() {
		t.Fatal("a call to a stopped store answered")
	}
	for range 50 {
		if s.Call(ctx, metrics.LimitAuthFailures, counting) {
			t.Fatal("a bypassed store answered")
		}
	}
	if calls != 1 {
		t.Fatalf("%d calls reached the stopped store within the backoff, want 1", calls)
	}
	if d := metricstest.MustGather(t).Delta(before, metrics.LimitStoreErrorsName, "limit", metrics.LimitStorePerKey); d != 1 {
		t.Errorf("errors counted: %v, want 1", d)
	}
	time.Sleep(350 * time.Millisecond)
	var wg sync.WaitGroup
	var tried sync.Map
	for i := range 8 {
		wg.Go(func() {
			s.Call(ctx, metrics.LimitStorePerKey, func(ctx context.Context) error { tried.Store(i, true); return s.Ping(ctx) })
		})
	}
	wg.Wait()
	n := 0
	tried.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d concurrent calls tried the store after the backoff, want 1", n)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(350 * time.Millisecond)
	if !s.Call(ctx, metrics.LimitStorePerKey, ping) || s.Degraded() {
		t.Fatal("the store is not in use again after it came back")
	}
	mu.Lock()
	defer mu.Unlock()
	text := strings.Join(logged, "\n")
	if !strings.Contains(text, "shared limits store failed") || !strings.Contains(text, "answers again") {
		t.Errorf("the outage was not logged from start to end:\n%s", text)
	}
}

// TestPasswordFile: a password from a file authenticates; a wrong one fails, and the password
// appears in no error.
func TestPasswordFile(t *testing.T) {
	srv := testredis.StartForTest(t)
	rc := srv.Client()
	defer rc.Close()
	const password = "s3cret-limits-password"
	if err := rc.ConfigSet(context.Background(), "requirepass", password).Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, wrong := filepath.Join(dir, "good"), filepath.Join(dir, "wrong")
	if err := os.WriteFile(good, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrong, []byte("nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, srv, func(c *Config) { c.PasswordFile = good })
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("with the password file: %v", err)
	}
	w := open(t, srv, func(c *Config) { c.PasswordFile = wrong })
	err := w.Ping(context.Background())
	if err == nil {
		t.Fatal("a wrong password was accepted")
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("the error shows the password: %v", err)
	}
	cfg := Config{Addr: srv.Addr(), Password: secret.New(password)}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if strings.Contains(fmt.Sprintf(f, cfg), password) {
			t.Errorf("%s of a Config shows the password", f)
		}
	}
}

// TestValidate: each bad setting is refused with its flag's name.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string // "" for valid
	}{
		{Config{}, ""},
		{Config{Addr: "127.0.0.1:6379"}, ""},
		{Config{Addr: "redis.payout-system.svc:6379", TLS: true, KeyPrefix: "payout:prod:"}, ""},
		{Config{Addr: "127.0.0.1"}, "--limits-redis-addr"},
		{Config{Addr: ":6379"}, "--limits-redis-addr"},
		{Config{Addr: "127.0.0.1:99999"}, "--limits-redis-addr"},
		{Config{TLS: true}, "--limits-redis-addr: is required"},
		{Config{Addr: "127.0.0.1:6379", PasswordFile: filepath.Join(dir, "missing")}, "--limits-redis-password-file"},
		{Config{Addr: "127.0.0.1:6379", PasswordFile: empty}, "--limits-redis-password-file"},
		{Config{Addr: "127.0.0.1:6379", PasswordFile: empty, Password: secret.New("x")}, "not both"},
		{Config{Addr: "127.0.0.1:6379", TLSCAFile: empty}, "--limits-redis-tls-ca-file"},
		{Config{Addr: "127.0.0.1:6379", DB: -1}, "--limits-redis-db"},
		{Config{Addr: "127.0.0.1:6379", KeyPrefix: "a {b}"}, "--limits-redis-key-prefix"},
		{Config{Addr: "127.0.0.1:6379", Timeout: -time.Second}, "--limits-redis-timeout"},
		{Config{Addr: "127.0.0.1:6379", Backoff: -time.Second}, "--limits-redis-backoff"},
	} {
		err := tc.cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want one naming %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := Open(Config{}, logr.Discard()); err == nil {
		t.Error("Open of an unconfigured store succeeded")
	}
}
