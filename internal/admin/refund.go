package admin

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/index"
)

// RequestRefund records an operator's refund request on a failed transfer whose deposit
// arrived: a Refund object named after the transfer, which the refund controller sends on Base
// and the transfer controller turns into `refunded`. It only records intent; the controllers
// check the transfer again before any money moves.
//
// The request is a one-shot object, so a repeated request is refused with
// ErrRefundAlreadyRequested by the API server's create itself and changes nothing. Any other
// transfer is refused with ErrNotRefundable and left unchanged.
func RequestRefund(ctx context.Context, c client.Client, transferID, requestedBy string) (*payoutv1.Transfer, error) {
	t, err := FindTransfer(ctx, c, transferID)
	if err != nil {
		return nil, err
	}
	if err := CheckRefundable(t); err != nil {
		return nil, err
	}
	rf := &payoutv1.Refund{
		ObjectMeta: metav1.ObjectMeta{Name: t.Name, Namespace: t.Namespace},
		Spec:       payoutv1.RefundSpec{Transfer: t.Name, RequestedBy: requestedBy},
	}
	if err := c.Create(ctx, rf); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, refuse(ErrRefundAlreadyRequested, "a refund of transfer %s is already requested; it is sent once (see kubectl get refund -n %s %s)", t.Name, t.Namespace, t.Name)
		}
		return nil, fmt.Errorf("recording the refund request of transfer %s: %w", t.Name, err)
	}
	return t, nil
}

// CheckRefundable says why t may not be refunded, or nil when it may: only a failed transfer
// whose deposit arrived from a sender with an address on Base (chain.RefundAddressOnBase: an
// EVM sender, or a Tron sender's 0x body) has money to send back on Base.
func CheckRefundable(t *payoutv1.Transfer) error {
	switch {
	case t.Status.Refund != nil:
		return refuse(ErrRefundAlreadyRequested, "transfer %s is already refunded (transaction %s)", t.Name, t.Status.Refund.TxHash)
	case t.Status.Failure == nil:
		return refuse(ErrNotRefundable, "transfer %s %s: only a failed transfer whose deposit arrived can be refunded",
			t.Name, phaseText(t.Status.Phase))
	case t.Status.Deposit == nil || t.Status.Deposit.ConfirmedAt == nil:
		return refuse(ErrNotRefundable, "transfer %s failed before its deposit arrived: there is nothing to send back", t.Name)
	case !refundableSender(t.Status.Deposit.From):
		return refuse(ErrNotRefundable, "transfer %s: the deposit's sender %q has no address on Base; refund it by hand", t.Name, t.Status.Deposit.From)
	}
	return nil
}

func refundableSender(from string) bool {
	_, ok := chain.RefundAddressOnBase(from)
	return ok
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
