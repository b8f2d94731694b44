package config_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/scheme"
	"github.com/stablepay/payout-operator/internal/tenancy"
)

// warnings collects the API server's warnings (Warning headers): deprecated APIs, unknown
// fields, and Pod Security violations of the namespace's level by a workload's pod template.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// applyOrder is the order objects are applied in: each after what it depends on.
var applyOrder = []string{
	"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "Role",
	"ClusterRoleBinding", "RoleBinding", "ConfigMap", "Secret", "Service", "Deployment", "PodDisruptionBudget",
	"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
}

func rank(kind string) int {
	for i, k := range applyOrder {
		if k == kind {
			return i
		}
	}
	return len(applyOrder)
}

// TestDeployOnEmptyCluster installs config/default on a fresh API server (envtest: a real
// kube-apiserver and etcd, no CRDs, nothing else) the three ways that matter:
//
//  1. every object is created with server-side dry run, in dependency order, with strict field
//     validation, and must cause neither an error nor a warning;
//  2. `kubectl apply --server-side` of the whole rendering, as a platform team installs it;
//  3. each identity (controllers, facade, operators) then has the access its code needs, and
//     not the rest: SubjectAccessReviews, and informer caches started under the controllers'
//     and the facade's service accounts must sync.
//
// No pod runs (envtest has no scheduler or kubelet): what the API server admits is checked,
// not payoutd's start.
func TestDeployOnEmptyCluster(t *testing.T) {
	data, objs := rendered(t)
	if _, err := os.Stat(filepath.Join(assets(), "kube-apiserver")); err != nil {
		t.Fatalf("no kube-apiserver in %s: run `make control-plane` first: %v", assets(), err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets(), Scheme: scheme.New()}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	seen := &warnings{}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandlerWithContext = seen
	cfg.QPS, cfg.Burst = 200, 400
	sch := scheme.New()
	if err := apiextensionsv1.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("server-side dry run of every object, in dependency order", func(t *testing.T) {
		ordered := append([]*unstructured.Unstructured(nil), objs...)
		sort.SliceStable(ordered, func(i, j int) bool { return rank(ordered[i].GetKind()) < rank(ordered[j].GetKind()) })
		for _, o := range ordered {
			obj := o.DeepCopy()
			if err := c.Create(ctx, obj, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
				t.Errorf("%s: %v", key(o), err)
			}
			for _, w := range seen.take() {
				t.Errorf("%s: warning: %s", key(o), w)
			}
			// A dry run stores nothing, but what comes after needs two things to exist: the API
			// server admits a namespaced object only into a namespace that exists (the
			// NamespaceLifecycle admission plugin checks, dry run or not), and a custom resource
			// only once its CRD is established. So the namespace and the CRDs are really created
			// when their turn comes; everything else stays a dry run.
			switch o.GetKind() {
			case "Namespace":
				if err := c.Create(ctx, o.DeepCopy()); err != nil {
					t.Fatalf("creating %s: %v", key(o), err)
				}
			case "CustomResourceDefinition":
				if err := c.Create(ctx, o.DeepCopy()); err != nil {
					t.Fatalf("creating %s: %v", key(o), err)
				}
				waitEstablished(ctx, t, c, o.GetName())
			}
		}
	})

	t.Run("the dry run reports a pod template the namespace's Pod Security level refuses", func(t *testing.T) {
		// proves the warning check above is live: a facade that may run as root
		bad := find(t, objs, "Deployment", "payout-facade").DeepCopy()
		unstructured.RemoveNestedField(bad.Object, "spec", "template", "spec", "securityContext", "runAsNonRoot")
		if err := c.Create(ctx, bad, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(seen.take(), "\n")
		if !strings.Contains(got, "restricted") || !strings.Contains(got, "runAsNonRoot") {
			t.Fatalf("no Pod Security warning for a pod that may run as root: %q", got)
		}
	})

	t.Run("kubectl apply --server-side installs it", func(t *testing.T) {
		kubectlApply(ctx, t, env, c, data, objs)
	})

	t.Run("with the dashboard and the wallet site (config/dashboard, config/kycsite), kubectl apply --server-side upgrades it", func(t *testing.T) {
		data, objs := renderWith(t, "dashboard", "kycsite")
		kubectlApply(ctx, t, env, c, data, objs)
	})

	t.Run("each identity has the access its code needs, and not more", func(t *testing.T) {
		controller, facade, operator := serviceAccount("payout-controller"), serviceAccount("payout-facade"), user("operator")
		// the operator role is bound by a cluster administrator; here, to a user
		bind(ctx, t, c, "payout-operator-role", operator)
		const acme = "payout-acme" // an account namespace
		for _, a := range []access{
			// the facade: reads through its cache, writes what its endpoints write, never a status
			{facade, true, "list", "", "transfers", "", ""},
			{facade, true, "watch", "", "deposits", "", ""},
			{facade, true, "create", acme, "recipients", "", ""},
			{facade, true, "delete", acme, "recipients", "", ""},
			{facade, true, "create", acme, "quotes", "", ""},
			{facade, true, "patch", acme, "transfers", "", ""},
			{facade, true, "get", "", "claims", "", ""},
			{facade, true, "create", "", "claims", "", ""},
			// a claim is released by the claim controller, which the facade asks in the claim's
			// status (issue 25 item 13): no delete, and no patch, which could set an owner
			// reference for the garbage collector to delete it by
			{facade, false, "delete", "", "claims", "", ""},
			{facade, false, "deletecollection", "", "claims", "", ""},
			{facade, false, "patch", "", "claims", "", ""},
			{facade, false, "update", "", "claims", "", ""},
			{facade, true, "patch", "", "claims", "status", ""},
			// the dashboard's developer area issues and revokes keys (issue 28); it never deletes one
			{facade, true, "create", "", "apikeys", "", ""},
			{facade, true, "patch", "", "apikeys", "", ""},
			{facade, false, "delete", "", "apikeys", "", ""},
			// it records a key's last use in an annotation: the key's status is the controller's alone
			{facade, false, "patch", "", "apikeys", "status", ""},
			{facade, false, "update", "", "apikeys", "status", ""},
			{facade, false, "create", "", "namespaces", "", "core"},
			{facade, false, "update", acme, "transfers", "status", ""},
			{facade, false, "update", acme, "recipients", "status", ""},
			// a transfer it just created, whose recipient was deleted during the create and that
			// nothing else acted on, is withdrawn (docs/api.md)
			{facade, true, "delete", acme, "transfers", "", ""},
			{facade, false, "create", acme, "deposits", "", ""},
			{facade, false, "create", acme, "refunds", "", ""},
			{facade, false, "get", namespace, "secrets", "", "core"},
			{facade, false, "create", namespace, "leases", "", "coordination.k8s.io"},
			{facade, false, "list", "", "namespaces", "", "core"},
			// the controllers: statuses, deposits, cursors, events, their lease, the archiver's deletes
			{controller, true, "update", acme, "transfers", "status", ""},
			{controller, true, "patch", acme, "transfers", "status", ""},
			{controller, true, "create", acme, "deposits", "", ""},
			{controller, true, "update", "", "chaincursors", "status", ""},
			{controller, true, "create", acme, "events", "", "events.k8s.io"},
			{controller, true, "create", namespace, "leases", "", "coordination.k8s.io"},
			{controller, true, "update", namespace, "leases", "", "coordination.k8s.io"},
			{controller, false, "create", "default", "leases", "", "coordination.k8s.io"},
			{controller, false, "create", acme, "transfers", "", ""},
			// the archiver deletes a finished transfer once its archive row is read back (Retention)
			{controller, true, "delete", acme, "transfers", "", ""},
			{controller, false, "create", acme, "recipients", "", ""},
			{controller, false, "get", namespace, "secrets", "", "core"},
			// finalizers (docs/operations/accounts.md): an account's and a refund's; a deleted
			// account's namespace is labelled released, never deleted by the controllers
			{controller, true, "patch", "", "payoutaccounts", "", ""},
			{controller, true, "patch", acme, "refunds", "", ""},
			{controller, true, "patch", "", "namespaces", "", "core"},
			// a key of an older release is bound to its account's UID, or revoked (docs/operations/upgrade.md)
			{controller, true, "patch", "", "apikeys", "", ""},
			{controller, false, "delete", "", "apikeys", "", ""},
			{controller, false, "delete", "", "namespaces", "", "core"},
			// the operators' plugin
			{operator, true, "create", "", "payoutaccounts", "", ""},
			{operator, true, "patch", "", "apikeys", "", ""},
			{operator, true, "list", "", "transfers", "", ""},
			{operator, true, "create", acme, "refunds", "", ""},
			{operator, true, "list", acme, "events", "", "events.k8s.io"},
			{operator, false, "update", acme, "transfers", "status", ""},
			{operator, false, "delete", "", "payoutaccounts", "", ""},
			{operator, false, "get", namespace, "secrets", "", "core"},
			// the metrics endpoints check each scrape (--metrics-secure)
			{controller, true, "create", "", "tokenreviews", "", "authentication.k8s.io"},
			{controller, true, "create", "", "subjectaccessreviews", "", "authorization.k8s.io"},
			{facade, true, "create", "", "tokenreviews", "", "authentication.k8s.io"},
			{facade, true, "create", "", "subjectaccessreviews", "", "authorization.k8s.io"},
		} {
			if got := a.allowed(ctx, t, c); got != a.want {
				t.Errorf("%s may %s %s: %v, want %v", a.who.name, a.verb, a.resourcePath(), got, a.want)
			}
		}
	})

	t.Run("the metrics answer 401 without a token, 403 to an identity without payout-metrics-reader, 200 with it", func(t *testing.T) {
		checkMetricsAuth(ctx, t, cfg, c)
	})

	t.Run("a refund's requestedBy is the identity that creates it: a forged or missing one is refused", func(t *testing.T) {
		operator := user("operator") // bound to payout-operator-role above
		as := rest.CopyConfig(cfg)
		as.Impersonate = rest.ImpersonationConfig{UserName: operator.name, Groups: operator.groups}
		oc, err := client.New(as, client.Options{Scheme: sch})
		if err != nil {
			t.Fatal(err)
		}
		refund := func(requestedBy string) *payoutv1.Refund {
			id := "65f1c0de9a8b7c6d5e4f3a21"
			return &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: id},
				Spec: payoutv1.RefundSpec{Transfer: id, RequestedBy: requestedBy}}
		}
		// the policy is enforced once the API server has loaded it
		if werr := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err = oc.Create(ctx, refund("root"), client.DryRunAll)
			return err != nil, nil
		}); werr != nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "spec.requestedBy must name who creates the refund, operator, not root") {
			t.Fatalf("a refund in another's name: %v (%v)", err, werr)
		}
		if err := oc.Create(ctx, refund(""), client.DryRunAll); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not nobody") {
			t.Errorf("a refund naming nobody: %v", err)
		}
		if err := oc.Create(ctx, refund(operator.name), client.DryRunAll); err != nil {
			t.Errorf("a refund in the operator's own name: %v", err)
		}
	})

	t.Run("the facade cannot delete a claim, nor give it an owner to be collected with, only ask for its release", func(t *testing.T) {
		facade := serviceAccount("payout-facade")
		as := rest.CopyConfig(cfg)
		as.Impersonate = rest.ImpersonationConfig{UserName: facade.name, Groups: facade.groups}
		fc, err := client.New(as, client.Options{Scheme: sch})
		if err != nil {
			t.Fatal(err)
		}
		// the tx-hash claim of a live transfer, which a compromised facade would free
		claim := payoutv1.NewClaim(payoutv1.ClaimTxHash, "0x"+strings.Repeat("ab", 32), payoutv1.ObjectRef{Namespace: "payout-acme", Name: "live"})
		if err := fc.Create(ctx, claim); err != nil {
			t.Fatalf("the facade creates a claim: %v", err)
		}
		if err := fc.Delete(ctx, claim); !apierrors.IsForbidden(err) {
			t.Errorf("the facade deletes a claim: %v", err)
		}
		owned := claim.DeepCopy()
		owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: payoutv1.GroupVersion.String(), Kind: "PayoutAccount", Name: "gone", UID: "0d4b3c2a-1111-4222-8333-444455556666"}}
		if err := fc.Patch(ctx, owned, client.MergeFrom(claim)); !apierrors.IsForbidden(err) {
			t.Errorf("the facade gives a claim a missing owner: %v", err)
		}
		marked := claim.DeepCopy()
		marked.Status.ReleaseRequested = true
		marked.OwnerReferences = owned.OwnerReferences // the status subresource drops it
		if err := fc.Status().Patch(ctx, marked, client.MergeFrom(claim)); err != nil {
			t.Fatalf("the facade asks for a claim's release: %v", err)
		}
		got := &payoutv1.Claim{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(claim), got); err != nil {
			t.Fatal(err)
		}
		if !got.Status.ReleaseRequested || len(got.OwnerReferences) != 0 {
			t.Errorf("after the facade's status patch: releaseRequested %v, owners %v", got.Status.ReleaseRequested, got.OwnerReferences)
		}
	})

	t.Run("an account namespace is deleted only once its account released it, payout-orphaned never", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "payout-guarded", Labels: map[string]string{tenancy.AccountLabel: "guarded"}}}
		if err := c.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		// the policy is enforced once the API server has loaded it
		var err error
		if werr := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err = c.Delete(ctx, ns, client.DryRunAll)
			return err != nil, nil
		}); werr != nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "delete the account instead (kubectl delete payoutaccount guarded)") {
			t.Fatalf("deleting an account namespace: %v (%v)", err, werr)
		}
		if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, client.DryRunAll); !apierrors.IsNotFound(err) {
			t.Errorf("another namespace is not the policy's: %v", err)
		}
		ns.Labels[payoutv1.ReleasedLabel] = "true"
		if err := c.Update(ctx, ns); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, ns); err != nil {
			t.Errorf("a released namespace: %v", err)
		}
		// the deposits of deleted accounts and their refunds: never, released or not
		orphans := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.OrphanNamespace, Labels: map[string]string{payoutv1.ReleasedLabel: "true"}}}
		if err := c.Create(ctx, orphans); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, orphans, client.DryRunAll); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "holds the deposits that arrived for deleted accounts") {
			t.Errorf("deleting %s: %v", payoutv1.OrphanNamespace, err)
		}
	})

	t.Run("informer caches sync under the controllers' and the facade's identities", func(t *testing.T) {
		all := []client.Object{
			&payoutv1.PayoutAccount{}, &payoutv1.APIKey{}, &payoutv1.Recipient{}, &payoutv1.Quote{}, &payoutv1.Transfer{},
			&payoutv1.Claim{}, &payoutv1.Wallet{}, &payoutv1.BlockedWallet{}, &payoutv1.DepositOption{},
			&payoutv1.Deposit{}, &payoutv1.Refund{}, &payoutv1.ChainCursor{},
		}
		// what the facade reads through its cache: payoutd's warm kinds, the kinds of the
		// cache's field indexes (internal/index) and the quotes it looks up
		facadeKinds := []client.Object{
			&payoutv1.PayoutAccount{}, &payoutv1.APIKey{}, &payoutv1.Recipient{}, &payoutv1.Transfer{},
			&payoutv1.Wallet{}, &payoutv1.BlockedWallet{}, &payoutv1.DepositOption{}, &payoutv1.Deposit{}, &payoutv1.Quote{},
			&payoutv1.Claim{}, // the account's cap on claims is counted from its informer (apiserver quotaTally)
		}
		syncs(ctx, t, cfg, serviceAccount("payout-facade"), facadeKinds)
		syncs(ctx, t, cfg, serviceAccount("payout-controller"), all)
	})
}

