package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// setReady records the Ready condition and the generation it was computed for.
func setReady(obj payoutv1.Object, status metav1.ConditionStatus, reason, message string) {
	conds := obj.GetConditions()
	apimeta.SetStatusCondition(&conds, metav1.Condition{
		Type:               payoutv1.ReadyCondition,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: obj.GetGeneration(),
	})
	obj.SetConditions(conds)
	obj.SetObservedGeneration(obj.GetGeneration())
}

// readyStatus is the Ready condition's status from a boolean.
func readyStatus(ok bool) metav1.ConditionStatus {
	if ok {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// patchStatus writes obj's status when it differs from before, so that an unchanged reconcile
// costs no API-server write. The patch carries the resourceVersion it was computed from: the
// facade writes the spec meanwhile (a cancellation, a v2 hash) and another replica or a former
// leader may still write the status, so a decision made on an old version must fail with a
// conflict and be made again, never overwrite a newer one.
func patchStatus(ctx context.Context, c client.Client, before, obj client.Object) error {
	if equality.Semantic.DeepEqual(before, obj) {
		return nil
	}
	return c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}
