// Package testenv starts the real control plane (kube-apiserver and etcd, built by `make
// control-plane`) for the Ginkgo suites, with the project's CRDs installed.
package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stablepay/payout-operator/internal/manifest"
	"github.com/stablepay/payout-operator/internal/scheme"
)

// Root is the checkout's top directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Env is a running control plane.
type Env struct {
	*envtest.Environment
	Config *rest.Config
	Client client.Client
}

// Start starts kube-apiserver and etcd from KUBEBUILDER_ASSETS (default bin/k8s of the checkout)
// and installs the CRDs of config/crd/bases and the admission policies of config/policy (the
// guard of account namespaces: README, "Deleting an account"). Each configure runs before the
// start (a measurement sets flags of the control plane with it).
func Start(configure ...func(*envtest.Environment)) (*Env, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(Root(), "bin", "k8s")
	}
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
		return nil, fmt.Errorf("no kube-apiserver in %s: run `make control-plane` (or `make test`) first: %w", assets, err)
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(Root(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme.New(),
	}
	for _, c := range configure {
		c(env)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	if err := manifest.Install(context.Background(), c, filepath.Join(Root(), "config", "policy")); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Environment: env, Config: cfg, Client: c}, nil
}
