package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/tenancy"
)

// Account reasons of the Ready condition.
const (
	AccountNamespaceReadyReason       = "NamespaceReady"
	AccountNamespaceTerminatingReason = "NamespaceTerminating"
	AccountNamespaceConflictReason    = "NamespaceOwnedElsewhere"
)

// PayoutAccountReconciler gives every account its namespace, the tenancy boundary that holds
// its recipients, quotes, transfers and wallets.
type PayoutAccountReconciler struct {
	client.Client
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *PayoutAccountReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	acct := &payoutv1.PayoutAccount{}
	if err := r.Get(ctx, req.NamespacedName, acct); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !acct.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := acct.DeepCopy()
	nsName := payoutv1.AccountNamespace(acct.Name)

	ns := &corev1.Namespace{}
	err := r.Get(ctx, client.ObjectKey{Name: nsName}, ns)
	switch {
	case apierrors.IsNotFound(err):
		ns = tenancy.Namespace(acct)
		if err := tenancy.EnsureNamespace(ctx, r.Client, acct); err != nil {
			return ctrl.Result{}, err
		}
	case err != nil:
		return ctrl.Result{}, err
	}

	acct.Status.Namespace = nsName
	switch {
	case ns.Labels[tenancy.AccountLabel] != "" && ns.Labels[tenancy.AccountLabel] != acct.Name:
		setReady(acct, metav1.ConditionFalse, AccountNamespaceConflictReason,
			fmt.Sprintf("namespace %s belongs to account %s", nsName, ns.Labels[tenancy.AccountLabel]))
	case !ns.DeletionTimestamp.IsZero():
		setReady(acct, metav1.ConditionFalse, AccountNamespaceTerminatingReason, "namespace "+nsName+" is being deleted")
	default:
		setReady(acct, metav1.ConditionTrue, AccountNamespaceReadyReason, "objects of the account live in namespace "+nsName)
	}
	return ctrl.Result{}, patchStatus(ctx, r.Client, before, acct)
}

// SetupWithManager registers the controller.
func (r *PayoutAccountReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&payoutv1.PayoutAccount{}).
		Owns(&corev1.Namespace{}).
		Named("payoutaccount").
		Complete(r)
}
