package config_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	chainconfig "github.com/stablepay/payout-operator/internal/chain/config"
)

const namespace = "payout-system"

func as[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s: %v", key(u), err)
	}
	return out
}

// TestManifests checks what the rendered manifests must say, without a cluster.
func TestManifests(t *testing.T) {
	_, objs := rendered(t)
	controller := as[appsv1.Deployment](t, find(t, objs, "Deployment", "payout-controller"))
	facade := as[appsv1.Deployment](t, find(t, objs, "Deployment", "payout-facade"))
	sweeper := as[appsv1.Deployment](t, find(t, objs, "Deployment", "payout-sweeper"))

	t.Run("every object lives in payout-system or is cluster-scoped, and the namespace is created", func(t *testing.T) {
		find(t, objs, "Namespace", namespace)
		clusterScoped := map[string]bool{"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
			"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true}
		for _, o := range objs {
			if clusterScoped[o.GetKind()] != (o.GetNamespace() == "") || (o.GetNamespace() != "" && o.GetNamespace() != namespace) {
				t.Errorf("%s: namespace %q", key(o), o.GetNamespace())
			}
		}
	})

	t.Run("every generated CRD is installed", func(t *testing.T) {
		files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no CRDs in config/crd/bases: %v", err)
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".yaml")
			group, plural, _ := strings.Cut(name, "_")
			find(t, objs, "CustomResourceDefinition", plural+"."+group)
		}
	})

	t.Run("Secrets are referenced, never included, and each is documented in docs/operations/deploy.md", func(t *testing.T) {
		readme, err := os.ReadFile(filepath.Join(root, "docs", "operations", "deploy.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetKind() == "Secret" {
				t.Errorf("%s is part of the manifests: secrets are provided by the cluster's operators", key(o))
			}
		}
		secrets := map[string]bool{}
		for _, d := range []*appsv1.Deployment{controller, facade, sweeper} {
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					secrets[v.Secret.SecretName] = true
				}
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				for _, e := range c.Env {
					if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
						secrets[e.ValueFrom.SecretKeyRef.Name] = true
					}
				}
			}
		}
		want := []string{"payout-deposit-xpub", "payout-refund-wallet", "payout-fiat-provider", "payout-smtp", "payout-limits-redis", "payout-archive", "payout-archive-reader",
			"payout-deposit-key", "payout-sweeper-gas-wallet"}
		for _, s := range want {
			if !secrets[s] {
				t.Errorf("no pod uses Secret %s", s)
			}
			if !strings.Contains(string(readme), "`"+s+"`") {
				t.Errorf("docs/operations/deploy.md does not document Secret %s", s)
			}
		}
		if len(secrets) != len(want) {
			t.Errorf("Secrets used: %v, want %v", secrets, want)
		}
	})

	t.Run("each pod gets only the Secrets its part of payoutd reads: the deposit master key in the sweeper only, no deposit key in the controllers", func(t *testing.T) {
		for d, allowed := range map[*appsv1.Deployment][]string{
			// the keys that move money: the refund wallet, the provider's token; the archive's writer
			controller: {"payout-refund-wallet", "payout-fiat-provider", "payout-smtp", "payout-archive"},
			// the xpub issues v1 deposit addresses; the archive is read as a role that cannot write
			facade: {"payout-deposit-xpub", "payout-limits-redis", "payout-archive-reader"},
			// the deposit master key and the gas wallet that pays for sweeps: nothing else
			sweeper: {"payout-deposit-key", "payout-sweeper-gas-wallet"},
		} {
			pod := d.Spec.Template.Spec
			for _, v := range pod.Volumes {
				if v.Secret != nil && !slices.Contains(allowed, v.Secret.SecretName) {
					t.Errorf("%s mounts Secret %s", d.Name, v.Secret.SecretName)
				}
			}
			for _, c := range pod.Containers {
				for _, e := range c.Env {
					if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !slices.Contains(allowed, e.ValueFrom.SecretKeyRef.Name) {
						t.Errorf("%s reads Secret %s into $%s", d.Name, e.ValueFrom.SecretKeyRef.Name, e.Name)
					}
				}
				for _, a := range c.Args {
					if (d != sweeper && strings.HasPrefix(a, "--deposit-xprv-file")) || (d == controller && strings.HasPrefix(a, "--deposit-xpub-file")) {
						t.Errorf("%s is given %s", d.Name, a)
					}
				}
			}
		}
	})

	t.Run("the sweeper: one replica, leader election, no API, no controllers, the xprv", func(t *testing.T) {
		args := sweeper.Spec.Template.Spec.Containers[0].Args
		for _, a := range []string{"--sweeper", "--leader-elect", "--api=false", "--controllers=false", "--deposit-xprv-file=/var/run/secrets/payout/deposit-key/xprv"} {
			if !slices.Contains(args, a) {
				t.Errorf("sweeper args %v lack %s", args, a)
			}
		}
		if *sweeper.Spec.Replicas != 1 || sweeper.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("sweeper: %d replicas, strategy %s", *sweeper.Spec.Replicas, sweeper.Spec.Strategy.Type)
		}
		if sa := sweeper.Spec.Template.Spec.ServiceAccountName; sa != "payout-sweeper" {
			t.Errorf("sweeper service account %q", sa)
		}
	})

	t.Run("the controllers: two replicas, leader election, no API", func(t *testing.T) {
		args := controller.Spec.Template.Spec.Containers[0].Args
		if *controller.Spec.Replicas != 2 {
			t.Errorf("replicas %d", *controller.Spec.Replicas)
		}
		for _, a := range []string{"--leader-elect", "--api=false", "--controllers=true"} {
			if !slices.Contains(args, a) {
				t.Errorf("controller args %v lack %s", args, a)
			}
		}
		if sa := controller.Spec.Template.Spec.ServiceAccountName; sa != "payout-controller" {
			t.Errorf("controller service account %q", sa)
		}
	})

	t.Run("the facade: replicas behind a Service and a PodDisruptionBudget, no controllers", func(t *testing.T) {
		args := facade.Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(args, "--controllers=false") || slices.Contains(args, "--leader-elect") {
			t.Errorf("facade args %v", args)
		}
		if *facade.Spec.Replicas < 2 {
			t.Errorf("facade replicas %d", *facade.Spec.Replicas)
		}
		if sa := facade.Spec.Template.Spec.ServiceAccountName; sa != "payout-facade" {
			t.Errorf("facade service account %q", sa)
		}
		pods := labels.Set(facade.Spec.Template.Labels)
		svc := as[corev1.Service](t, find(t, objs, "Service", "payout-facade"))
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(pods) || len(svc.Spec.Selector) == 0 {
			t.Errorf("the Service selects %v, the facade's pods are %v", svc.Spec.Selector, pods)
		}
		if port := svc.Spec.Ports[0].TargetPort.StrVal; !hasPort(facade, port) {
			t.Errorf("the Service targets port %q, which the facade does not declare", port)
		}
		pdb := as[policyv1.PodDisruptionBudget](t, find(t, objs, "PodDisruptionBudget", "payout-facade"))
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(pods) || sel.Matches(labels.Set(controller.Spec.Template.Labels)) {
			t.Errorf("the facade's PodDisruptionBudget selects %v", pdb.Spec.Selector)
		}
	})

	t.Run("each pod runs non-root on a read-only root with seccomp, probes, requests and limits", func(t *testing.T) {
		for _, d := range []*appsv1.Deployment{controller, facade, sweeper} {
			pod := d.Spec.Template.Spec
			if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot ||
				pod.SecurityContext.SeccompProfile == nil || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("%s: pod security context %+v", d.Name, pod.SecurityContext)
			}
			for _, c := range pod.Containers {
				sc := c.SecurityContext
				if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
					sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
					sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
					t.Errorf("%s/%s: security context %+v", d.Name, c.Name, sc)
				}
				if c.LivenessProbe == nil || c.ReadinessProbe == nil {
					t.Errorf("%s/%s: probes missing", d.Name, c.Name)
				}
				for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					if _, ok := c.Resources.Requests[r]; !ok {
						t.Errorf("%s/%s: no %s request", d.Name, c.Name, r)
					}
					if _, ok := c.Resources.Limits[r]; !ok {
						t.Errorf("%s/%s: no %s limit", d.Name, c.Name, r)
					}
				}
			}
		}
	})

	t.Run("each $(VAR) of the arguments has its variable, from an existing ConfigMap key", func(t *testing.T) {
		for _, d := range []*appsv1.Deployment{controller, facade} {
			checkVariables(t, objs, d)
		}
	})

	t.Run("each identity is bound to its role", func(t *testing.T) {
		for sa, role := range map[string]string{"payout-controller": "payout-controller-role", "payout-facade": "payout-facade-role"} {
			b := as[rbacv1.ClusterRoleBinding](t, find(t, objs, "ClusterRoleBinding", role+"binding"))
			find(t, objs, "ClusterRole", b.RoleRef.Name)
			find(t, objs, "ServiceAccount", sa)
			if b.RoleRef.Name != role || len(b.Subjects) != 1 || b.Subjects[0].Name != sa || b.Subjects[0].Namespace != namespace {
				t.Errorf("%s binds %s to %v", b.Name, b.RoleRef.Name, b.Subjects)
			}
		}
		rb := as[rbacv1.RoleBinding](t, find(t, objs, "RoleBinding", "payout-controller-rolebinding"))
		if rb.Namespace != namespace || rb.RoleRef.Kind != "Role" || rb.Subjects[0].Name != "payout-controller" {
			t.Errorf("leader election binding %+v", rb)
		}
	})

	t.Run("the arguments are payoutd's flags, and its chain settings are valid", func(t *testing.T) {
		known := payoutdFlags(t)
		for _, d := range []*appsv1.Deployment{controller, facade} {
			for _, a := range d.Spec.Template.Spec.Containers[0].Args {
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if !known[name] {
					t.Errorf("%s: %s is not a flag of payoutd", d.Name, a)
				}
			}
			checkChainSettings(t, d)
		}
	})
}

