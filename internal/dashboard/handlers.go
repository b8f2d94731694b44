package dashboard

import (
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/index"
)

func (d *Dashboard) routes() *http.ServeMux {
	mux := http.NewServeMux()
	p := d.base.Path
	mux.HandleFunc("GET "+p+"{$}", d.handleHome)
	mux.HandleFunc("GET "+p+"login", d.handleLogin)
	mux.HandleFunc("GET "+p+"callback", d.handleCallback)
	mux.HandleFunc("POST "+p+"logout", d.signedIn(d.handleLogout))
	mux.HandleFunc("GET "+p+"keys", d.signedIn(d.handleKeys))
	mux.HandleFunc("POST "+p+"keys", d.signedIn(d.handleKeyCreate))
	mux.HandleFunc("POST "+p+"keys/{id}/revoke", d.signedIn(d.handleKeyRevoke))
	mux.HandleFunc("POST "+p+"token", d.signedIn(d.handleToken))
	mux.HandleFunc("GET "+p+"recipients", d.signedIn(d.handleRecipients))
	// one level under the base, so that the layout's relative links hold (the CSP allows no <base>)
	mux.HandleFunc("GET "+p+"recipient", d.signedIn(d.handleRecipientForm))
	mux.HandleFunc("POST "+p+"recipient", d.signedIn(d.handleRecipientPost))
	mux.HandleFunc("POST "+p+"recipient-delete", d.signedIn(d.handleRecipientDelete))
	mux.HandleFunc("GET "+p+"transfers", d.signedIn(d.handleTransfers))
	mux.HandleFunc("GET "+p+"transfer-new", d.signedIn(d.handleTransferNew))
	mux.HandleFunc("POST "+p+"transfer-new", d.signedIn(d.handleTransferCreate))
	mux.HandleFunc("GET "+p+"transfer", d.signedIn(d.handleTransfer))
	mux.HandleFunc("GET "+p+"transfer-status", d.signedIn(d.handleTransferStatus))
	mux.HandleFunc("GET "+p+"transfer-qr", d.signedIn(d.handleTransferQR))
	mux.HandleFunc("POST "+p+"transfer-confirm", d.signedIn(d.handleTransferConfirm))
	mux.HandleFunc("GET "+p+"static/{version}/{file}", serveStatic)
	return mux
}

// sessionHandler is a page of a signed-in user.
type sessionHandler func(w http.ResponseWriter, r *http.Request, s *session)

// signedIn runs h for the request's live session whose account is still the one it signed in
// to; a POST also needs the session's CSRF token. Without a session a page redirects to the
// start page, a POST is refused.
func (d *Dashboard) signedIn(h sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		var s *session
		if c, err := r.Cookie(d.cookie); err == nil {
			if s, err = d.sessions.get(r.Context(), c.Value); err != nil {
				d.unavailable(w, err, "reading a session")
				return
			}
		}
		if s != nil {
			// an account deleted, or made again under its name, since the sign-in is not
			// this session's any more
			acct, err := d.account(r.Context(), s.account)
			if err != nil {
				d.cfg.Log.Error(err, "reading a session's account", "account", s.account)
				http.Error(w, "the dashboard is unavailable at the moment; retry shortly", http.StatusServiceUnavailable)
				return
			}
			if acct == nil || string(acct.UID) != s.accountUID {
				if err := d.sessions.end(r.Context(), s.id); err != nil {
					d.unavailable(w, err, "ending a session")
					return
				}
				s = nil
			}
		}
		if s == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, d.path(""), http.StatusSeeOther)
				return
			}
			http.Error(w, "not signed in", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet && !validCSRF(r, s) {
			http.Error(w, "missing or invalid CSRF token: reload the page", http.StatusForbidden)
			return
		}
		h(w, r, s)
	}
}

func (d *Dashboard) handleHome(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(d.cookie); err == nil {
		if s, err := d.sessions.get(r.Context(), c.Value); err == nil && s != nil {
			http.Redirect(w, r, d.path("keys"), http.StatusSeeOther)
			return
		}
	}
	d.render(w, "signin", page{Title: "Sign in"})
}

// loginCookie carries a pending sign-in's state from the redirect to the callback. SameSite=Lax,
// not Strict: the callback is a navigation from the provider's site, on which a Strict cookie
// is not sent. It grants nothing by itself: the code must come back with the same state.
const loginCookie = "payout_login"

