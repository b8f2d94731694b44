// Package kycsite is the wallet verification site (spec §1's {kyc_url}): an end user opens the
// link an account gave them, their browser wallet signs a Sign-In with Ethereum message
// (EIP-4361) naming the account, a one-time nonce and an expiry (EIP-1193 personal_sign), and
// the site records on the account's Wallet record that the wallet's owner proved control, with
// the message and signature for audit. Identity checks are the KYC vendor's: the site sends the
// user there and takes its signed callback (docs/kyc-site.md). The site is an http.Handler of
// its own, on its own listener (payoutd --kyc-site-bind-address), so a dashboard can sit beside
// it on another.
package kycsite

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/compliance/siwe"
)

// What the site reads and writes: the account of a link (its bindWallets setting), the
// account's Wallet record (a proof added once, the vendor's verification), and a wallet's
// binding claim when the account binds wallets. Generated into the facade's role: the site runs
// in the facade's process.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=wallets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims,verbs=get;list;watch;create

//go:embed assets
var assets embed.FS

// Defaults of Config.
const (
	DefaultChallengeTTL = 10 * time.Minute
	// DefaultSessionTTL is how long the KYC vendor has to call back about a proven wallet.
	DefaultSessionTTL = 24 * time.Hour
	// CallbackSkew is how far a vendor callback's timestamp may be from the site's clock;
	// its event id is held as long, so a replay within it is refused as a repeat and one after it
	// as stale.
	CallbackSkew = 5 * time.Minute
	maxBody      = 16 << 10
)

// CSP is the Content-Security-Policy of every answer: scripts, styles and requests from the
// site's own origin only, no inline script or style, no framing (a framed page could be
// dressed to hide what is signed), forms to the site or the vendor only.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// Vendor is the KYC vendor: where the site sends a user whose wallet is proven, and the secret
// its callbacks are signed with.
type Vendor struct {
	// URL is the vendor's start page; the site adds session and return parameters.
	URL string
	// Secret is the HMAC-SHA256 key of the callbacks.
	Secret []byte
}

// Config is the site's configuration.
type Config struct {
	// Client writes the Wallet records and claims; its reads may come from the cache.
	Client client.Client
	// APIReader reads past the cache what must be current: the wallet record written a moment
	// ago on another replica, a binding.
	APIReader client.Reader
	// URL is the site's public address (scheme://host[:port]): its host is the messages'
	// domain and URL/verify their URI.
	URL string
	// ChainID is the chain id the messages name (the wallet signs off chain; it is EIP-4361's
	// required field, 1 for Ethereum mainnet).
	ChainID int64
	// LinkKey signs the links and vendor sessions (at least 32 bytes).
	LinkKey []byte
	Vendor  Vendor
	// Nonces holds the open challenges; nil: a MemoryNonces.
	Nonces       Nonces
	ChallengeTTL time.Duration
	Clock        clock.PassiveClock
	Log          logr.Logger
}

// Server is the site.
type Server struct {
	cfg    Config
	origin *url.URL
	page   *template.Template
	// script and style are the cache-busted asset names (their content's hash).
	script, style string
	files         map[string][]byte
}

// New checks cfg and builds the site.
func New(cfg Config) (*Server, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("the site's URL %q is not an origin (scheme://host[:port])", cfg.URL)
	}
	u.Path = ""
	if len(cfg.LinkKey) < 32 {
		return nil, errors.New("the link key must be at least 32 bytes")
	}
	if cfg.ChainID <= 0 {
		cfg.ChainID = 1
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.ChallengeTTL <= 0 {
		cfg.ChallengeTTL = DefaultChallengeTTL
	}
	if cfg.Nonces == nil {
		cfg.Nonces = NewMemoryNonces(cfg.Clock.Now)
	}
	if cfg.APIReader == nil {
		cfg.APIReader = cfg.Client
	}
	s := &Server{cfg: cfg, origin: u, files: map[string][]byte{}}
	for _, name := range []string{"site.js", "site.css"} {
		data, err := assets.ReadFile("assets/" + name)
		if err != nil {
			return nil, err
		}
		sum := sha256Hex(data)[:12]
		base, ext, _ := strings.Cut(name, ".")
		hashed := base + "." + sum + "." + ext
		s.files[hashed] = data
		if ext == "js" {
			s.script = hashed
		} else {
			s.style = hashed
		}
	}
	if s.page, err = template.ParseFS(assets, "assets/page.html"); err != nil {
		return nil, err
	}
	return s, nil
}