func hasPort(d *appsv1.Deployment, name string) bool {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

// payoutdFlags are the flags payoutd accepts: what `payoutd -help` lists, and the chain
// configuration's flags (internal/chain/config), which payoutd binds for its chain side.
func payoutdFlags(t *testing.T) map[string]bool {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "payoutd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/payoutd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building payoutd: %v: %s", err, out)
	}
	// -help prints the usage and exits 2
	out, _ := exec.Command(bin, "-help").CombinedOutput()
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z0-9-]+)`).FindAllStringSubmatch(string(out), -1) {
		known[m[1]] = true
	}
	if !known["controllers"] || !known["api"] {
		t.Fatalf("could not read payoutd's flags from its usage:\n%s", out)
	}
	fs := flag.NewFlagSet("chains", flag.ContinueOnError)
	(&chainconfig.Flags{}).BindFlags(fs)
	fs.VisitAll(func(f *flag.Flag) { known[f.Name] = true })
	return known
}

// checkChainSettings validates the chain configuration d's pod gets: the ConfigMap's
// chains.yaml (config/manager/chains.yaml) with d's chain flags, as internal/chain/config
// reads them. Key files are only named, not read.
func checkChainSettings(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	fs := flag.NewFlagSet("chains", flag.ContinueOnError)
	f := &chainconfig.Flags{}
	f.BindFlags(fs)
	var args []string
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if fs.Lookup(name) != nil {
			args = append(args, a)
		}
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%s: %v", d.Name, err)
	}
	if filepath.Base(f.File) != "chains.yaml" {
		t.Fatalf("%s: --chains-config %q is not the mounted chains.yaml", d.Name, f.File)
	}
	f.File = filepath.Join(root, "config", "manager", "chains.yaml")
	if _, err := f.Config(); err != nil {
		t.Errorf("%s: the chain configuration is invalid: %v", d.Name, err)
	}
}
