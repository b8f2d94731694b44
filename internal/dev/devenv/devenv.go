// Package devenv runs the whole service on one machine for `make run` (CONTRACT.md): the dev EVM
// chains (package devchain, saved in <dir>/chains so a second run resumes them), a real
// kube-apiserver and etcd with their data under the dev directory, the CRDs, payoutd, and the
// `default` account with one API key; it writes <dir>/env once everything answers, and stops
// what it started on SIGINT or SIGTERM.
package devenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/apiserver"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/apikey"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/freeport"
	"github.com/stablepay/payout-operator/internal/kycsite"
	"github.com/stablepay/payout-operator/internal/manifest"
	"github.com/stablepay/payout-operator/internal/scheme"
)

// Config locates what the environment runs.
type Config struct {
	// Dir holds the environment's state: etcd data, kubeconfig, logs, the default key, env.
	Dir string
	// Assets holds kube-apiserver and etcd.
	Assets string
	// CRDs is the directory of the CRD manifests.
	CRDs string
	// Policies is the directory of the admission policies (config/policy); empty installs none.
	Policies string
	// Bin holds payoutd and kubectl-payout.
	Bin string
	// Anvil is the dev chains' node (bin/anvil, `make anvil`).
	Anvil string
	// Log reports progress.
	Log logr.Logger
	// Stdout receives payoutd's log as well as <dir>/payoutd.log.
	Stdout io.Writer
	// PayoutdArgs are appended to payoutd's command line (payout-dev --payoutd-arg), e.g. the
	// load run's --pprof-address.
	PayoutdArgs []string
}

