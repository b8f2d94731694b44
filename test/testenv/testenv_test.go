package testenv

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// TestGuardEnforcedOnceStarted: the first thing a suite does may be to delete an account's
// namespace, and the guard of config/policy refuses it; also on a control plane started again on
// the etcd of an earlier one (an etcd restore's), which holds what that one left.
func TestGuardEnforcedOnceStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test starts kube-apiserver and etcd")
	}
	data := filepath.Join(t.TempDir(), "etcd")
	ctx := context.Background()
	for run := range 2 {
		env, err := Start(func(e *envtest.Environment) {
			e.ControlPlane.Etcd = &envtest.Etcd{DataDir: data, StartTimeout: time.Minute}
		})
		if err != nil {
			t.Fatalf("start %d: %v", run+1, err)
		}
		name := fmt.Sprintf("guarded-%d", run)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.AccountNamespace(name),
			Labels: map[string]string{payoutv1.AccountLabel: name}}}
		err = env.Client.Create(ctx, ns)
		if err == nil {
			err = env.Client.Delete(ctx, ns)
		}
		_ = env.Stop()
		if !apierrors.IsForbidden(err) {
			t.Fatalf("start %d: deleting an account's namespace at once: %v, want Forbidden", run+1, err)
		}
	}
}