func (d *Dashboard) handleLogin(w http.ResponseWriter, r *http.Request) {
	conf, _, err := d.oauth(r.Context())
	if err != nil {
		d.cfg.Log.Error(err, "starting a sign-in")
		http.Error(w, "the identity provider cannot be reached at the moment; retry shortly", http.StatusServiceUnavailable)
		return
	}
	nonce, verifier := randomID(), oauth2.GenerateVerifier()
	state, err := d.logins.start(r.Context(), nonce, verifier)
	if errors.Is(err, errTooMany) {
		http.Error(w, "too many sign-ins in progress; retry shortly", http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		d.unavailable(w, err, "starting a sign-in")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: state, Path: d.path("callback"), MaxAge: int(loginTTL / time.Second),
		HttpOnly: true, Secure: d.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, conf.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusFound)
}

func (d *Dashboard) handleCallback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	state := r.URL.Query().Get("state")
	c, err := r.Cookie(loginCookie)
	if err != nil || state == "" || c.Value != state {
		// a callback this browser did not start (login CSRF)
		http.Error(w, "this sign-in was not started here: start again", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: d.path("callback"), MaxAge: -1, HttpOnly: true, Secure: d.secure, SameSite: http.SameSiteLaxMode})
	pending, ok, err := d.logins.finish(r.Context(), state)
	if err != nil {
		d.unavailable(w, err, "finishing a sign-in")
		return
	}
	if !ok {
		http.Error(w, "this sign-in has expired or was used: start again", http.StatusBadRequest)
		return
	}
	if msg := r.URL.Query().Get("error"); msg != "" {
		http.Error(w, "the identity provider refused the sign-in: "+msg, http.StatusForbidden)
		return
	}
	conf, verifier, err := d.oauth(r.Context())
	if err != nil {
		d.cfg.Log.Error(err, "finishing a sign-in")
		http.Error(w, "the identity provider cannot be reached at the moment; retry shortly", http.StatusServiceUnavailable)
		return
	}
	ctx := oidc.ClientContext(r.Context(), d.cfg.HTTPClient)
	tok, err := conf.Exchange(ctx, r.URL.Query().Get("code"), oauth2.VerifierOption(pending.verifier))
	if err != nil {
		d.cfg.Log.Info("a sign-in's code was refused", "error", err.Error())
		http.Error(w, "the sign-in failed: start again", http.StatusForbidden)
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := verifier.Verify(ctx, raw)
	if err != nil || idt.Nonce != pending.nonce {
		http.Error(w, "the sign-in failed: start again", http.StatusForbidden)
		return
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		http.Error(w, "the sign-in failed: start again", http.StatusForbidden)
		return
	}
	name, _ := claims[d.cfg.AccountClaim].(string)
	if name == "" {
		http.Error(w, "your identity names no payout account (claim "+d.cfg.AccountClaim+"): ask your administrator", http.StatusForbidden)
		return
	}
	acct, err := d.account(r.Context(), name)
	if err != nil {
		d.cfg.Log.Error(err, "reading a signing-in user's account", "account", name)
		http.Error(w, "the dashboard is unavailable at the moment; retry shortly", http.StatusServiceUnavailable)
		return
	}
	if acct == nil {
		http.Error(w, "your payout account does not exist: ask your administrator", http.StatusForbidden)
		return
	}
	// a session made now, whatever cookie the browser brought (session fixation)
	if old, err := r.Cookie(d.cookie); err == nil {
		if err := d.sessions.end(r.Context(), old.Value); err != nil {
			d.unavailable(w, err, "ending a session")
			return
		}
	}
	s, err := d.sessions.create(r.Context(), idt.Issuer+" "+idt.Subject, acct.Name, string(acct.UID))
	if errors.Is(err, errTooMany) {
		http.Error(w, "too many sessions; retry shortly", http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		d.unavailable(w, err, "making a session")
		return
	}
	d.setSessionCookie(w, s.id, int(d.cfg.AbsoluteTimeout/time.Second))
	d.cfg.Log.Info("signed in", "account", acct.Name, "subject", idt.Subject)
	// a page, not a redirect: the redirect would still be the provider's cross-site navigation,
	// on which the SameSite=Strict session cookie is not sent
	d.render(w, "signedin", page{Title: "Signed in", Next: d.path("keys")})
}

func (d *Dashboard) setSessionCookie(w http.ResponseWriter, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: d.cookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: d.secure, SameSite: http.SameSiteStrictMode})
}

