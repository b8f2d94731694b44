// Package devoidc is the OpenID Provider `make run` starts for the dashboard's sign-in: the
// zitadel/oidc library's provider (package op) with its example in-memory storage and login
// page, serving a fixed list of users, each carrying the claim that names its account. It is
// a development stand-in for the platform's identity provider (Dex, Keycloak, Okta, Entra);
// nothing of it runs in a deployment.
package devoidc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// User is a user of the provider.
type User struct {
	Username, Password string
	// Account is the value of the account claim in the user's ID token.
	Account string
}

// Options configure the provider.
type Options struct {
	// Addr is where it listens ("127.0.0.1:0" for a free port).
	Addr string
	// ClientID and ClientSecret are the dashboard's registration; RedirectURI its callback.
	ClientID, ClientSecret, RedirectURI string
	// AccountClaim is the claim that carries a user's account.
	AccountClaim string
	Users        []User
}

// Provider is a running provider.
type Provider struct {
	issuer string
	srv    *http.Server
}

// Start listens and serves the provider in the background.
func Start(o Options) (*Provider, error) {
	if o.ClientID == "" || o.ClientSecret == "" || o.RedirectURI == "" || o.AccountClaim == "" || len(o.Users) == 0 {
		return nil, errors.New("devoidc: ClientID, ClientSecret, RedirectURI, AccountClaim and Users are required")
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	issuer := "http://" + ln.Addr().String()
	users := userStore{byID: map[string]*storage.User{}, accounts: map[string]string{}}
	for i, u := range o.Users {
		id := fmt.Sprintf("user%d", i+1)
		users.byID[id] = &storage.User{ID: id, Username: u.Username, Password: u.Password, FirstName: u.Username,
			LastName: "(dev)", Email: u.Username + "@example.com", EmailVerified: true, PreferredLanguage: language.English}
		users.accounts[id] = u.Account
	}
	client := storage.WebClient(o.ClientID, o.ClientSecret, o.RedirectURI)
	st := &accountStorage{Storage: storage.NewStorageWithClients(users, map[string]*storage.Client{o.ClientID: client}),
		users: users, claim: o.AccountClaim}
	router := exampleop.SetupServer(issuer, st, nil, false)
	p := &Provider{issuer: issuer, srv: &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Issuer is the provider's issuer URL (its discovery document is under it).
func (p *Provider) Issuer() string { return p.issuer }

// Close stops the provider.
func (p *Provider) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.srv.Shutdown(ctx)
}

// userStore is the example storage's user store over the configured users.
type userStore struct {
	byID     map[string]*storage.User
	accounts map[string]string
}

func (s userStore) GetUserByID(id string) *storage.User { return s.byID[id] }

func (s userStore) GetUserByUsername(name string) *storage.User {
	for _, u := range s.byID {
		if u.Username == name {
			return u
		}
	}
	return nil
}

// ExampleClientID names the example's service client, which this provider does not have.
func (s userStore) ExampleClientID() string { return "" }

// accountStorage adds the account claim to the ID token, as a platform's provider would with
// a custom claim or a mapped group.
type accountStorage struct {
	*storage.Storage
	users userStore
	claim string
}

// SetUserinfoFromRequest fills the ID token's claims (op.CanSetUserinfoFromRequest).
func (s *accountStorage) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	if acct, ok := s.users.accounts[req.GetSubject()]; ok {
		info.AppendClaims(s.claim, acct)
	}
	return nil
}
