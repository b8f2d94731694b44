package sharedlimits

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Values keeps short-lived values every replica must see: the wallet verification site's
// one-time nonces and the dashboard's sessions and pending sign-ins, which a replica's memory
// would confine to the replica that made them. Each key is the store's KeyPrefix, the space's
// name and a colon before the caller's key, and each value expires in Redis.
//
// Unlike the limits, Values never counts on its own when Redis fails: a nonce or session one
// replica cannot see is refused, so an error here is the caller's to answer with a 503 (fail
// closed), never a reason to fall back to memory.
type Values struct {
	client *redis.Client
	prefix string
}

// Values returns the values of space (e.g. "kyc:nonce") on this store's connection.
func (s *Store) Values(space string) *Values {
	return &Values{client: s.client, prefix: s.cfg.KeyPrefix + space + ":"}
}

// PutOnce stores value under key for ttl unless key is held (SET NX with an expiry); it
// reports whether it stored it.
func (v *Values) PutOnce(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	err := v.client.SetArgs(ctx, v.prefix+key, value, redis.SetArgs{Mode: "NX", TTL: ttl}).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// Replace stores value under key for ttl only if key is still held (SET XX with an expiry): a
// value deleted or expired meanwhile is not made again. It reports whether it stored it.
func (v *Values) Replace(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	err := v.client.SetArgs(ctx, v.prefix+key, value, redis.SetArgs{Mode: "XX", TTL: ttl}).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// Get reads key's value, if held.
func (v *Values) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := v.client.Get(ctx, v.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// Take reads and deletes key's value in one command (GETDEL), so that of two takes of one
// value exactly one gets it.
func (v *Values) Take(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := v.client.GetDel(ctx, v.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// Delete deletes key.
func (v *Values) Delete(ctx context.Context, key string) error {
	return v.client.Del(ctx, v.prefix+key).Err()
}
