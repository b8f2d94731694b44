package rpcfailover

import (
	"context"
	"errors"
	"strings"
	"testing"
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