// Domain is the messages' domain: the site's host.
func (s *Server) Domain() string { return s.origin.Host }

// VerifyURL is the messages' URI, the page a link opens.
func (s *Server) VerifyURL() string { return s.origin.String() + "/verify" }

// Link is the address of the page for a link token.
func (s *Server) Link(token string) string {
	return s.VerifyURL() + "?" + url.Values{"link": {token}}.Encode()
}

// Handler routes the site.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /verify", s.handlePage)
	mux.HandleFunc("GET /assets/{name}", s.handleAsset)
	mux.HandleFunc("POST /api/challenge", s.handleChallenge)
	mux.HandleFunc("POST /api/proof", s.handleProof)
	mux.HandleFunc("POST /vendor/callback", s.handleCallback)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		// The page's address carries the link token: no Referer may take it elsewhere.
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		mux.ServeHTTP(w, r)
	})
}

// Statement is the EIP-4361 statement of a message for account: what the wallet's owner reads
// in their wallet before signing.
func Statement(account string) string {
	return fmt.Sprintf("I control this wallet and prove it to the payout account %q. This signature moves no funds.", account)
}

type pageData struct {
	Account, Error, Script, Style, Link string
	ChainID                             int64
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	d := pageData{Script: s.script, Style: s.style, ChainID: s.cfg.ChainID}
	token := r.URL.Query().Get("link")
	account, err := ReadLink(s.cfg.LinkKey, token, s.cfg.Clock.Now())
	if err != nil {
		d.Error = err.Error()
		w.WriteHeader(http.StatusBadRequest)
	} else {
		d.Account, d.Link = account, token
	}
	if err := s.page.Execute(w, d); err != nil {
		s.cfg.Log.Error(err, "rendering the verification page")
	}
}

func (s *Server) handleAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	data, ok := s.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(name[strings.LastIndexByte(name, '.'):]))
	// the name changes with the content
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write(data)
}

// siteError is an answer other than 500: a status and a message for the user.
type siteError struct {
	status int
	msg    string
}

func (e *siteError) Error() string { return e.msg }

func refuse(status int, format string, args ...any) error {
	return &siteError{status, fmt.Sprintf(format, args...)}
}

func (s *Server) answer(w http.ResponseWriter, body any, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		var se *siteError
		status, msg := http.StatusServiceUnavailable, "the verification service cannot answer at the moment; retry shortly"
		if errors.As(err, &se) {
			status, msg = se.status, se.msg
		} else {
			s.cfg.Log.Error(err, "wallet verification site")
		}
		w.WriteHeader(status)
		body = map[string]string{"error": msg}
	}
	_ = json.NewEncoder(w).Encode(body)
}

// readJSON reads a POST of the site's script. A browser sends a cross-origin JSON POST only
// after a CORS preflight the site never grants, and an Origin other than the site's is
// refused outright: no other page can make a user's browser post here (CSRF). No cookie is
// used, so there is no ambient credential to ride on either.
func (s *Server) readJSON(r *http.Request, into any) error {
	if o := r.Header.Get("Origin"); o != "" && o != s.origin.String() {
		return refuse(http.StatusForbidden, "requests come from the verification page only")
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return refuse(http.StatusUnsupportedMediaType, "the body must be JSON")
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return refuse(http.StatusBadRequest, "the body is not the JSON expected")
	}
	return nil
}

// account reads the account a link names; a link of a deleted account is refused.
func (s *Server) account(ctx context.Context, token string) (*payoutv1.PayoutAccount, error) {
	name, err := ReadLink(s.cfg.LinkKey, token, s.cfg.Clock.Now())
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "%s", err)
	}
	acct := &payoutv1.PayoutAccount{}
	switch err := s.cfg.Client.Get(ctx, client.ObjectKey{Name: name}, acct); {
	case apierrors.IsNotFound(err):
		return nil, refuse(http.StatusNotFound, "the account of this link no longer exists")
	case err != nil:
		return nil, err
	}
	return acct, nil
}

