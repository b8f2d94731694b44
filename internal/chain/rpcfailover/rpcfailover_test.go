package rpcfailover

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fake is an endpoint's client in these tests: its URL, as dialled.
type fake struct{ url string }

func TestFailover(t *testing.T) {
	ctx := context.Background()
	down := map[string]bool{}
	var dials, verifies, closes int
	p, err := New([]string{"http://a.example/KEY", "http://b.example/KEY"}, Funcs[*fake]{
		Dial:  func(_ context.Context, url string) (*fake, error) { dials++; return &fake{url}, nil },
		Close: func(*fake) { closes++ },
		Verify: func(_ context.Context, c *fake, _ Endpoint) (string, error) {
			verifies++
			return "id of " + c.url, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	call := func(_ context.Context, c *fake, ep Endpoint) (bool, error) {
		if down[c.url] {
			return true, errors.New(ep.StripURL("post " + c.url + ": refused"))
		}
		return false, nil
	}
	if err := p.Do(ctx, call); err != nil || p.Endpoint() != "http://a.example" || p.Identity() != "id of http://a.example/KEY" {
		t.Fatalf("first call: %v on %s (%s)", err, p.Endpoint(), p.Identity())
	}
	if err := p.Do(ctx, call); err != nil || dials != 1 || verifies != 1 {
		t.Fatalf("second call: %v, %d dials, %d verifications, want one of each", err, dials, verifies)
	}

	down["http://a.example/KEY"] = true
	if err := p.Do(ctx, call); err != nil || p.Endpoint() != "http://b.example" || closes != 1 {
		t.Fatalf("a down: %v on %s, %d closed", err, p.Endpoint(), closes)
	}
	down["http://b.example/KEY"] = true
	err = p.Do(ctx, call)
	if err == nil || !strings.Contains(err.Error(), "http://b.example: post http://b.example: refused") {
		t.Fatalf("both down: %v, want b's error", err)
	}
	err = p.Do(ctx, call)
	if !errors.Is(err, ErrNoEndpoint) {
		t.Fatalf("while backing off: %v, want ErrNoEndpoint", err)
	}
	if msg := err.Error(); msg == "" || strings.Contains(msg, "KEY") {
		t.Fatalf("error %q shows the URL's path", msg)
	}
	p.Close()
}

// heads is a network of endpoints for Head: each URL's head, and how often each was read.
type heads struct {
	head  map[string]int64
	reads map[string]int
	now   time.Time
}

func newHeads(t *testing.T, urls ...string) (*heads, *Pool[*fake]) {
	t.Helper()
	h := &heads{head: map[string]int64{}, reads: map[string]int{}, now: time.Unix(1_700_000_000, 0)}
	p, err := New(urls, Funcs[*fake]{
		Dial:   func(_ context.Context, url string) (*fake, error) { return &fake{url}, nil },
		Close:  func(*fake) {},
		Verify: func(context.Context, *fake, Endpoint) (string, error) { return "", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	p.now = func() time.Time { return h.now }
	p.SetStallAfter(10 * time.Second)
	return h, p
}

func (h *heads) read(_ context.Context, c *fake, _ Endpoint) (int64, bool, error) {
	h.reads[c.url]++
	return h.head[c.url], false, nil
}

// poll advances the clock by d and reads the head once.
func (h *heads) poll(t *testing.T, p *Pool[*fake], d time.Duration) int64 {
	t.Helper()
	h.now = h.now.Add(d)
	head, err := p.Head(context.Background(), h.read)
	if err != nil {
		t.Fatal(err)
	}
	return head
}

func TestHeadOfAHealthyEndpointReadsNoOther(t *testing.T) {
	h, p := newHeads(t, "http://a", "http://b")
	for i := range 100 {
		h.head["http://a"] = int64(100 + i/3) // a block every three polls
		if got := h.poll(t, p, time.Second); got != h.head["http://a"] {
			t.Fatalf("poll %d: head %d, want a's %d", i, got, h.head["http://a"])
		}
	}
	if h.reads["http://b"] != 0 || h.reads["http://a"] != 100 {
		t.Fatalf("reads %v: a healthy first endpoint must cost nothing on the others", h.reads)
	}
	// a still head with no other endpoint ahead (the chain itself halted) reads the others once
	// per window, and fails nothing over
	h.head["http://b"] = h.head["http://a"]
	for range 30 {
		h.poll(t, p, time.Second)
	}
	if h.reads["http://b"] != 3 || p.Endpoint() != "http://a" {
		t.Fatalf("halted chain: %d reads of b in 30 s (want 3, one per 10 s window), endpoint %s", h.reads["http://b"], p.Endpoint())
	}
}

// stallFirst reads both endpoints at block 100, then for seconds polls a second apart a stays
// there while b moves a block a poll; it returns the last head read.
func (h *heads) stallFirst(t *testing.T, p *Pool[*fake], seconds int) int64 {
	t.Helper()
	h.head["http://a"], h.head["http://b"] = 100, 100
	head := h.poll(t, p, time.Second)
	for i := range seconds {
		h.head["http://b"] = int64(101 + i)
		head = h.poll(t, p, time.Second)
	}
	return head
}

func TestStalledEndpointIsFailedOver(t *testing.T) {
	h, p := newHeads(t, "http://a", "http://b")
	// a stops at 100 while the network (b) moves on
	if got := h.stallFirst(t, p, 9); got != 100 {
		t.Fatalf("within the stall window: head %d, want a's 100", got)
	}
	if h.reads["http://b"] != 0 {
		t.Fatalf("b read %d times before a's head had stayed still for the window", h.reads["http://b"])
	}
	h.head["http://b"] = 110
	if got := h.poll(t, p, time.Second); got != 110 || p.Endpoint() != "http://b" {
		t.Fatalf("after 10 s still: head %d from %s, want b's 110", got, p.Endpoint())
	}
	// ordinary calls go to b too, while a is behind
	var used string
	if err := p.Do(context.Background(), func(_ context.Context, c *fake, _ Endpoint) (bool, error) { used = c.url; return false, nil }); err != nil || used != "http://b" {
		t.Fatalf("a call after the failover went to %s (%v)", used, err)
	}
	// a is read again only once its backoff (1 s, then 2 s, ...) has passed, and stays behind
	// while it has not moved
	aReads := h.reads["http://a"]
	for i := range 10 {
		h.head["http://b"] = int64(111 + i)
		h.poll(t, p, 500*time.Millisecond)
	}
	if n := h.reads["http://a"] - aReads; n < 2 || n > 3 || p.Endpoint() != "http://b" {
		t.Fatalf("a read %d times in 5 s while stalled (want 2-3: backoff 1 s, 2 s, 4 s); endpoint %s", n, p.Endpoint())
	}
	// a catches up: it is used again
	h.head["http://a"] = 125
	for range 10 {
		h.head["http://b"]++
		h.poll(t, p, time.Second)
	}
	if p.Endpoint() != "http://a" {
		t.Fatalf("a caught up and is still not used (endpoint %s)", p.Endpoint())
	}
}

func TestLaggingEndpointIsFailedOver(t *testing.T) {
	h, p := newHeads(t, "http://a", "http://b")
	// a stalls and is failed over to b, which is then read every second
	h.stallFirst(t, p, 12)
	if p.Endpoint() != "http://b" {
		t.Fatal("a stalled node was not failed over")
	}
	// a moves again, but slowly: it never reaches where b was ten seconds earlier
	for i := range 60 {
		h.head["http://a"] = 100 + int64(i)/4
		h.head["http://b"] = 113 + int64(i)
		h.poll(t, p, time.Second)
		if p.Endpoint() != "http://b" {
			t.Fatalf("second %d: the lagging a (at %d, b at %d) is used again", i, h.head["http://a"], h.head["http://b"])
		}
	}
}

// TestDoOther: a second opinion is asked of another endpoint than the one that answered, never
// of that one, without changing the endpoint in use; with no other usable endpoint the answer
// is ErrNoEndpoint.
func TestDoOther(t *testing.T) {
	ctx := context.Background()
	down := map[string]bool{}
	p, err := New([]string{"http://a", "http://b", "http://c"}, Funcs[*fake]{
		Dial:   func(_ context.Context, url string) (*fake, error) { return &fake{url}, nil },
		Close:  func(*fake) {},
		Verify: func(context.Context, *fake, Endpoint) (string, error) { return "", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	var used []string
	call := func(_ context.Context, c *fake, _ Endpoint) (bool, error) {
		used = append(used, c.url)
		if down[c.url] {
			return true, errors.New("refused")
		}
		return false, nil
	}
	first, err := p.DoAt(ctx, call)
	if err != nil || first.Display() != "http://a" {
		t.Fatalf("DoAt answered from %q (%v)", first.Display(), err)
	}
	second, err := p.DoOther(ctx, first, call)
	if err != nil || second.Display() != "http://b" || p.Endpoint() != "http://a" {
		t.Fatalf("DoOther answered from %q (%v); endpoint in use %s", second.Display(), err, p.Endpoint())
	}
	// b fails: c answers; a is never asked for a second opinion on itself
	down["http://b"] = true
	used = nil
	if other, err := p.DoOther(ctx, first, call); err != nil || other.Display() != "http://c" || strings.Join(used, " ") != "http://b http://c" {
		t.Fatalf("DoOther with b down: %q (%v), asked %v", other.Display(), err, used)
	}
	down["http://c"] = true
	used = nil
	if _, err := p.DoOther(ctx, first, call); !errors.Is(err, ErrNoEndpoint) || strings.Contains(strings.Join(used, " "), "http://a") {
		t.Fatalf("DoOther with the others down: %v, asked %v", err, used)
	}
	alone, _ := New([]string{"http://a"}, Funcs[*fake]{
		Dial:   func(_ context.Context, url string) (*fake, error) { return &fake{url}, nil },
		Close:  func(*fake) {},
		Verify: func(context.Context, *fake, Endpoint) (string, error) { return "", nil },
	})
	if _, err := alone.DoOther(ctx, first, call); !errors.Is(err, ErrNoEndpoint) || alone.Len() != 1 || p.Len() != 3 {
		t.Fatalf("DoOther of a single endpoint: %v", err)
	}
}
