package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The API server enforces an admission policy only a moment after its create: its admission
// plugin loads policies and bindings through informers. A suite whose first spec deleted an
// account namespace at once was let through (seen in CI). So Start waits until each installed
// policy refuses what it must, probing it with a request it refuses once loaded.
//
// A probe touches only objects of a name new to this start: a control plane started on the
// etcd of an earlier one (an etcd restore's) holds what that one's probes left, and a probe
// namespace that was released there is one the guard lets go (a fixed name never turned
// Forbidden there).

// probes waits, by policy name, until the API server enforces the policy.
var probes = map[string]func(ctx context.Context, c client.Client) error{
	"account-namespace-guard": awaitNamespaceGuard,
}

// awaitPolicies waits until the API server enforces every ValidatingAdmissionPolicy it holds,
// a minute at most.
func awaitPolicies(ctx context.Context, c client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	list := &admissionv1.ValidatingAdmissionPolicyList{}
	if err := c.List(ctx, list); err != nil {
		return err
	}
	names := make([]string, 0, len(list.Items))
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	for _, name := range names {
		probe, ok := probes[name]
		if !ok {
			return fmt.Errorf("testenv has no probe that shows admission policy %s enforced: add one to probes (test/testenv/policy.go)", name)
		}
		if err := probe(ctx, c); err != nil {
			return fmt.Errorf("admission policy %s: %w", name, err)
		}
	}
	return nil
}

// awaitNamespaceGuard makes an account namespace of a new name and waits until a dry-run delete
// of it is refused; then it releases the namespace and deletes it (the API server of a test has
// no namespace controller: it stays, terminating).
func awaitNamespaceGuard(ctx context.Context, c client.Client) error {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "testenv-guard-probe-" + hex.EncodeToString(b)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{payoutv1.AccountLabel: name}}}
	if err := c.Create(ctx, ns); err != nil {
		return err
	}
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := c.Delete(ctx, ns, client.DryRunAll)
		if apierrors.IsForbidden(err) {
			return true, nil
		}
		return false, err
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("not enforced a minute after it was installed: a dry-run delete of namespace %s was let through", name)
	}
	if err != nil {
		return err
	}
	patch := client.MergeFrom(ns.DeepCopy())
	ns.Labels[payoutv1.ReleasedLabel] = "true"
	if err := c.Patch(ctx, ns, patch); err != nil {
		return err
	}
	return client.IgnoreNotFound(c.Delete(ctx, ns))
}
