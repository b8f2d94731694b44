// Package testenv starts the real control plane (kube-apiserver and etcd, built by `make
// control-plane`) for the Ginkgo suites, with the project's CRDs installed.
package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
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
// guard of account namespaces: docs/operations/accounts.md), and returns once the API server
// enforces those (policy.go). Each configure runs before the start (a measurement sets flags of
// the control plane with it).
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
	// envtest gives kube-apiserver and etcd 20 s to start and to stop. `make test` runs its stages
	// side by side on 2 cores that others share: at a load average of 46 kube-apiserver missed
	// that five times over in each of payoutd's suite processes, and one that missed its stop was
	// left running. Their own variables still decide where they are set.
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		env.ControlPlaneStartTimeout = 2 * time.Minute
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT") == "" {
		env.ControlPlaneStopTimeout = time.Minute
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
	if err := awaitPolicies(context.Background(), c); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Environment: env, Config: cfg, Client: c}, nil
}

// NewerField is a field no release has, as the next release would add one: a test puts it into
// the CRDs (WithNewerField) and into objects, and checks that this release's writes keep it
// (docs/operations/upgrade.md, a rollback to this release).
const NewerField = "nextRelease"

// WithNewerField adds NewerField, an optional string, to part ("spec" or "status") of every CRD
// of the API group that has one (status: a status subresource), and returns their kinds and
// what puts the CRDs back. The API server serves the newer schema a moment after this returns.
func (e *Env) WithNewerField(ctx context.Context, part string) (kinds []string, restore func() error, err error) {
	s := k8sruntime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, nil, err
	}
	c, err := client.New(e.Config, client.Options{Scheme: s})
	if err != nil {
		return nil, nil, err
	}
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, list); err != nil {
		return nil, nil, err
	}
	before := map[string]apiextensionsv1.CustomResourceDefinitionSpec{}
	for i := range list.Items {
		crd := &list.Items[i]
		if crd.Spec.Group != payoutv1.GroupVersion.Group || len(crd.Spec.Versions) != 1 {
			continue
		}
		v := crd.Spec.Versions[0]
		props, ok := v.Schema.OpenAPIV3Schema.Properties[part]
		if !ok || props.Type != "object" || (part == "status" && (v.Subresources == nil || v.Subresources.Status == nil)) {
			continue
		}
		before[crd.Name] = *crd.Spec.DeepCopy()
		if props.Properties == nil {
			props.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
		}
		props.Properties[NewerField] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		v.Schema.OpenAPIV3Schema.Properties[part] = props
		if err := c.Update(ctx, crd); err != nil {
			return nil, nil, err
		}
		kinds = append(kinds, crd.Spec.Names.Kind)
	}
	restore = func() error {
		for name, spec := range before {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			crd.Spec = spec
			if err := c.Update(ctx, crd); err != nil {
				return err
			}
		}
		return nil
	}
	return kinds, restore, nil
}
