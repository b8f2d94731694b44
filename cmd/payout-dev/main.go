// Command payout-dev is `make run`: the whole service on one machine, as CONTRACT.md describes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/stablepay/payout-operator/internal/dev/devenv"
)

func main() {
	var cfg devenv.Config
	flag.StringVar(&cfg.Dir, "dir", ".dev", "state directory (etcd data, kubeconfig, logs, env)")
	flag.StringVar(&cfg.Assets, "assets", "bin/k8s", "directory with kube-apiserver and etcd")
	flag.StringVar(&cfg.CRDs, "crds", "config/crd/bases", "directory with the CRD manifests")
	flag.StringVar(&cfg.Policies, "policies", "config/policy", "directory with the admission policies (empty: none)")
	flag.StringVar(&cfg.Bin, "bin", "bin", "directory with payoutd and kubectl-payout")
	flag.StringVar(&cfg.Anvil, "anvil", "bin/anvil", "the dev chains' node (`make anvil`)")
	flag.Func("payoutd-arg", "an argument appended to payoutd's command line (repeatable), e.g. --payoutd-arg=--pprof-address=127.0.0.1:6060", func(a string) error {
		cfg.PayoutdArgs = append(cfg.PayoutdArgs, a)
		return nil
	})
	quiet := flag.Bool("quiet", false, "keep payoutd's log in <dir>/payoutd.log only")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	cfg.Log = ctrl.Log.WithName("make-run")
	if !*quiet {
		cfg.Stdout = os.Stdout
	}
	if err := devenv.Run(stopOnSignal(cfg.Log), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "make run:", err)
		os.Exit(1)
	}
}

// stopOnSignal is cancelled by the first SIGINT or SIGTERM. Later signals are ignored: the run
// is already stopping, and dying half-way would leave etcd running (it runs in its own process
// group, out of reach of a group kill). `kill -9` remains for the impatient; the next run reaps
// what it leaves.
func stopOnSignal(log logr.Logger) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		log.Info("stopping")
		cancel()
		for range sig {
			log.Info("already stopping; waiting for the control plane to shut down")
		}
	}()
	return ctx
}
