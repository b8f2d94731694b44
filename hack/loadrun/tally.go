package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// apiCalls counts the service's requests to the API server by verb and resource while counting
// is on (the facade's windows), and the time they took, so that the run says what one facade
// request costs the API server and how much of its latency is the API server's, watches aside.
type apiCalls struct {
	on atomic.Bool
	// writes counts every write, counting on or off (quiet reads it)
	writes atomic.Int64
	mu     sync.Mutex
	counts map[string]int
	spent  map[string]time.Duration
}

func (a *apiCalls) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			a.writes.Add(1)
		}
		if !a.on.Load() || req.URL.Query().Get("watch") == "true" {
			return rt.RoundTrip(req)
		}
		start := time.Now()
		resp, err := rt.RoundTrip(req)
		k := req.Method + " " + resourceOf(req.URL.Path)
		a.mu.Lock()
		a.counts[k]++
		a.spent[k] += time.Since(start)
		a.mu.Unlock()
		return resp, err
	})
}

// resourceOf names the resource (and subresource) of an API path: /apis/g/v/namespaces/ns/r/n/s
// gives r/s.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if parts[0] == "api" {
		parts = parts[2:]
	} else if len(parts) > 3 {
		parts = parts[3:]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		parts = parts[2:]
	}
	if len(parts) == 3 {
		return parts[0] + "/" + parts[2]
	}
	return parts[0]
}

// per prints the counts divided by n with the mean time of each request, and clears them.
func (a *apiCalls) per(n int64) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	keys := make([]string, 0, len(a.counts))
	for k := range a.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		mean := a.spent[k] / time.Duration(a.counts[k])
		fmt.Fprintf(&b, "  %-40s %6.2f  (mean %v)\n", k, float64(a.counts[k])/float64(max(n, 1)), mean.Round(10*time.Microsecond))
	}
	a.counts, a.spent = map[string]int{}, map[string]time.Duration{}
	return b.String()
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// quiet waits until the service writes to the API server at most 15 times a second (its
// heartbeats and renewals go on, and the keys' last-use writes of an earlier phase, paced at 10 a
// second), once the controllers' and the event recorder's backlog of
// the fixtures is written (a status per key, an event per stored transfer), so that no window
// measures that backlog.
func (a *apiCalls) quiet(ctx context.Context) error {
	start, before := time.Now(), a.writes.Load()
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, false, func(context.Context) (bool, error) {
		now := a.writes.Load()
		settled := now-before <= 30
		before = now
		return settled, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("the service kept writing to the API server for 10 minutes")
	}
	if err == nil {
		fmt.Printf("the service's writes to the API server settled in %v\n", time.Since(start).Round(100*time.Millisecond))
	}
	return err
}
