// Package sharedlimits keeps the REST facade's limits where every replica sees them: a Redis
// server holds the per-key rate-limit windows of spec 8.1 (ulule/limiter's Redis store) and the
// per-address authentication-failure logs of spec 5.3 (sorted sets trimmed and counted by a Lua
// script), so that N replicas behind a balancer enforce one limit, not N.
//
// The store is on the path of every request, and it can fail. A Store never makes a caller
// wait on a store that is down: a call that fails (or takes longer than Config.Timeout) makes
// the replica bypass the store for Config.Backoff, counting on its own meanwhile, then try it
// again with a single request (Call). Each failure is counted in
// payout_facade_limit_store_errors_total (a failing store keeps it moving: one try per
// Backoff per replica) and the start of an outage is logged, as is its end. What a replica does while it counts on its own is the facade's
// decision (it keeps its in-memory limits warm for that).
package sharedlimits

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/ulule/limiter/v3"
	redisstore "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/secretfile"
)

// Store is a connection to the shared store with its failure handling. It is safe for
// concurrent use.
type Store struct {
	cfg    Config
	client *redis.Client
	log    logr.Logger
	rate   *rateStore

	// bypassUntil is 0 while the store is in use, else the time (Unix nanoseconds) until which
	// it is bypassed after a failure.
	bypassUntil atomic.Int64
	// since is when the current outage began (Unix nanoseconds), lastLog when it was last
	// logged.
	since, lastLog atomic.Int64

	// nonce and seq make the members of the failure logs unique across replicas.
	nonce string
	seq   atomic.Uint64
}