// handleChallenge issues the message for the wallet the page connected: a fresh nonce, held
// for the link's account and this wallet until the message expires.
func (s *Server) handleChallenge(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Link    string `json:"link"`
		Address string `json:"address"`
	}
	msg, err := func() (*siwe.Message, error) {
		if err := s.readJSON(r, &req); err != nil {
			return nil, err
		}
		if !common.IsHexAddress(req.Address) || !strings.HasPrefix(req.Address, "0x") {
			return nil, refuse(http.StatusBadRequest, "address must be an Ethereum address (0x and 40 hex digits)")
		}
		acct, err := s.account(r.Context(), req.Link)
		if err != nil {
			return nil, err
		}
		nonce, err := newNonce()
		if err != nil {
			return nil, err
		}
		now := s.cfg.Clock.Now().UTC().Truncate(time.Second)
		m := &siwe.Message{Domain: s.Domain(), Address: common.HexToAddress(req.Address).Hex(), Statement: Statement(acct.Name),
			URI: s.VerifyURL(), Version: "1", ChainID: s.cfg.ChainID, Nonce: nonce,
			IssuedAt: now.Format(time.RFC3339), ExpirationTime: now.Add(s.cfg.ChallengeTTL).Format(time.RFC3339)}
		c := Challenge{Account: acct.Name, Wallet: m.Address, Expires: now.Add(s.cfg.ChallengeTTL)}
		if err := s.cfg.Nonces.Put(r.Context(), nonce, c); err != nil {
			if errors.Is(err, errFull) {
				return nil, refuse(http.StatusServiceUnavailable, "%s", err)
			}
			return nil, err
		}
		return m, nil
	}()
	if err != nil {
		s.answer(w, nil, err)
		return
	}
	s.answer(w, map[string]string{"message": msg.String()}, nil)
}

// newNonce is 128 random bits in hex: EIP-4361's alphanumeric nonce.
func newNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// proofResult is the answer to a proof.
type proofResult struct {
	Account string `json:"account"`
	Wallet  string `json:"wallet"`
	// Next is the KYC vendor's page for the identity check; empty when no vendor is configured
	// or the wallet is verified already.
	Next        string `json:"next,omitempty"`
	KYCVerified bool   `json:"kyc_verified"`
}

// handleProof checks a signed message and records the proof.
func (s *Server) handleProof(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Link      string `json:"link"`
		Message   string `json:"message"`
		Signature string `json:"signature"`
	}
	res, err := func() (*proofResult, error) {
		if err := s.readJSON(r, &req); err != nil {
			return nil, err
		}
		acct, err := s.account(r.Context(), req.Link)
		if err != nil {
			return nil, err
		}
		signer, err := s.check(r.Context(), acct.Name, req.Message, req.Signature)
		if err != nil {
			return nil, err
		}
		return s.record(r.Context(), acct, req.Message, req.Signature, signer)
	}()
	s.answer(w, res, err)
}

// check applies the rules of a proof in order: the message parses strictly, is for this site
// (domain and URI: a message signed for another site proves nothing here, and one of ours
// replayed elsewhere is refused there by the same rule), on our chain id, for the link's
// account, unexpired, with a nonce the site issued for this account and this wallet and not
// used; the signature recovers the message's address; and only then the nonce is used, so a
// bad signature does not burn a nonce that another request holds. It returns the signer.
func (s *Server) check(ctx context.Context, account, text, signature string) (common.Address, error) {
	m, err := siwe.Parse(text)
	if err != nil {
		return common.Address{}, refuse(http.StatusBadRequest, "the message is not a Sign-In with Ethereum message: %s", err)
	}
	now := s.cfg.Clock.Now()
	switch {
	case m.Domain != s.Domain():
		return common.Address{}, refuse(http.StatusBadRequest, "the message was made for %s, not this site", m.Domain)
	case m.URI != s.VerifyURL():
		return common.Address{}, refuse(http.StatusBadRequest, "the message's URI is not this site's page")
	case m.ChainID != s.cfg.ChainID:
		return common.Address{}, refuse(http.StatusBadRequest, "the message is for chain %d, not %d", m.ChainID, s.cfg.ChainID)
	case m.Statement != Statement(account):
		return common.Address{}, refuse(http.StatusBadRequest, "the message does not name the account of this link")
	case m.ExpirationTime == "":
		return common.Address{}, refuse(http.StatusBadRequest, "the message has no expiration time")
	case !now.Before(siwe.Time(m.ExpirationTime)):
		return common.Address{}, refuse(http.StatusBadRequest, "the message expired: sign a new one")
	case m.NotBefore != "" && now.Before(siwe.Time(m.NotBefore)):
		return common.Address{}, refuse(http.StatusBadRequest, "the message is not valid yet")
	}
	c, ok, err := s.cfg.Nonces.Peek(ctx, m.Nonce)
	switch {
	case err != nil:
		return common.Address{}, err
	case !ok:
		return common.Address{}, refuse(http.StatusBadRequest, "the message's nonce is unknown, used or expired: sign a new message")
	case c.Account != account || c.Wallet != m.Address:
		return common.Address{}, refuse(http.StatusBadRequest, "the message's nonce was issued for another account or wallet")
	}
	signer, err := siwe.Recover(text, signature)
	if err != nil {
		return common.Address{}, refuse(http.StatusBadRequest, "%s", err)
	}
	if signer.Hex() != m.Address {
		return common.Address{}, refuse(http.StatusForbidden, "the signature was not made by %s", m.Address)
	}
	switch taken, err := s.cfg.Nonces.Take(ctx, m.Nonce); {
	case err != nil:
		return common.Address{}, err
	case !taken:
		return common.Address{}, refuse(http.StatusBadRequest, "the message's nonce is unknown, used or expired: sign a new message")
	}
	return signer, nil
}

