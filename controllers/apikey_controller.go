package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/index"
)

// APIKey reasons of the Ready condition.
const (
	APIKeyActiveReason          = "Active"
	APIKeyRevokedReason         = "Revoked"
	APIKeyAccountMissingReason  = "AccountMissing"
	APIKeyAccountReplacedReason = "AccountReplaced"
)

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=apikeys,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=apikeys/status,verbs=get;update;patch

// apiKeyReconciler binds each key to its account's UID, then reports whether it can
// authenticate.
type apiKeyReconciler struct {
	client.Client
	status *statusReconciler[payoutv1.APIKey, *payoutv1.APIKey]
}

// Reconcile stamps a key of a release before spec.accountUID (none set) with the UID of its
// account and an owner reference when it was issued to that one (payoutv1.KeyUnstamped), and
// revokes it when it was issued to an earlier account of the same name
// (payoutv1.KeyOfAnotherAccount). The facade refuses such a key without this write; the
// revocation keeps it refused by a release that reads no accountUID (a rollback) and says so in
// `kubectl get apikeys`. A key stamped at issue is left alone: the facade refuses it once its
// account is replaced, and the garbage collector deletes it with its account. A spec write ends
// the pass: the key's own event brings the next one, which writes the status.
func (r *apiKeyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := &payoutv1.APIKey{}
	if err := r.Get(ctx, req.NamespacedName, key); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	acct := &payoutv1.PayoutAccount{}
	switch err := r.Get(ctx, client.ObjectKey{Name: key.Spec.Account}, acct); {
	case apierrors.IsNotFound(err):
		// nothing to bind to: an account made later is newer than the key, and revokes it
		return r.status.Reconcile(ctx, req)
	case err != nil:
		return ctrl.Result{}, err
	}
	before := key.DeepCopy()
	switch key.BindingTo(acct) {
	case payoutv1.KeyUnstamped:
		key.BindTo(acct)
	case payoutv1.KeyOfAnotherAccount:
		key.Spec.Revoked = key.Spec.Revoked || key.Spec.AccountUID == ""
	}
	if equality.Semantic.DeepEqual(before, key) {
		return r.status.Reconcile(ctx, req)
	}
	// under the read version: a decision on a key changed meanwhile is made again
	return ctrl.Result{}, client.IgnoreNotFound(r.Patch(ctx, key, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

// apiKeyObserver records when a key was revoked and whether it can authenticate.
func apiKeyObserver(c client.Reader, clk clock.PassiveClock) func(context.Context, *payoutv1.APIKey) (readiness, error) {
	return func(ctx context.Context, key *payoutv1.APIKey) (readiness, error) {
		revoked := readiness{false, APIKeyRevokedReason, "the key was revoked; it never authenticates again"}
		if key.Spec.Revoked && key.Status.RevokedAt == nil {
			now := metav1.NewTime(clk.Now())
			key.Status.RevokedAt = &now
		}
		acct := &payoutv1.PayoutAccount{}
		err := c.Get(ctx, client.ObjectKey{Name: key.Spec.Account}, acct)
		switch {
		case apierrors.IsNotFound(err) && key.Spec.Revoked:
			return revoked, nil
		case apierrors.IsNotFound(err):
			return readiness{false, APIKeyAccountMissingReason, "account " + key.Spec.Account + " does not exist"}, nil
		case err != nil:
			return readiness{}, err
		case key.BindingTo(acct) == payoutv1.KeyOfAnotherAccount:
			return readiness{false, APIKeyAccountReplacedReason, "the key was issued to an earlier account named " + key.Spec.Account +
				", deleted since; it never authenticates as the account of that name now"}, nil
		case key.Spec.Revoked:
			return revoked, nil
		}
		return readiness{true, APIKeyActiveReason, "the key authenticates as account " + key.Spec.Account}, nil
	}
}

// SetupAPIKeyController binds keys to their account's UID and reports on each key whether it can
// authenticate. The facade decides from the spec and the account, not from this condition; it
// is for operators.
func SetupAPIKeyController(mgr ctrl.Manager, clk clock.PassiveClock) error {
	c := mgr.GetClient()
	r := &apiKeyReconciler{Client: c, status: &statusReconciler[payoutv1.APIKey, *payoutv1.APIKey]{Client: c, observe: apiKeyObserver(c, clk)}}
	return ctrl.NewControllerManagedBy(mgr).
		For(&payoutv1.APIKey{}).
		Watches(&payoutv1.PayoutAccount{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			keys := &payoutv1.APIKeyList{}
			if err := c.List(ctx, keys, client.MatchingFields{index.APIKeyAccount: o.GetName()}); err != nil {
				return nil
			}
			reqs := make([]reconcile.Request, 0, len(keys.Items))
			for _, k := range keys.Items {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&k)})
			}
			return reqs
		})).
		Named("apikey").
		Complete(r)
}
