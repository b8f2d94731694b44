package apiserver

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// cancelOpenTransfers asks every transfer of rc's lineage that is still in progress to stop
// (spec 3.2: DELETE recipient) and counts the requests recorded. The transfers are listed past
// the cache, after the recipient's deactivation, so a transfer created a moment ago is found.
// Each request is written under the resourceVersion just read: when the transfer controller
// recorded the payout intent meanwhile, the write conflicts, the transfer is read again, and
// it is left to complete. The facade never writes a transfer's status.
func (s *Server) cancelOpenTransfers(ctx context.Context, rc *payoutv1.Recipient, message string) (int, error) {
	list := &payoutv1.TransferList{}
	if err := s.cfg.APIReader.List(ctx, list, client.InNamespace(rc.Namespace),
		client.MatchingLabels{payoutv1.RecipientLineageLabel: rc.Lineage()}); err != nil {
		return 0, err
	}
	cancelled := 0
	for i := range list.Items {
		ok, err := s.cancelTransfer(ctx, &list.Items[i], payoutv1.FailureRecipientDeleted, message)
		if err != nil {
			return cancelled, err
		}
		if ok {
			cancelled++
		}
	}
	return cancelled, nil
}

// cancelTransfer records a cancellation request on t unless it can no longer be stopped (its
// payout intent is recorded, it failed or completed, or it was cancelled before). It reports
// whether this call recorded the request.
func (s *Server) cancelTransfer(ctx context.Context, t *payoutv1.Transfer, reason payoutv1.FailureReason, message string) (bool, error) {
	cur := t.DeepCopy()
	recorded := false
	err := retryConflict(ctx, func() error {
		if !transfer.Cancellable(cur) {
			recorded = false
			return nil
		}
		next := cur.DeepCopy()
		next.Spec.Cancellation = &payoutv1.TransferCancellation{Reason: reason, Message: message, RequestedAt: metav1.NewTime(s.cfg.Clock.Now())}
		err := s.cfg.Client.Patch(ctx, next, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			if gerr := s.cfg.APIReader.Get(ctx, client.ObjectKeyFromObject(t), cur); gerr != nil {
				return gerr
			}
			return err
		}
		if err != nil {
			return err
		}
		recorded = true
		return nil
	})
	return recorded, err
}

// retryConflict runs fn again while it fails with a conflict, a bounded number of times with
// growing, jittered pauses: a hot object must not spin a request for ever.
func retryConflict(ctx context.Context, fn func() error) error {
	backoff := wait.Backoff{Steps: 6, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.5}
	err := retry.OnError(backoff, apierrors.IsConflict, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn()
	})
	if apierrors.IsConflict(err) {
		return apierror.Errorf(apierror.Unavailable, "the object is being changed by another request; retry shortly")
	}
	return err
}
