// Command payout-dev is `make run`: the whole service on one machine, as CONTRACT.md describes.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/stablepay/payout-operator/internal/devenv"
)

func main() {
	var cfg devenv.Config
	flag.StringVar(&cfg.Dir, "dir", ".dev", "state directory (etcd data, kubeconfig, logs, env)")
	flag.StringVar(&cfg.Assets, "assets", "bin/k8s", "directory with kube-apiserver and etcd")
	flag.StringVar(&cfg.CRDs, "crds", "config/crd/bases", "directory with the CRD manifests")
	flag.StringVar(&cfg.Bin, "bin", "bin", "directory with payoutd and kubectl-payout")
	quiet := flag.Bool("quiet", false, "keep payoutd's log in <dir>/payoutd.log only")
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	cfg.Log = ctrl.Log.WithName("make-run")
	if !*quiet {
		cfg.Stdout = os.Stdout
	}
	if err := devenv.Run(ctrl.SetupSignalHandler(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "make run:", err)
		os.Exit(1)
	}
}