// kubectlApply applies a rendering as a platform team does, `kubectl apply --server-side` (strict
// field validation), and fails on an error or a warning (a Pod Security violation among them) or
// an object that was not stored.
func kubectlApply(ctx context.Context, t *testing.T, env *envtest.Environment, c client.Client, data []byte, objs []*unstructured.Unstructured) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(assets(), "kubectl"), "--kubeconfig", kubeconfig,
		"apply", "--server-side", "--field-manager=payout-install", "-f", "-")
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("kubectl apply warned:\n%s", stderr.String())
	}
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%s was not stored: %v", key(o), err)
		}
	}
}

func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", name, err)
	}
}

// identity is a user as the API server authenticates it.
type identity struct {
	name   string
	groups []string
}

func serviceAccount(name string) identity {
	return identity{
		name:   "system:serviceaccount:" + namespace + ":" + name,
		groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

func user(name string) identity {
	return identity{name: name, groups: []string{"system:authenticated"}}
}

// bind binds a ClusterRole to a user.
func bind(ctx context.Context, t *testing.T, c client.Client, role string, who identity) {
	t.Helper()
	b := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": role + "-" + who.name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": who.name}},
	}}
	if err := c.Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// access is one question to the authorizer: may who do verb on resource?
type access struct {
	who                                    identity
	want                                   bool
	verb, namespace, resource, subresource string
	group                                  string // "" means payout.stablepay.dev; "core" the core group
}

