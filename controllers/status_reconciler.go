package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// readiness is what an observer found: the Ready condition to record.
type readiness struct {
	ready   bool
	reason  string
	message string
}

// statusReconciler reconciles the kinds whose status is a pure function of their spec and of
// objects in the cache: load, observe, record Ready, write status only if it changed.
type statusReconciler[T any, PT interface {
	*T
	payoutv1.Object
}] struct {
	client.Client
	// observe derives the kind's own status fields in memory and returns its readiness.
	observe func(ctx context.Context, obj PT) (readiness, error)
}

func (r *statusReconciler[T, PT]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := PT(new(T))
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := obj.DeepCopyObject().(PT)
	got, err := r.observe(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	setReady(obj, readyStatus(got.ready), got.reason, got.message)
	return ctrl.Result{}, patchStatus(ctx, r.Client, before, obj)
}