// record binds the wallet to the account first when the account binds wallets (the API
// server's atomic create of the binding claim decides between two accounts), then keeps the
// proof on the account's Wallet record. A record that already holds a proof keeps it (the
// schema makes it immutable): the wallet is proven.
func (s *Server) record(ctx context.Context, acct *payoutv1.PayoutAccount, text, signature string, signer common.Address) (*proofResult, error) {
	ns := payoutv1.AccountNamespace(acct.Name)
	wallet := signer.Hex()
	if acct.Spec.BindWallets {
		if err := s.bind(ctx, acct, wallet); err != nil {
			return nil, err
		}
	}
	proof := &payoutv1.WalletProof{Message: text, Signature: strings.ToLower(signature), Signer: wallet,
		ProvenAt: metav1.NewTime(s.cfg.Clock.Now())}
	key := client.ObjectKey{Namespace: ns, Name: payoutv1.WalletName(wallet)}
	rec := &payoutv1.Wallet{}
	switch err := s.cfg.APIReader.Get(ctx, key, rec); {
	case apierrors.IsNotFound(err):
		rec = &payoutv1.Wallet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name},
			Spec: payoutv1.WalletSpec{Address: payoutv1.NormalizeWallet(wallet), Proof: proof}}
		if err := s.cfg.Client.Create(ctx, rec); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil, refuse(http.StatusConflict, "the wallet was being proven at the same moment: reload the page")
			}
			return nil, err
		}
	case err != nil:
		return nil, err
	case rec.Spec.Proof == nil:
		patch := client.MergeFrom(rec.DeepCopy())
		rec.Spec.Proof = proof
		if err := s.cfg.Client.Patch(ctx, rec, patch); err != nil {
			return nil, err
		}
	}
	res := &proofResult{Account: acct.Name, Wallet: wallet, KYCVerified: rec.Spec.KYCVerified}
	if !res.KYCVerified && s.cfg.Vendor.URL != "" {
		session := issueSession(s.cfg.LinkKey, acct.Name, wallet, s.cfg.Clock.Now().Add(DefaultSessionTTL))
		res.Next = s.cfg.Vendor.URL + "?" + url.Values{"session": {session}, "return": {s.origin.String() + "/verify"}}.Encode()
	}
	return res, nil
}

// bind takes the wallet's binding claim for acct, or refuses the proof when another account
// holds it: a proven wallet is not taken by another account.
func (s *Server) bind(ctx context.Context, acct *payoutv1.PayoutAccount, wallet string) error {
	key := payoutv1.NormalizeClaimKey(payoutv1.ClaimWalletBinding, wallet)
	c := &payoutv1.Claim{
		ObjectMeta: metav1.ObjectMeta{Name: payoutv1.ClaimName(payoutv1.ClaimWalletBinding, key),
			Finalizers: []string{payoutv1.ClaimBindingFinalizer}},
		Spec: payoutv1.ClaimSpec{Kind: payoutv1.ClaimWalletBinding, Key: key,
			Holder: payoutv1.ObjectRef{Namespace: payoutv1.AccountNamespace(acct.Name), Name: acct.Name}},
	}
	err := s.cfg.Client.Create(ctx, c)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	held := &payoutv1.Claim{}
	if err := s.cfg.APIReader.Get(ctx, client.ObjectKey{Name: c.Name}, held); err != nil {
		return err
	}
	if held.Spec.Holder.Namespace != c.Spec.Holder.Namespace {
		return refuse(http.StatusConflict, "this wallet is bound to another account and cannot be proven for this one")
	}
	return nil
}