func (d *Dashboard) handleLogout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := d.sessions.end(r.Context(), s.id); err != nil {
		// the session lives on: saying "signed out" would be a lie
		d.unavailable(w, err, "ending a session")
		return
	}
	d.setSessionCookie(w, "", -1)
	d.render(w, "signedout", page{Title: "Signed out"})
}

// keyRow is one key of the developer area.
type keyRow struct {
	ID      string
	Created time.Time
	// LastUsed is when the facade last saw the key authenticate, to the minute
	// (internal/keyuse); zero when it never did since the record began.
	LastUsed time.Time
	Revoked  bool
}

func (d *Dashboard) handleKeys(w http.ResponseWriter, r *http.Request, s *session) {
	d.renderKeys(w, r, s, "", http.StatusOK)
}

func (d *Dashboard) renderKeys(w http.ResponseWriter, r *http.Request, s *session, newKey string, status int) {
	var list payoutv1.APIKeyList
	if err := d.cfg.Client.List(r.Context(), &list, client.MatchingFields{index.APIKeyAccount: s.account}); err != nil {
		d.cfg.Log.Error(err, "listing an account's API keys", "account", s.account)
		http.Error(w, "the dashboard is unavailable at the moment; retry shortly", http.StatusServiceUnavailable)
		return
	}
	rows := make([]keyRow, 0, len(list.Items))
	for _, k := range list.Items {
		// only the keys issued to this account, not to an earlier one of its name
		if k.Spec.AccountUID != "" && k.Spec.AccountUID != s.accountUID {
			continue
		}
		used, _ := k.LastUsed()
		rows = append(rows, keyRow{ID: k.Name, Created: k.CreationTimestamp.UTC(), LastUsed: used.UTC(), Revoked: k.Spec.Revoked})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Created.After(rows[j].Created) })
	w.WriteHeader(status)
	d.render(w, "keys", page{Title: "Developer area", Session: s, Keys: rows, NewKey: newKey})
}

func (d *Dashboard) handleKeyCreate(w http.ResponseWriter, r *http.Request, s *session) {
	// the same issue as kubectl payout apikey create: bound to the account's UID
	full, id, err := admin.IssueKey(r.Context(), d.cfg.Client, s.account)
	if err != nil {
		d.cfg.Log.Error(err, "issuing an API key", "account", s.account)
		http.Error(w, "the key could not be created; retry shortly", http.StatusServiceUnavailable)
		return
	}
	d.cfg.Log.Info("API key issued from the dashboard", "account", s.account, "keyId", id, "subject", s.subject)
	d.renderKeys(w, r, s, full, http.StatusCreated)
}

func (d *Dashboard) handleKeyRevoke(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	key := &payoutv1.APIKey{}
	err := d.cfg.Reader.Get(r.Context(), client.ObjectKey{Name: id}, key)
	if client.IgnoreNotFound(err) != nil {
		http.Error(w, "the dashboard is unavailable at the moment; retry shortly", http.StatusServiceUnavailable)
		return
	}
	if err != nil || key.Spec.Account != s.account || (key.Spec.AccountUID != "" && key.Spec.AccountUID != s.accountUID) {
		// another account's key is answered as a missing one: ids of others are not told
		http.Error(w, "no such key", http.StatusNotFound)
		return
	}
	if err := admin.RevokeKey(r.Context(), d.cfg.Client, id); err != nil {
		d.cfg.Log.Error(err, "revoking an API key", "keyId", id)
		http.Error(w, "the key could not be revoked; retry shortly", http.StatusServiceUnavailable)
		return
	}
	d.cfg.Log.Info("API key revoked from the dashboard", "account", s.account, "keyId", id, "subject", s.subject)
	http.Redirect(w, r, d.path("keys"), http.StatusSeeOther)
}

// handleToken issues a browser token for the REST API (spec 5.6). A POST with the CSRF token:
// another site's page can neither send it nor read the answer.
func (d *Dashboard) handleToken(w http.ResponseWriter, r *http.Request, s *session) {
	now := d.cfg.Now()
	tok, err := d.cfg.Tokens.Issue(d.cfg.URL, d.cfg.TokenAudience, s.subject, s.account, s.accountUID, now, d.cfg.TokenTTL)
	if err != nil {
		d.cfg.Log.Error(err, "signing a browser token")
		http.Error(w, "the dashboard is unavailable at the moment; retry shortly", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"token": tok, "expiresAt": now.Add(d.cfg.TokenTTL).UTC().Format(time.RFC3339)})
}
