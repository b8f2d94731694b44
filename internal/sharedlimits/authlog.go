package sharedlimits

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind is a kind of failed authentication of spec 5.3.
type Kind int

const (
	// BadCredential: a malformed bearer value or an unknown, unmatched or revoked key.
	BadCredential Kind = iota
	// NoCredential: a request without usable authentication.
	NoCredential
)

// AuthPolicy is the rolling window of spec 5.3 and its two limits.
type AuthPolicy struct {
	Window  time.Duration
	MaxBad  int
	MaxNone int
}

// Counts are the failures of an address within the window, each capped at its limit + 1 (one
// past the limit is all it takes to know the address is over it).
type Counts struct {
	Bad, None int
}

// AuthLog is the shared failure log of spec 5.3: for each address (the caller passes the unit
// it counts, an IPv4 address or an IPv6 /64), one sorted set per kind of failure, of timestamps
// in microseconds. Its keys are
//
//	<KeyPrefix>auth:{<address>}:bad    <KeyPrefix>auth:{<address>}:none
//
// (the braces keep both of an address on one Redis Cluster slot, for the script that touches
// both). A failure is recorded by one script, atomically on the server: drop the entries that
// left the window, add this one, keep the newest limit+1, renew the key's TTL to a window and a
// second, and count both kinds. So the logs are exact, as the in-memory guard's are, whichever
// replica each failure reaches; a set holds at most limit+1 members, and a key outlives its
// address's newest failure by a window and a second: the store's memory follows the
// addresses that failed in the last window, each bounded. Timestamps come from the replica's
// clock (the facade's Config.Clock), so the replicas' clocks must agree to well within a second.
type AuthLog struct {
	store  *Store
	policy AuthPolicy
}

// AuthLog returns the failure log of policy on this store.
func (s *Store) AuthLog(policy AuthPolicy) *AuthLog {
	return &AuthLog{store: s, policy: policy}
}

// Over reports whether c is over a limit of the policy.
func (l *AuthLog) Over(c Counts) bool { return c.Bad > l.policy.MaxBad || c.None > l.policy.MaxNone }

// failScript records one failure. KEYS[1] is the log of the failure's kind, KEYS[2] the other
// kind's. ARGV: now (µs), cutoff (µs: entries at or before it have left the window), the new
// member, the cap of KEYS[1] (its limit + 1), the TTL (ms). Returns the counts within the window
// of KEYS[1] and KEYS[2].
var failScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[4]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[2], '+inf')}
`)

// countScript counts the entries of KEYS[1] and KEYS[2] after the cutoff ARGV[1] (µs), without
// writing.
var countScript = redis.NewScript(`
return {redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf'), redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[1], '+inf')}
`)

// keys are the bad and none logs of addr.
func (l *AuthLog) keys(addr string) []string {
	p := l.store.cfg.KeyPrefix + "auth:{" + addr + "}:"
	return []string{p + "bad", p + "none"}
}

// Fail records a failure of kind for addr at now and returns the address's counts afterwards.
func (l *AuthLog) Fail(ctx context.Context, addr string, kind Kind, now time.Time) (Counts, error) {
	keys := l.keys(addr)
	capacity := l.policy.MaxBad + 1
	if kind == NoCredential {
		keys[0], keys[1] = keys[1], keys[0]
		capacity = l.policy.MaxNone + 1
	}
	us := now.UnixMicro()
	member := strconv.FormatInt(us, 10) + "-" + l.store.nonce + "-" + strconv.FormatUint(l.store.seq.Add(1), 36)
	ttl := (l.policy.Window + time.Second).Milliseconds()
	this, other, err := pair(failScript.Run(ctx, l.store.client, keys, us, l.cutoff(now), member, capacity, ttl))
	if err != nil {
		return Counts{}, err
	}
	if kind == NoCredential {
		return Counts{Bad: other, None: this}, nil
	}
	return Counts{Bad: this, None: other}, nil
}

// Counts returns the failures of addr within the window ending at now.
func (l *AuthLog) Counts(ctx context.Context, addr string, now time.Time) (Counts, error) {
	bad, none, err := pair(countScript.Run(ctx, l.store.client, l.keys(addr), l.cutoff(now)))
	return Counts{Bad: bad, None: none}, err
}

func (l *AuthLog) cutoff(now time.Time) int64 { return now.Add(-l.policy.Window).UnixMicro() }

// pair reads a script's answer of two integers.
func pair(cmd *redis.Cmd) (int, int, error) {
	vals, err := cmd.Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(vals) != 2 {
		return 0, 0, errors.New("sharedlimits: the script answered " + strconv.Itoa(len(vals)) + " values, not 2")
	}
	return int(vals[0]), int(vals[1]), nil
}