// Run starts the environment and blocks until ctx ends, then stops everything it started.
func Run(ctx context.Context, cfg Config) error {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return err
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return err
	}
	cfg.Dir = dir
	envFile := filepath.Join(dir, "env")
	// A reader polls for env: it must never see the last run's.
	if err := os.Remove(envFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	unlock, err := lock(filepath.Join(dir, "lock"))
	if err != nil {
		return err
	}
	defer unlock()
	reapLeftovers(filepath.Join(dir, "pids"), cfg.Log)

	// chains holds what payoutd's chain configuration is made of: each network's RPC URL and
	// token addresses (chains.Chains), the refund wallet's key (chains.RefundKey) and the
	// confirmation depth.
	cfg.Log.Info("starting the dev chains", "networks", devchain.Networks)
	chains, err := devchain.Start(ctx, devchain.Options{
		Anvil: cfg.Anvil,
		Dir:   filepath.Join(dir, "chains"),
		Log:   cfg.Log.WithName("devchain"),
	})
	if err != nil {
		return fmt.Errorf("starting the dev chains: %w", err)
	}
	defer func() {
		cfg.Log.Info("stopping the dev chains")
		if err := chains.Stop(); err != nil {
			cfg.Log.Error(err, "stopping the dev chains")
		}
		_ = os.Remove(filepath.Join(dir, "pids"))
	}()
	// The chains' pids go to the pids file as soon as they run, so that a run killed while the
	// control plane starts still has them reaped.
	recordChildren(filepath.Join(dir, "pids"))

	cp, err := startControlPlane(cfg)
	if err != nil {
		return err
	}
	defer func() {
		cfg.Log.Info("stopping the control plane")
		if err := cp.Stop(); err != nil {
			cfg.Log.Error(err, "stopping the control plane")
		}
	}()
	recordChildren(filepath.Join(dir, "pids"))

	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeAtomic(kubeconfig, cp.KubeConfig, 0o600); err != nil {
		return err
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	if cfg.Policies != "" {
		if err := manifest.Install(ctx, c, cfg.Policies); err != nil {
			return fmt.Errorf("installing the admission policies: %w", err)
		}
	}
	key, err := defaultKey(ctx, c, filepath.Join(dir, "default-api-key"))
	if err != nil {
		return fmt.Errorf("provisioning the default account: %w", err)
	}

	svc, err := startServices(dir, chains)
	if err != nil {
		return err
	}
	defer svc.stop()

	apiAddr, err := freeport.Loopback()
	if err != nil {
		return err
	}
	probeAddr, err := freeport.Loopback()
	if err != nil {
		return err
	}
	baseURL := "http://" + apiAddr
	dash, err := startDashboard(ctx, c, dir, baseURL)
	if err != nil {
		return err
	}
	defer dash.stop()
	d := &daemon{cfg: cfg, env: svc.payoutdEnv(), args: append([]string{
		"--kubeconfig", kubeconfig,
		"--api-bind-address", apiAddr,
		"--health-probe-bind-address", probeAddr,
		"--metrics-bind-address", "0",
		"--quote-retention", "10m",
		// a dev environment resumed after a break is not an etcd restore: its money need not wait
		// for an operator (kubectl payout recover) because the laptop slept
		"--recovery-gap", "720h",
	}, append(append(svc.payoutdArgs(), dash.args...), cfg.PayoutdArgs...)...)}
	stopped := d.supervise(ctx)
	// the sweeper: its own process, as its own Deployment (docs/operations/sweeper.md)
	sweeperProbe, err := freeport.Loopback()
	if err != nil {
		return err
	}
	sw := &daemon{cfg: cfg, log: "sweeper.log", args: append([]string{"--kubeconfig", kubeconfig,
		"--health-probe-bind-address", sweeperProbe, "--metrics-bind-address", "0"}, svc.sweeperArgs()...)}
	swept := sw.supervise(ctx)

	if err := waitReady(ctx, baseURL, key, devchain.Networks, stopped); err != nil {
		return fmt.Errorf("payoutd did not become ready: %w (see %s)", err, d.logPath())
	}
	plugin, err := filepath.Abs(filepath.Join(cfg.Bin, "kubectl-payout"))
	if err != nil {
		return err
	}
	vars := []string{
		"KUBECONFIG=" + kubeconfig,
		"PAYOUT_BASE_URL=" + baseURL,
		"PAYOUT_MCP_URL=" + baseURL + apiserver.MCPPath,
		"PAYOUT_API_KEY=" + key,
		"PAYOUT_KUBECTL_PLUGIN=" + plugin,
		"PAYOUT_MAIL_DIR=" + svc.mailDir,
		"PAYOUT_KYC_URL=" + svc.kycSiteURL,
		// a link of the default account to its page, valid for a week
		"PAYOUT_KYC_DEFAULT_LINK=" + svc.kycSiteURL + "/verify?link=" +
			kycsite.IssueLink([]byte(svc.linkKey), "default", time.Now().Add(7*24*time.Hour)),
	}
	vars = append(vars, chains.Env()...)
	vars = append(vars, dash.envVars()...)
	if err := writeAtomic(envFile, []byte(envText(vars)), 0o600); err != nil {
		return err
	}
	defer os.Remove(envFile)
	cfg.Log.Info("ready: `source "+envFile+"`; Ctrl-C stops everything", "url", baseURL)

	select {
	case <-ctx.Done():
	case <-stopped:
	}
	// payoutd and the sweeper stop before the chains and the control plane they use.
	<-stopped
	<-swept
	return nil
}

// startControlPlane starts etcd (data kept in <dir>/etcd, so a second run resumes) and
// kube-apiserver, and installs the CRDs. Data that etcd cannot open is moved aside and the
// run starts clean: leftovers must never stop `make run`.
func startControlPlane(cfg Config) (*envtest.Environment, error) {
	dataDir := filepath.Join(cfg.Dir, "etcd")
	start := func() (*envtest.Environment, error) {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, err
		}
		env := &envtest.Environment{
			BinaryAssetsDirectory: cfg.Assets,
			CRDDirectoryPaths:     []string{cfg.CRDs},
			ErrorIfCRDPathMissing: true,
			Scheme:                scheme.New(),
		}
		env.ControlPlane.Etcd = &envtest.Etcd{DataDir: dataDir, StartTimeout: time.Minute}
		env.ControlPlane.GetAPIServer().StartTimeout = 2 * time.Minute
		cfg.Log.Info("starting etcd and kube-apiserver", "data", dataDir)
		_, err := env.Start()
		return env, err
	}
	env, err := start()
	if err == nil {
		return env, nil
	}
	_ = env.Stop()
	aside := fmt.Sprintf("%s.broken-%d", dataDir, time.Now().Unix())
	cfg.Log.Error(err, "the control plane did not start on the existing data; starting clean", "movedTo", aside)
	if err := os.Rename(dataDir, aside); err != nil {
		return nil, err
	}
	if env, err = start(); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return env, nil
}

// defaultKey provisions the `default` account of CONTRACT.md and returns its API key: the one
// kept in keyFile when it still authenticates, else a fresh one.
func defaultKey(ctx context.Context, c client.Client, keyFile string) (string, error) {
	if _, err := admin.CreateAccount(ctx, c, "default", admin.DefaultAccountSettings("default")); err != nil && !errors.Is(err, admin.ErrAccountExists) {
		return "", err
	}
	acct, err := admin.GetAccount(ctx, c, "default")
	if err != nil {
		return "", err
	}
	if data, err := os.ReadFile(keyFile); err == nil {
		full := strings.TrimSpace(string(data))
		if id, ok := apikey.ParseKey(full); ok {
			k := &payoutv1.APIKey{}
			if err := c.Get(ctx, client.ObjectKey{Name: id}, k); err == nil && !k.Spec.Revoked && k.Spec.Account == "default" &&
				k.BindingTo(acct) != payoutv1.KeyOfAnotherAccount && apikey.Matches(k.Spec.SecretHash, full) {
				return full, nil
			}
		}
	}
	full, _, err := admin.IssueKey(ctx, c, "default")
	if err != nil {
		return "", err
	}
	return full, writeAtomic(keyFile, []byte(full+"\n"), 0o600)
}

