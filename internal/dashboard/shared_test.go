package dashboard

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/stablepay/payout-operator/internal/sharedlimits"
	"github.com/stablepay/payout-operator/test/testredis"
)

// Two replicas' session stores on one Redis: a session made on A is valid on B, a logout on B
// ends it on A, and a session idle or past its absolute end is over on both.
func TestSharedSessionsAcrossReplicas(t *testing.T) {
	redisSrv := testredis.StartForTest(t)
	c := &clock{}
	replica := func() (*sessions, *logins) {
		st, err := sharedlimits.Open(sharedlimits.Config{Addr: redisSrv.Addr()}, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		v := st.Values("dashboard")
		return newSessions(10*time.Minute, time.Hour, c.Now, v), &logins{shared: v, now: c.Now}
	}
	a, loginsA := replica()
	b, loginsB := replica()
	ctx := context.Background()

	made, err := a.create(ctx, "issuer alice", "acme", "uid-1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.get(ctx, made.id)
	if err != nil || got == nil || got.account != "acme" || got.csrf != made.csrf {
		t.Fatalf("a session made on A, read on B: %+v, %v", got, err)
	}
	if err := b.end(ctx, made.id); err != nil {
		t.Fatal(err)
	}
	if got, err := a.get(ctx, made.id); err != nil || got != nil {
		t.Fatalf("a session ended on B, read on A: %+v, %v", got, err)
	}
	if keys := redisSrv.Client().Keys(ctx, "*"+made.id+"*").Val(); len(keys) != 0 {
		t.Errorf("the store names a session by its id: %v", keys)
	}

	// idle on A, used on B within the idle time, then left idle: over on both
	idle, _ := a.create(ctx, "issuer alice", "acme", "uid-1")
	c.Step(9 * time.Minute)
	if got, _ := b.get(ctx, idle.id); got == nil {
		t.Fatal("a session used within its idle time ended")
	}
	c.Step(10 * time.Minute)
	if got, _ := a.get(ctx, idle.id); got != nil {
		t.Fatal("an idle session lives on")
	}
	// used often, but past its absolute end
	old, _ := a.create(ctx, "issuer alice", "acme", "uid-1")
	for range 7 {
		c.Step(9 * time.Minute)
		_, _ = b.get(ctx, old.id)
	}
	if got, _ := a.get(ctx, old.id); got != nil {
		t.Fatal("a session past its absolute end lives on")
	}

	// a sign-in started on A finishes on B, once
	state, err := loginsA.start(ctx, "nonce", "verifier")
	if err != nil {
		t.Fatal(err)
	}
	if p, ok, err := loginsB.finish(ctx, state); err != nil || !ok || p.verifier != "verifier" {
		t.Fatalf("a sign-in of A finished on B: %+v %v %v", p, ok, err)
	}
	if _, ok, _ := loginsA.finish(ctx, state); ok {
		t.Fatal("a sign-in finished twice")
	}
}
