package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// writeCounter counts the API-server writes payoutd makes (create, update, patch, delete), by
// resource: the counting client of the lifecycle measurements. It wraps the transport of every
// client payoutd builds from its rest.Config — the manager's, the facade's and the event
// recorder's. A write the API server refused (a conflict) wrote nothing and is counted apart.
// Claims are cluster-scoped: a claim's writes belong to the namespace of its holder, read from
// the create's body, so the claim controller's work on other specs' claims is not counted.
type writeCounter struct {
	mu        sync.Mutex
	writes    []write
	holders   map[string]string // claim name → its holder's namespace
	conflicts int
}

type write struct {
	verb, path string
	namespace  string // of the object, or of a claim's holder ("" when not known)
}

func (c *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet {
			return rt.RoundTrip(req)
		}
		var claim *payoutv1.Claim
		if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/claims") && req.GetBody != nil {
			if body, err := req.GetBody(); err == nil {
				claim = &payoutv1.Claim{}
				if json.NewDecoder(body).Decode(claim) != nil {
					claim = nil
				}
				body.Close()
			}
		}
		resp, err := rt.RoundTrip(req)
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil || resp.StatusCode >= 300 {
			c.conflicts++
			return resp, err
		}
		w := write{verb: req.Method, path: req.URL.Path, namespace: namespaceOf(req.URL.Path)}
		if strings.Contains(req.URL.Path, "/claims") {
			if claim != nil {
				if c.holders == nil {
					c.holders = map[string]string{}
				}
				c.holders[claim.Name] = claim.Spec.Holder.Namespace
				w.namespace = claim.Spec.Holder.Namespace
			} else {
				w.namespace = c.holders[path.Base(req.URL.Path)]
			}
		}
		c.writes = append(c.writes, w)
		return resp, err
	})
}

// namespaceOf is the namespace of a namespaced API path, "" for a cluster-scoped one.
func namespaceOf(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range parts {
		if s == "namespaces" && i+1 < len(parts) {
			return parts[i+1]
		}
	}
	return ""
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *writeCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes, c.conflicts = nil, 0
}

// refused is the number of writes the API server refused (conflicts), of every namespace.
func (c *writeCounter) refused() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conflicts
}

// of returns the writes that belong to the account's namespace (its objects, and the claims its
// objects hold), grouped by verb and resource, and its events apart.
func (c *writeCounter) of(namespace string) (byKind map[string]int, total, events int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byKind = map[string]int{}
	for _, w := range c.writes {
		if w.namespace != namespace {
			continue
		}
		if strings.Contains(w.path, "/events") {
			events++
			continue
		}
		byKind[w.verb+" "+resourceOf(w.path)]++
		total++
	}
	return byKind, total, events
}

// resourceOf is "transfers", "transfers/status", ... of an API path.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			rest := parts[i+2:]
			if len(rest) >= 3 {
				return rest[0] + "/" + rest[2]
			}
			return rest[0]
		}
	}
	// cluster-scoped: /apis/GROUP/VERSION/RESOURCE[/NAME]
	if len(parts) >= 4 && parts[0] == "apis" {
		return parts[3]
	}
	return path
}

func table(byKind map[string]int) string {
	keys := make([]string, 0, len(byKind))
	for k := range byKind {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-40s %d\n", k, byKind[k])
	}
	return b.String()
}

var _ = Describe("API-server writes of a transfer's lifecycle, counted", Ordered, func() {
	var (
		counter *writeCounter
		acct    *account
	)
	BeforeAll(func() {
		counter = &writeCounter{}
		cfg := rest.CopyConfig(env.Config)
		cfg.Wrap(counter.wrap)
		acct = newAccount(startInProcess(cfg))
	})

	// waitQuiet waits until the account's writes stop for a while: the lifecycle is over.
	waitQuiet := func() {
		GinkgoHelper()
		last := -1
		Eventually(func() bool {
			_, n, _ := counter.of(payoutv1.AccountNamespace(acct.name))
			quiet := n == last
			last = n
			return quiet
		}).WithPolling(3 * time.Second).WithTimeout(60 * time.Second).Should(BeTrue())
	}

	// The outcome mail is stored as pending with the outcome, then recorded as sent in a write of
	// its own (issue 22: no side effect before the status that decided it is stored): one write
	// more than before per lifecycle.
	It("is at most 8 for a v1 transfer, from its create to its recipient's deletion", func() {
		rid := acct.recipient("Counted Payee")
		q := acct.quote("25.00")
		waitQuiet()
		counter.reset()
		tr := acct.must(200, "POST", "/api/payouts/transfer", transferBody(q, "25.00", rid, false))["transfer"].(map[string]any)
		deposit(tr["deposit_address"].(string), "25.00")
		Eventually(func() string { s, _ := acct.status(tr["id"].(string)); return s }).Should(Equal("completed"))
		Eventually(func() int {
			_, n := acct.call("GET", fmt.Sprintf("/api/payouts/recipients/%d", rid), nil)
			if n["active"] == false {
				return 1
			}
			return 0
		}).Should(Equal(1))
		waitQuiet()
		byKind, total, events := counter.of(payoutv1.AccountNamespace(acct.name))
		AddReportEntry("v1 lifecycle writes", fmt.Sprintf("%d writes (+%d events, %d refused):\n%s", total, events, counter.refused(), table(byKind)))
		GinkgoWriter.Printf("v1 lifecycle: %d writes (+%d events)\n%s", total, events, table(byKind))
		Expect(total).To(BeNumerically("<=", 8), table(byKind))
	})

	It("is measured for a v2 transfer, from its create to its recipient's deletion", func() {
		rid := acct.recipient("Counted Payee Two")
		q := acct.quote("25.00")
		waitQuiet()
		counter.reset()
		body := transferBody(q, "25.00", rid, false)
		m := acct.must(200, "POST", "/api/payouts/transfer/v2", body)
		id := m["transfer_id"].(string)
		hash := deposit(m["deposit_address"].(string), "25.00")
		acct.must(200, "POST", "/api/payouts/transfer/v2/confirm-transfer", map[string]any{"transfer_id": id, "tx_hash": hash.Hex()})
		Eventually(func() string { s, _ := acct.status(id); return s }).Should(Equal("completed"))
		waitQuiet()
		byKind, total, events := counter.of(payoutv1.AccountNamespace(acct.name))
		AddReportEntry("v2 lifecycle writes", fmt.Sprintf("%d writes (+%d events, %d refused):\n%s", total, events, counter.refused(), table(byKind)))
		GinkgoWriter.Printf("v2 lifecycle: %d writes (+%d events)\n%s", total, events, table(byKind))
		// 13: the claims are the customer_uuid's, the hash's and the deposit log's (one transaction
		// pays one transfer, even once the hash claim is gone: issue 23)
		Expect(total).To(BeNumerically("<=", 13), table(byKind))
	})
})
