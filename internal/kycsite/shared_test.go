package kycsite

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/go-logr/logr"

	"github.com/stablepay/payout-operator/internal/sharedlimits"
	"github.com/stablepay/payout-operator/test/testredis"
)

// replicas are two sites of one public URL (two replicas behind a balancer) whose nonces are
// in the same Redis.
func replicas(t *testing.T) (a, b *site) {
	redisSrv := testredis.StartForTest(t)
	open := func() SharedNonces {
		st, err := sharedlimits.Open(sharedlimits.Config{Addr: redisSrv.Addr()}, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return SharedNonces{Values: st.Values("kyc:nonce")}
	}
	a = newSite(t)
	na := open()
	na.Now = a.clock.Now
	a.s.cfg.Nonces = na
	// B is configured with A's URL: its messages name the same domain
	hs := httptest.NewUnstartedServer(nil)
	sb, err := New(Config{Client: k8s, URL: a.s.cfg.URL, ChainID: 1, LinkKey: linkKey, Vendor: a.s.cfg.Vendor, Clock: a.clock})
	if err != nil {
		t.Fatal(err)
	}
	nb := open()
	nb.Now = a.clock.Now
	sb.cfg.Nonces = nb
	hs.Config.Handler = sb.Handler()
	hs.Start()
	t.Cleanup(hs.Close)
	return a, &site{t: t, srv: hs, s: sb, clock: a.clock, vendor: a.vendor}
}

// A nonce issued by one replica is accepted once by another and refused the second time,
// whichever replica it reaches.
func TestSharedNoncesAcrossReplicas(t *testing.T) {
	needCluster(t)
	a, b := replicas(t)
	link := account(t, "siwe-shared", false)
	key, _ := crypto.GenerateKey()
	text := a.challenge(link, key)
	sig := signAs(t, key, text)
	if code, out := b.prove(link, text, sig); code != http.StatusOK {
		t.Fatalf("a challenge of replica A proven on B: %d %v", code, out)
	}
	if wallet(t, "siwe-shared", key) == nil {
		t.Fatal("the proof on B recorded no wallet")
	}
	for name, r := range map[string]*site{"B": b, "A": a} {
		if code, out := r.prove(link, text, sig); code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error"]), "nonce is unknown, used") {
			t.Errorf("the nonce used on B, again on %s: %d %v", name, code, out)
		}
	}
}
