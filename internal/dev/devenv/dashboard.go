package devenv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stablepay/payout-operator/apiserver"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/browsertoken"
	"github.com/stablepay/payout-operator/internal/dev/devoidc"
)

// The dashboard's local sign-in: a dev OpenID Provider with two users, each on an account of
// its own (`default`, and devSecondAccount made here with the same settings), so that a person
// or a test can see that one user never reaches the other's account.
const (
	devSecondAccount  = "second"
	devDashClientID   = "payout-dashboard"
	devAccountClaim   = "payout_account"
	devDashUsersFile  = "dashboard-users"
	devTokenKeyFile   = "dashboard-token-keys.pem"
	devClientSecretFn = "dashboard-oidc-client-secret"
)

// devDashboard is the provider and what payoutd and .dev/env need of it.
type devDashboard struct {
	op        *devoidc.Provider
	url       string
	usersFile string
	args, env []string
}

func (d *devDashboard) stop() {
	if d != nil && d.op != nil {
		_ = d.op.Close()
	}
}

// startDashboard provisions the second account, starts the provider for the dashboard served at
// baseURL, and writes the users' credentials (user name, password, account: one a line) and
// the browser tokens' key into dir. The passwords are made afresh at each run.
func startDashboard(ctx context.Context, c client.Client, dir, baseURL string) (*devDashboard, error) {
	if _, err := admin.CreateAccount(ctx, c, devSecondAccount, admin.DefaultAccountSettings(devSecondAccount)); err != nil && !errors.Is(err, admin.ErrAccountExists) {
		return nil, fmt.Errorf("provisioning account %s: %w", devSecondAccount, err)
	}
	users := []devoidc.User{{Username: "alice", Account: "default"}, {Username: "bob", Account: devSecondAccount}}
	var lines strings.Builder
	for i := range users {
		pw, err := randomToken()
		if err != nil {
			return nil, err
		}
		users[i].Password = pw
		fmt.Fprintf(&lines, "%s %s %s\n", users[i].Username, users[i].Password, users[i].Account)
	}
	secret, err := randomToken()
	if err != nil {
		return nil, err
	}
	d := &devDashboard{url: baseURL + apiserver.DashboardPath, usersFile: filepath.Join(dir, devDashUsersFile)}
	if d.op, err = devoidc.Start(devoidc.Options{Addr: "127.0.0.1:0", ClientID: devDashClientID, ClientSecret: secret,
		RedirectURI: d.url + "callback", AccountClaim: devAccountClaim, Users: users}); err != nil {
		return nil, fmt.Errorf("the dev OpenID Provider: %w", err)
	}
	keyPEM, err := browsertoken.NewKeyPEM()
	if err != nil {
		d.stop()
		return nil, err
	}
	keyFile, secretFile := filepath.Join(dir, devTokenKeyFile), filepath.Join(dir, devClientSecretFn)
	for _, f := range []struct {
		path string
		data []byte
	}{{keyFile, keyPEM}, {secretFile, []byte(secret)}, {d.usersFile, []byte(lines.String())}} {
		if err := writeAtomic(f.path, f.data, 0o600); err != nil {
			d.stop()
			return nil, err
		}
	}
	d.args = []string{
		"--dashboard-url", d.url,
		"--dashboard-oidc-issuer", d.op.Issuer(),
		"--dashboard-oidc-client-id", devDashClientID,
		"--dashboard-oidc-client-secret-file", secretFile,
		"--dashboard-account-claim", devAccountClaim,
		"--dashboard-token-key-file", keyFile,
	}
	return d, nil
}

// envVars are the dashboard's lines of .dev/env (CONTRACT.md).
func (d *devDashboard) envVars() []string {
	return []string{"PAYOUT_DASHBOARD_URL=" + d.url, "PAYOUT_DASHBOARD_USERS=" + d.usersFile}
}
