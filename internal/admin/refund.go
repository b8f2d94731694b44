package admin

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/index"
)

// RequestRefund records an operator's refund request on a failed transfer whose deposit
// arrived; the transfer controller sends the deposit back and sets refunded. It only records
// intent, guarded by the resourceVersion, so a transfer that changed meanwhile is judged again.
//
// A repeated request is refused with ErrRefundAlreadyRequested and changes nothing, so a
// repeated `kubectl payout refund` exits non-zero rather than suggesting a second refund.
// Any other transfer is refused with ErrNotRefundable and left unchanged.
func RequestRefund(ctx context.Context, c client.Client, transferID string) (*payoutv1.Transfer, error) {
	found, err := FindTransfer(ctx, c, transferID)
	if err != nil {
		return nil, err
	}
	t := &payoutv1.Transfer{}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(found), t); err != nil {
			return fmt.Errorf("reading transfer %s: %w", transferID, err)
		}
		if err := CheckRefundable(t); err != nil {
			return err
		}
		t.Spec.RefundRequested = true
		return c.Update(ctx, t)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// CheckRefundable says why t may not be refunded, or nil when it may: only a failed transfer
// whose deposit arrived has money to send back.
func CheckRefundable(t *payoutv1.Transfer) error {
	switch {
	case t.Status.Phase == payoutv1.PhaseRefunded:
		return refuse(ErrRefundAlreadyRequested, "transfer %s is already refunded (transaction %s)", t.Name, orNone(t.Status.RefundTxHash))
	case t.Spec.RefundRequested:
		return refuse(ErrRefundAlreadyRequested, "a refund of transfer %s is already requested; it is sent once", t.Name)
	case t.Status.Phase != payoutv1.PhaseFailed:
		return refuse(ErrNotRefundable, "transfer %s %s: only a failed transfer whose deposit arrived can be refunded",
			t.Name, phaseText(t.Status.Phase))
	case t.Status.Deposit == nil:
		return refuse(ErrNotRefundable, "transfer %s failed before its deposit arrived: there is nothing to send back", t.Name)
	}
	return nil
}

// FindTransfer finds a transfer by id in whichever account namespace holds it.
func FindTransfer(ctx context.Context, c client.Client, transferID string) (*payoutv1.Transfer, error) {
	if err := ValidateTransferID(transferID); err != nil {
		return nil, err
	}
	// metadata.name is a field selector of every resource on the API server, and an index of
	// the same name in the operator's cache (internal/index), so both kinds of client work.
	list := &payoutv1.TransferList{}
	if err := c.List(ctx, list, client.MatchingFields{index.Name: transferID}); err != nil {
		return nil, fmt.Errorf("looking up transfer %s: %w", transferID, err)
	}
	switch len(list.Items) {
	case 0:
		return nil, refuse(ErrNotFound, "transfer %s does not exist", transferID)
	case 1:
		return &list.Items[0], nil
	}
	namespaces := make([]string, len(list.Items))
	for i, t := range list.Items {
		namespaces[i] = t.Namespace
	}
	return nil, fmt.Errorf("transfer id %s is used in several namespaces (%s); transfer ids must be unique",
		transferID, strings.Join(namespaces, ", "))
}

func phaseText(p payoutv1.TransferPhase) string {
	if p == "" {
		return "has no status yet"
	}
	return "is " + string(p)
}

func orNone(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}
