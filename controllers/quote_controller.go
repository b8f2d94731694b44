package controllers

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// QuoteReconciler reports whether each quote can still be used and deletes quotes once they
// have been expired for Retention: a consumed quote lives on in its transfer's snapshot.
type QuoteReconciler struct {
	client.Client
	Clock clock.PassiveClock
	// Retention keeps expired quotes readable for a while (for support questions) before
	// they are deleted.
	Retention time.Duration
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=quotes,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=quotes/status,verbs=get;update;patch

func (r *QuoteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	q := &payoutv1.Quote{}
	if err := r.Get(ctx, req.NamespacedName, q); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := r.Clock.Now()
	expires := q.Spec.ExpiresAt.Time
	if deleteAt := expires.Add(r.Retention); !now.Before(deleteAt) {
		uid := q.UID
		err := r.Delete(ctx, q, client.Preconditions{UID: &uid})
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	before := q.DeepCopy()
	var requeue time.Duration
	switch {
	case q.Status.ConsumedBy != "":
		setReady(q, metav1.ConditionFalse, payoutv1.QuoteConsumedReason, "used by transfer "+q.Status.ConsumedBy)
		requeue = expires.Add(r.Retention).Sub(now)
	case now.Before(expires):
		setReady(q, metav1.ConditionTrue, payoutv1.QuoteOpenReason, "usable once until "+expires.UTC().Format(time.RFC3339))
		requeue = expires.Sub(now)
	default:
		setReady(q, metav1.ConditionFalse, payoutv1.QuoteExpiredReason, "expired at "+expires.UTC().Format(time.RFC3339))
		requeue = expires.Add(r.Retention).Sub(now)
	}
	if err := patchStatus(ctx, r.Client, before, q); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// SetupWithManager registers the controller.
func (r *QuoteReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&payoutv1.Quote{}).Named("quote").Complete(r)
}
