// Package simkyc simulates the KYC vendor for `make run` and the tests, as simbank simulates the
// bank: the wallet verification site sends a user whose wallet is proven to its start page,
// the page offers to approve or reject the identity check (no documents: this is a simulation),
// and the choice is sent to the site as the vendor's signed callback (docs/kyc-site.md) before
// the browser goes back to the site. It is a test double of a commercial service that cannot run
// here.
package simkyc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/kycsite"
)

// Options configure the simulated vendor.
type Options struct {
	// Addr is the listen address, e.g. 127.0.0.1:0.
	Addr string
	// CallbackURL is the site's callback (its origin + /vendor/callback).
	CallbackURL string
	// Secret signs the callbacks (the site's vendor secret).
	Secret []byte
}

// Server is a running simulated vendor.
type Server struct {
	opts Options
	l    net.Listener
	srv  *http.Server
	hc   *http.Client
}

// Start listens and serves.
func Start(opts Options) (*Server, error) {
	l, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, l: l, hc: &http.Client{Timeout: 10 * time.Second}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /start", s.handleStart)
	mux.HandleFunc("POST /decide", s.handleDecide)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// URL is the vendor's start page.
func (s *Server) URL() string { return "http://" + s.l.Addr().String() + "/start" }

// Close stops the vendor.
func (s *Server) Close() error { return s.srv.Close() }

var page = template.Must(template.New("start").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Identity check (simulated vendor)</title></head>
<body><main><h1>Identity check</h1>
<p>This is the simulated KYC vendor of a local run: no documents are asked for.</p>
<form method="post" action="/decide">
<input type="hidden" name="session" value="{{.Session}}">
<input type="hidden" name="return" value="{{.Return}}">
<button type="submit" name="result" value="approved">Approve</button>
<button type="submit" name="result" value="rejected">Reject</button>
</form></main></body></html>
`))

func (s *Server) handleStart(w http.ResponseWriter, r *http.Request) {
	// a form's redirect is held to form-action too: the decision's redirect back to the site
	// needs the site's origin there, or the browser stays on /decide
	formAction := "'self'"
	if back, err := url.Parse(r.URL.Query().Get("return")); err == nil && (back.Scheme == "http" || back.Scheme == "https") && back.Host != "" &&
		!strings.ContainsAny(back.Host, " ;,'") {
		formAction += " " + back.Scheme + "://" + back.Host
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action "+formAction+"; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, map[string]string{"Session": r.URL.Query().Get("session"), "Return": r.URL.Query().Get("return")})
}

// handleDecide sends the decision to the site, then sends the browser back to it.
func (s *Server) handleDecide(w http.ResponseWriter, r *http.Request) {
	result := r.FormValue("result")
	if result != "approved" {
		result = "rejected"
	}
	if err := s.Decide(r.FormValue("session"), result); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	back, err := url.Parse(r.FormValue("return"))
	if err != nil || (back.Scheme != "http" && back.Scheme != "https") {
		fmt.Fprintf(w, "identity check %s\n", result)
		return
	}
	http.Redirect(w, r, back.String(), http.StatusSeeOther)
}

// Decide sends the callback of a decision on session, signed, as the vendor would.
func (s *Server) Decide(session, result string) error {
	id := make([]byte, 12)
	if _, err := rand.Read(id); err != nil {
		return err
	}
	body, err := json.Marshal(kycsite.Callback{EventID: "sim-" + hex.EncodeToString(id), Session: session, Result: result})
	if err != nil {
		return err
	}
	now := time.Now()
	req, err := http.NewRequest(http.MethodPost, s.opts.CallbackURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(kycsite.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(kycsite.HeaderSignature, kycsite.SignCallback(s.opts.Secret, now, body))
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("the site refused the callback: %d %s", resp.StatusCode, strings.TrimSpace(e.Error))
	}
	return nil
}