// waitReady polls payoutd until the default key authenticates and every deposit option of the
// dev chains (networks) is available: .dev/env promises every part ready (CONTRACT.md), and a
// network's option turns available only once its watcher has scanned (its ChainCursor).
func waitReady(ctx context.Context, baseURL, key string, networks []string, stopped <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	hc := &http.Client{Timeout: 5 * time.Second}
	var last error
	for {
		err := authenticates(ctx, hc, baseURL, key)
		if err == nil {
			err = optionsAvailable(ctx, hc, baseURL, key, networks)
		}
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-stopped:
			return errors.New("payoutd stopped")
		case <-ctx.Done():
			return last
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// authenticates asks for the amount limits with key.
func authenticates(ctx context.Context, hc *http.Client, baseURL, key string) error {
	resp, err := get(ctx, hc, baseURL+"/api/payouts/amount-limits", key)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET amount-limits answered %d", resp.StatusCode)
	}
	return nil
}

// optionsAvailable reports the first deposit option of networks that is not available.
func optionsAvailable(ctx context.Context, hc *http.Client, baseURL, key string, networks []string) error {
	resp, err := get(ctx, hc, baseURL+"/api/payouts/deposit-options", key)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Options []struct{ Token, Network, Status string }
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET deposit-options answered %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("GET deposit-options: %w", err)
	}
	listed := map[string]bool{}
	for _, o := range body.Options {
		if slices.Contains(networks, o.Network) && o.Status != "available" {
			return fmt.Errorf("%s on %s is %s", o.Token, o.Network, o.Status)
		}
		listed[o.Network] = true
	}
	// A network not listed yet is not ready either: payoutd creates the options once its
	// controllers start, which can be after the facade answers, and a check of the listed
	// options alone passed on an empty list.
	for _, n := range networks {
		if !listed[n] {
			return fmt.Errorf("no deposit option on %s is listed yet", n)
		}
	}
	return nil
}

func get(ctx context.Context, hc *http.Client, url, key string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	return hc.Do(req)
}

func envText(vars []string) string {
	var b strings.Builder
	b.WriteString("# written by `make run`; removed when it stops\n")
	for _, v := range vars {
		name, value, _ := strings.Cut(v, "=")
		fmt.Fprintf(&b, "export %s=%s\n", name, shellQuote(value))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:+=@,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeAtomic writes a file so that a reader sees all of it or nothing.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// lock takes an exclusive lock on path for the life of the run: two `make run` in one
// directory would share etcd's data.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another `make run` is using %s (lock %s): %w", filepath.Dir(path), path, err)
	}
	return func() { f.Close() }, nil
}

// daemon runs payoutd and restarts it when it dies on its own, as a Deployment would.
type daemon struct {
	cfg  Config
	args []string
	// log names its log file in the dev directory; default payoutd.log.
	log string
	// env is added to payoutd's environment (secrets stay out of its argv).
	env []string
}

func (d *daemon) logPath() string {
	if d.log != "" {
		return filepath.Join(d.cfg.Dir, d.log)
	}
	return filepath.Join(d.cfg.Dir, "payoutd.log")
}

// supervise starts payoutd and keeps it running until ctx ends; the returned channel closes
// when it has stopped for good.
func (d *daemon) supervise(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		backoff := time.Second
		for first := true; ctx.Err() == nil; first = false {
			started := time.Now()
			err := d.runOnce(ctx)
			if ctx.Err() != nil {
				return
			}
			if first && time.Since(started) < 5*time.Second {
				// dying at once on the first start is a configuration error, not a crash
				d.cfg.Log.Error(err, "payoutd failed to start; see "+d.logPath())
				return
			}
			d.cfg.Log.Error(err, "payoutd exited; restarting", "after", backoff)
			if time.Since(started) > time.Minute {
				backoff = time.Second
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
		}
	}()
	return done
}

func (d *daemon) runOnce(ctx context.Context) error {
	logFile, err := os.OpenFile(d.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	out := io.Writer(logFile)
	if d.cfg.Stdout != nil {
		out = io.MultiWriter(logFile, d.cfg.Stdout)
	}
	cmd := exec.Command(filepath.Join(d.cfg.Bin, "payoutd"), d.args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), d.env...)
	// payoutd dies with us even when we are killed without a chance to stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		return ctx.Err()
	}
}