// Open connects to the store of cfg (it must be Configured and valid). It does not wait for
// the store to answer: a replica must start, and serve, while the store is down.
func Open(cfg Config, log logr.Logger) (*Store, error) {
	if !cfg.Configured() {
		return nil, fmt.Errorf("--%s is not set", FlagAddr)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	opts := &redis.Options{
		Addr:         cfg.Addr,
		Username:     cfg.Username,
		Password:     cfg.Password.Reveal(),
		DB:           cfg.DB,
		DialTimeout:  cfg.DialTimeout,
		ReadTimeout:  cfg.Timeout,
		WriteTimeout: cfg.Timeout,
		PoolTimeout:  cfg.Timeout,
		// One retry covers a pooled connection the server closed (a restart); more would only
		// multiply the wait on a store that is down.
		MaxRetries:      1,
		MinRetryBackoff: time.Millisecond,
		MaxRetryBackoff: 10 * time.Millisecond,
		// Nothing but the commands the limits send: no CLIENT SETINFO, no maintenance
		// notifications handshake.
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
	if cfg.PasswordFile != "" {
		first, err := secretfile.Read(cfg.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", FlagPasswordFile, err)
		}
		// read at every new connection, so that a rotated Secret is picked up
		file, user := cfg.PasswordFile, cfg.Username
		opts.Password = ""
		opts.CredentialsProvider = func() (string, string) {
			p, err := secretfile.Read(file)
			if err != nil {
				p = first
			}
			return user, p
		}
	}
	if cfg.TLS {
		host, _, _ := net.SplitHostPort(cfg.Addr)
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
		if cfg.TLSServerName != "" {
			tc.ServerName = cfg.TLSServerName
		}
		if cfg.TLSCAFile != "" {
			pool, err := loadCAs(cfg.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("--%s: %w", FlagTLSCAFile, err)
			}
			tc.RootCAs = pool
		}
		opts.TLSConfig = tc
	}
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, client: redis.NewClient(opts), log: log, nonce: hex.EncodeToString(nonce[:])}
	s.rate = &rateStore{client: s.client, prefix: cfg.KeyPrefix + "rate"}
	return s, nil
}

// Addr is the store's address, for logs.
func (s *Store) Addr() string { return s.cfg.Addr }

// KeyPrefix is the prefix of every key the limits write.
func (s *Store) KeyPrefix() string { return s.cfg.KeyPrefix }

// Close closes the connections.
func (s *Store) Close() error { return s.client.Close() }

// Ping asks the store for an answer within its timeouts.
func (s *Store) Ping(ctx context.Context) error { return s.client.Ping(ctx).Err() }

// Degraded reports whether the store is being bypassed after a failure.
func (s *Store) Degraded() bool { return s.bypassUntil.Load() != 0 }

// Call runs f against the store unless the store is being bypassed, and reports whether f got
// its answer (false: count on your own for this request). limit names the limit for the error
// metric (metrics.LimitStorePerKey or metrics.LimitAuthFailures).
//
// When f fails, unless because ctx ended (the caller left: the store is not at fault), the
// error is counted, the store is bypassed for Config.Backoff, and the start of an outage is
// logged (and then once a minute while it lasts). After Backoff one request tries the store
// again while the others keep counting on their own; its success ends the outage.
func (s *Store) Call(ctx context.Context, limit string, f func(ctx context.Context) error) bool {
	now := time.Now().UnixNano()
	if !s.admit(now) {
		return false
	}
	err := f(ctx)
	if err == nil {
		s.recovered()
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	s.failed(limit, err)
	return false
}

// admit reports whether a call may go to the store now.
func (s *Store) admit(now int64) bool {
	until := s.bypassUntil.Load()
	if until == 0 {
		return true
	}
	if now < until {
		return false
	}
	// the backoff is over: one caller tries the store, the others keep bypassing it
	return s.bypassUntil.CompareAndSwap(until, now+s.cfg.Backoff.Nanoseconds())
}

func (s *Store) failed(limit string, err error) {
	metrics.LimitStoreError(limit)
	now := time.Now()
	first := s.bypassUntil.Swap(now.Add(s.cfg.Backoff).UnixNano()) == 0
	if first {
		s.since.Store(now.UnixNano())
	}
	last := s.lastLog.Load()
	if first || now.UnixNano()-last >= time.Minute.Nanoseconds() {
		if s.lastLog.CompareAndSwap(last, now.UnixNano()) {
			s.log.Error(err, "shared limits store failed: this replica counts the rate limits and the authentication-failure limits on its own until it answers again",
				"addr", s.cfg.Addr, "limit", limit, "since", time.Unix(0, s.since.Load()).UTC().Format(time.RFC3339), "retryEvery", s.cfg.Backoff.String())
		}
	}
}

func (s *Store) recovered() {
	if s.bypassUntil.Load() == 0 || s.bypassUntil.Swap(0) == 0 {
		return
	}
	s.lastLog.Store(0)
	down := time.Since(time.Unix(0, s.since.Load()))
	s.log.Info("shared limits store answers again: the limits are shared across replicas again", "addr", s.cfg.Addr, "outage", down.Round(time.Millisecond).String())
}

// RateStore is ulule/limiter's Redis store on this store's connection, for the per-key rate
// limits. Its keys are KeyPrefix + "rate:" + the limiter's key. Call its methods through Call.
func (s *Store) RateStore() limiter.Store { return s.rate }

// rateStore is limiter's Redis store, created on first use: creating it loads its scripts into
// Redis, and a replica must start while Redis is down.
type rateStore struct {
	client *redis.Client
	prefix string
	mu     sync.Mutex
	store  atomic.Pointer[limiter.Store]
}

func (r *rateStore) get() (limiter.Store, error) {
	if p := r.store.Load(); p != nil {
		return *p, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.store.Load(); p != nil {
		return *p, nil
	}
	st, err := redisstore.NewStoreWithOptions(r.client, limiter.StoreOptions{Prefix: r.prefix})
	if err != nil {
		return nil, err
	}
	r.store.Store(&st)
	return st, nil
}

func (r *rateStore) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	st, err := r.get()
	if err != nil {
		return limiter.Context{}, err
	}
	return st.Get(ctx, key, rate)
}

func (r *rateStore) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	st, err := r.get()
	if err != nil {
		return limiter.Context{}, err
	}
	return st.Peek(ctx, key, rate)
}

func (r *rateStore) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	st, err := r.get()
	if err != nil {
		return limiter.Context{}, err
	}
	return st.Reset(ctx, key, rate)
}

func (r *rateStore) Increment(ctx context.Context, key string, count int64, rate limiter.Rate) (limiter.Context, error) {
	st, err := r.get()
	if err != nil {
		return limiter.Context{}, err
	}
	return st.Increment(ctx, key, count, rate)
}

// loadCAs reads a PEM bundle of CA certificates.
func loadCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New(path + " holds no PEM certificate")
	}
	return pool, nil
}