func (a access) apiGroup() string {
	switch a.group {
	case "":
		return payoutv1.GroupVersion.Group
	case "core":
		return ""
	}
	return a.group
}

func (a access) resourcePath() string {
	r := a.resource
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	if g := a.apiGroup(); g != "" {
		r += "." + g
	}
	if a.namespace != "" {
		r += " in " + a.namespace
	}
	return r
}

func (a access) allowed(ctx context.Context, t *testing.T, c client.Client) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: a.who.name, Groups: a.who.groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: a.namespace, Verb: a.verb, Group: a.apiGroup(), Resource: a.resource, Subresource: a.subresource,
		},
	}}
	// RBAC bindings take effect within moments of their creation: ask again for a little while
	// when the answer is not the one wanted
	deadline := time.Now().Add(3 * time.Second)
	for {
		got := sar.DeepCopy()
		if err := c.Create(ctx, got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed == a.want || time.Now().After(deadline) {
			return got.Status.Allowed
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// syncs starts an informer cache as who for kinds and fails unless every informer syncs: a
// kind the identity may not list and watch never does.
func syncs(ctx context.Context, t *testing.T, base *rest.Config, who identity, kinds []client.Object) {
	t.Helper()
	cfg := rest.CopyConfig(base)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: who.name, Groups: who.groups}
	cfg.WarningHandlerWithContext = rest.NoWarnings{}
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.New(), DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		t.Fatal(err)
	}
	if err := index.Register(ctx, c); err != nil {
		t.Fatal(err)
	}
	informers := map[string]cache.Informer{}
	for _, k := range kinds {
		inf, err := c.GetInformer(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		informers[fmt.Sprintf("%T", k)] = inf
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = c.Start(cctx) }()
	wctx, done := context.WithTimeout(cctx, 20*time.Second)
	defer done()
	if c.WaitForCacheSync(wctx) {
		return
	}
	var stuck []string
	for name, inf := range informers {
		if !inf.HasSynced() {
			stuck = append(stuck, strings.TrimPrefix(name, "*v1alpha1."))
		}
	}
	sort.Strings(stuck)
	t.Errorf("%s: the informers of %s do not sync (no list/watch access?)", who.name, strings.Join(stuck, ", "))
}
