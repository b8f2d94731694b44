package controllers

import (
	"context"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// QuoteReconciler deletes quotes once they have been expired for Retention: a used quote lives
// on in its transfer's snapshot.
type QuoteReconciler struct {
	client.Client
	Clock clock.PassiveClock
	// Retention keeps expired quotes readable for a while (for support questions) before
	// they are deleted.
	Retention time.Duration
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=quotes,verbs=get;list;watch;create;delete

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

	// No status write: nobody reads a quote's condition, and the quote's use is the existence
	// of its transfer. The controller only deletes quotes once they are of no use.
	return ctrl.Result{RequeueAfter: expires.Add(r.Retention).Sub(now)}, nil
}

// SetupWithManager registers the controller.
func (r *QuoteReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&payoutv1.Quote{}).Named("quote").Complete(r)
}
