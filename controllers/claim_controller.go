package controllers

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/recovery"
)

// ClaimReconciler releases claims whose holder never appeared, and the claims the facade asks it
// to release (status.releaseRequested). The facade claims a key before it creates the holder; a
// crash between the two would otherwise reserve the key forever. The facade may not delete a
// claim itself: this controller decides, from the holder read past the cache.
type ClaimReconciler struct {
	client.Client
	// APIReader reads past the cache: a holder created a moment ago may not be cached yet, and
	// releasing a live claim would let a key be used twice.
	APIReader client.Reader
	Clock     clock.PassiveClock
	// Grace is how long a claim may wait for its holder.
	Grace time.Duration
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims,verbs=get;list;watch;create;delete;patch

func (r *ClaimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &payoutv1.Claim{}
	if err := r.Get(ctx, req.NamespacedName, claim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, ok := claim.Annotations[recovery.AnnotationProviderPayout]; ok {
		// made by the recovery check for a transfer the cluster lost after the provider paid
		// it: its holder is gone for good, and what it claims must pay no other transfer
		return ctrl.Result{}, nil
	}
	if claim.Status.ReleaseRequested && releasableOnRequest(claim.Spec.Kind) {
		// asked at once, so the key is free a moment after the facade gave up on it; read past
		// the cache, since a cached holder may be older than the one that holds the key now
		holder := holderObject(claim.Spec.Kind)
		err := r.APIReader.Get(ctx, holderKey(claim), holder)
		switch {
		case err == nil && holdsKey(claim, holder):
			return ctrl.Result{}, nil // a request the holder's state refutes: a compromised facade's
		case err != nil && !apierrors.IsNotFound(err):
			return ctrl.Result{}, err
		}
		uid := claim.UID
		return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, claim, client.Preconditions{UID: &uid}))
	}
	// A claim is made just before its holder, so a young claim's holder is usually not created
	// or not cached yet: look only once the grace is over, when a missing holder means release.
	// (Looking at once would find most holders not cached yet and read each past the cache: a
	// read from etcd per create.) A release request on a claim only the controllers release
	// changes nothing here.
	if wait := claim.CreationTimestamp.Add(r.Grace).Sub(r.Clock.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	holder := holderObject(claim.Spec.Kind)
	key := holderKey(claim)
	err := r.Get(ctx, key, holder)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, holder)
	}
	// No status write either way: a bound claim needs nothing, and nobody reads a condition on
	// one (a claim per transfer would otherwise cost a write per transfer). A wallet binding whose
	// account exists holds even while it is being deleted (ClaimBindingFinalizer).
	switch {
	case err == nil:
		return ctrl.Result{}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}
	if controllerutil.ContainsFinalizer(claim, payoutv1.ClaimBindingFinalizer) {
		released := claim.DeepCopy()
		controllerutil.RemoveFinalizer(released, payoutv1.ClaimBindingFinalizer)
		if err := r.Patch(ctx, released, client.MergeFromWithOptions(claim, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if !claim.DeletionTimestamp.IsZero() {
			return ctrl.Result{}, nil // deleted already: gone with its finalizer
		}
	}
	uid := claim.UID
	return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, claim, client.Preconditions{UID: &uid}))
}

// releasableOnRequest reports whether the facade may ask for the release of a claim of kind. It
// never makes a deposit claim or a wallet binding (the controllers do, and release them): one
// binds a deposit to the transfer it pays, the other a wallet to its account.
func releasableOnRequest(kind payoutv1.ClaimKind) bool {
	switch kind {
	case payoutv1.ClaimCustomerUUID, payoutv1.ClaimTxHash, payoutv1.ClaimRecipientID, payoutv1.ClaimTransferID:
		return true
	}
	return false
}

// holdsKey reports whether holder, the object claim names as its holder, holds claim's key: a
// recipient its id by existing, a transfer its own name the same way, its customer_uuid and v2
// hash by carrying them. A transfer whose create lost to another of the same name (the quote was
// used) is not the holder of the loser's customer_uuid, nor one whose hash another won.
func holdsKey(claim *payoutv1.Claim, holder client.Object) bool {
	t, ok := holder.(*payoutv1.Transfer)
	if !ok {
		return true
	}
	switch claim.Spec.Kind {
	case payoutv1.ClaimCustomerUUID:
		return payoutv1.NormalizeClaimKey(payoutv1.ClaimCustomerUUID, t.Spec.CustomerUUID) == claim.Spec.Key
	case payoutv1.ClaimTxHash:
		return t.Spec.TxHash != "" && payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, t.Spec.TxHash) == claim.Spec.Key
	}
	return true
}

// holderKey is where claim's holder is stored.
func holderKey(claim *payoutv1.Claim) client.ObjectKey {
	key := client.ObjectKey{Namespace: claim.Spec.Holder.Namespace, Name: claim.Spec.Holder.Name}
	if claim.Spec.Kind == payoutv1.ClaimWalletBinding {
		key.Namespace = "" // accounts are cluster-scoped; the holder's namespace is the account's
	}
	return key
}

// holderObject is an empty object of the kind that holds claims of kind.
func holderObject(kind payoutv1.ClaimKind) client.Object {
	switch kind {
	case payoutv1.ClaimRecipientID:
		return &payoutv1.Recipient{}
	case payoutv1.ClaimWalletBinding:
		return &payoutv1.PayoutAccount{}
	}
	return &payoutv1.Transfer{}
}

// SetupWithManager registers the controller.
func (r *ClaimReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&payoutv1.Claim{}).Named("claim").Complete(r)
}
