package browser_test

import (
	"context"
	"crypto/ecdsa"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/browsertoken"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/dev/devenv"
	"github.com/stablepay/payout-operator/internal/dev/devoidc"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/freeport"
)

// payoutd is the whole service as its binary runs it — facade and dashboard, controllers, the
// chain watcher on a dev chain (anvil), the provider paying through the simulated bank — on
// this package's API server, with a provider of its own for two users on two new accounts.
// The in-process stack has no watcher nor bank: a transfer's page can reach completed only
// here.
type payoutd struct {
	dash   string // the dashboard's URL
	base   *devchain.Chain
	funded *ecdsa.PrivateKey // the dev wallet that sends the deposits
}

const payoutdBankToken = "browser-test-bank"

// startPayoutd builds payoutd, starts it with the dev chain of base, the simulated bank and a
// dev OpenID Provider of carol (on account browser-transfer-1) and dave (browser-transfer-2),
// and waits until USDC on base takes deposits. Everything stops when t ends.
func startPayoutd(t *testing.T) *payoutd {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "payoutd")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/stablepay/payout-operator/cmd/payoutd").CombinedOutput(); err != nil {
		t.Fatalf("building payoutd: %v: %s", err, out)
	}
	chains := devchain.StartForTest(t, devchain.Base)
	chainConfig, err := devenv.WriteChainConfig(dir, chains)
	must(t, err, "the chain configuration")
	bank, err := simbank.Start(simbank.Options{Addr: "127.0.0.1:0", Dir: filepath.Join(dir, "bank"), Token: payoutdBankToken, SettleAfter: time.Second})
	must(t, err, "the simulated bank")
	t.Cleanup(func() { _ = bank.Close() })
	ctx := context.Background()
	for _, name := range []string{"browser-transfer-1", "browser-transfer-2"} {
		_, err := admin.CreateAccount(ctx, env.Client, name, admin.DefaultAccountSettings(name))
		must(t, err, "account "+name)
	}
	u, err := env.AddUser(envtest.User{Name: "browser-payoutd", Groups: []string{"system:masters"}}, nil)
	must(t, err, "payoutd's user")
	kc, err := u.KubeConfig()
	must(t, err, "payoutd's kubeconfig")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	must(t, os.WriteFile(kubeconfig, kc, 0o600), "payoutd's kubeconfig")
	keyPEM, err := browsertoken.NewKeyPEM()
	must(t, err, "the token key")
	keyFile := filepath.Join(dir, "token-key.pem")
	must(t, os.WriteFile(keyFile, keyPEM, 0o600), "the token key")

	addr := freeAddr(t)
	p := &payoutd{dash: "http://" + addr + "/dashboard/", base: chains.Chains[devchain.Base], funded: chains.FundedKey}
	op, err := devoidc.Start(devoidc.Options{Addr: "127.0.0.1:0", ClientID: "dashboard", ClientSecret: "dev-secret",
		RedirectURI: p.dash + "callback", AccountClaim: "payout_account",
		Users: []devoidc.User{{Username: "carol", Password: "carol-pw", Account: "browser-transfer-1"},
			{Username: "dave", Password: "dave-pw", Account: "browser-transfer-2"}}})
	must(t, err, "the OpenID Provider")
	t.Cleanup(func() { _ = op.Close() })

	log, err := os.Create(filepath.Join(dir, "payoutd.log"))
	must(t, err, "payoutd's log")
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--api-bind-address", addr,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--chains-config", chainConfig,
		"--fiat-url", bank.URL(), "--fiat-profile-id", "1", "--fiat-provider-name", "simbank",
		// the embedded sanctions release is from 2023; another payoutd's pause is no restore
		"--sanctions-max-age", "0", "--recovery-gap", "24h",
		"--dashboard-url", p.dash, "--dashboard-oidc-issuer", op.Issuer(), "--dashboard-oidc-client-id", "dashboard",
		"--dashboard-token-key-file", keyFile)
	cmd.Env = append(os.Environ(), "PAYOUT_FIAT_TOKEN="+payoutdBankToken, "PAYOUT_DASHBOARD_OIDC_CLIENT_SECRET=dev-secret")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	must(t, cmd.Start(), "starting payoutd")
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		_ = log.Close()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("payoutd's errors:\n%s", errorLines(out, 40))
		}
	})

	deadline := time.Now().Add(2 * time.Minute)
	for !baseAvailable(ctx, "http://"+addr) {
		if time.Now().After(deadline) {
			t.Fatal("payoutd is not ready, or USDC on base takes no deposits, after 2 minutes")
		}
		time.Sleep(250 * time.Millisecond)
	}
	return p
}

// baseAvailable tells whether payoutd answers ready and USDC on base takes deposits (its
// watcher is in sync).
func baseAvailable(ctx context.Context, url string) bool {
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	o := &payoutv1.DepositOption{}
	return resp.StatusCode == http.StatusOK && env.Client.Get(ctx, client.ObjectKey{Name: "usdc-base"}, o) == nil && o.Status.Available
}

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Loopback()
	must(t, err, "a free port")
	return addr
}

// errorLines is the last n lines of payoutd's log at level error.
func errorLines(out []byte, n int) string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, `"level":"error"`) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
