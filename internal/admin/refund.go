package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/refund"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// RequestRefund records an operator's refund of everything transfer transferID owes
// (transfer.OwedOf): the deposit of a failed transfer, and every stray deposit (another
// wallet's, another token's or network's, the excess above the amount, one after the end). Each
// is one Refund object whose name is fixed by what it refunds, in the transfer's namespace and
// labelled with it; the refund controller sends it and the transfer controller records it. It
// only records intent: the controllers check again, against the chain's facts, before any money
// moves.
//
// A Refund is a one-shot object, so a repeated request meets the API server's AlreadyExists for
// what was requested before and changes nothing; when everything owed was requested before, the
// request is refused with refund.ErrAlreadyRequested. A transfer that owes nothing is refused with
// refund.ErrNotRefundable and left unchanged. It returns the transfer and what it requested now.
//
// Deposits recorded in payoutv1.OrphanNamespace, after the transfer's account was deleted, are
// owed whole (transfer.OrphanOwed) and refunded by Refunds in that namespace, whether the
// transfer still exists or not; for a transfer that is gone the returned transfer is only its
// id, its account and that namespace. A stray deposit an operator wrote off (refund.WrittenOff:
// its Sweep with reason WrittenOff) is not requested; a request that finds nothing else owed is
// refused with refund.ErrWrittenOff. Every Refund is created with payoutv1.MoneyFinalizer, so
// that deleting one whose transaction may be on its way cannot make a second request sign again
// (the refund controller removes it).
func RequestRefund(ctx context.Context, c client.Client, transferID, requestedBy string) (*payoutv1.Transfer, []transfer.Owed, error) {
	t, err := FindTransfer(ctx, c, transferID)
	if errors.Is(err, ErrNotFound) {
		return requestOrphanRefunds(ctx, c, transferID, requestedBy, err)
	}
	if err != nil {
		return nil, nil, err
	}
	deps := &payoutv1.DepositList{}
	if err := c.List(ctx, deps, client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: t.Name}); err != nil {
		return nil, nil, fmt.Errorf("listing the deposits of transfer %s: %w", t.Name, err)
	}
	orphans, err := orphanDeposits(ctx, c, t.Name)
	if err != nil {
		return nil, nil, err
	}
	// A v2 deposit whose hash the transfer released is owed by it only while no other transfer
	// holds the hash (that transfer is paid by the transaction): the refund controller takes the
	// hash back before it sends, or refuses.
	reclaimable, err := hashFree(ctx, c, t)
	if err != nil {
		return nil, nil, err
	}
	owed, off, err := unwritten(ctx, c, t.Namespace, transfer.OwedOf(t, deps.Items, reclaimable))
	if err != nil {
		return nil, nil, err
	}
	orphanOwed, orphansOff, err := unwritten(ctx, c, payoutv1.OrphanNamespace, transfer.OrphanOwed(t.Name, orphans))
	if err != nil {
		return nil, nil, err
	}
	if err := refund.Requestable(t, owed, orphanOwed, reclaimable, errors.Join(off, orphansOff)); err != nil {
		return nil, nil, err
	}
	requested, err := createRefunds(ctx, c, t.Name, t.Namespace, owed, requestedBy)
	if err != nil {
		return nil, nil, err
	}
	more, err := createRefunds(ctx, c, t.Name, payoutv1.OrphanNamespace, orphanOwed, requestedBy)
	if err != nil {
		return nil, nil, err
	}
	if requested = append(requested, more...); len(requested) == 0 {
		if len(owed) == 1 && owed[0].Deposit == nil && len(orphanOwed) == 0 {
			return nil, nil, refuse(refund.ErrAlreadyRequested, "a refund of transfer %s is already requested; it is sent once (see kubectl get refund -n %s %s)", t.Name, t.Namespace, t.Name)
		}
		return nil, nil, refuse(refund.ErrAlreadyRequested, "the refunds of everything transfer %s owes are already requested; each is sent once (see kubectl get refunds -A -l %s=%s)",
			t.Name, payoutv1.RefundTransferLabel, t.Name)
	}
	return t, requested, nil
}

// requestOrphanRefunds requests the refunds of a transfer that no longer exists (notFound is
// FindTransfer's answer): the deposits recorded for it in OrphanNamespace after its account was
// deleted.
func requestOrphanRefunds(ctx context.Context, c client.Client, transferID, requestedBy string, notFound error) (*payoutv1.Transfer, []transfer.Owed, error) {
	orphans, err := orphanDeposits(ctx, c, transferID)
	if err != nil {
		return nil, nil, err
	}
	all := transfer.OrphanOwed(transferID, orphans)
	if len(all) == 0 {
		return nil, nil, notFound
	}
	owed, off, err := unwritten(ctx, c, payoutv1.OrphanNamespace, all)
	if err != nil {
		return nil, nil, err
	}
	if len(owed) == 0 {
		return nil, nil, off
	}
	requested, err := createRefunds(ctx, c, transferID, payoutv1.OrphanNamespace, owed, requestedBy)
	if err != nil {
		return nil, nil, err
	}
	if len(requested) == 0 {
		return nil, nil, refuse(refund.ErrAlreadyRequested, "the refunds of every deposit recorded for transfer %s after its account was deleted are already requested; each is sent once (see kubectl get refunds -n %s -l %s=%s)",
			transferID, payoutv1.OrphanNamespace, payoutv1.RefundTransferLabel, transferID)
	}
	t := &payoutv1.Transfer{ObjectMeta: metav1.ObjectMeta{Name: transferID, Namespace: payoutv1.OrphanNamespace},
		Spec: payoutv1.TransferSpec{Account: orphans[0].Labels[payoutv1.AccountLabel]}}
	return t, requested, nil
}

// orphanDeposits lists the deposits recorded in OrphanNamespace for transfer transferID.
func orphanDeposits(ctx context.Context, c client.Client, transferID string) ([]payoutv1.Deposit, error) {
	deps := &payoutv1.DepositList{}
	if err := c.List(ctx, deps, client.InNamespace(payoutv1.OrphanNamespace), client.MatchingLabels{payoutv1.DepositTransferLabel: transferID}); err != nil {
		return nil, fmt.Errorf("listing the deposits recorded for transfer %s after its account was deleted: %w", transferID, err)
	}
	return deps.Items, nil
}

// unwritten is owed (in namespace) without the stray deposits an operator wrote off
// (refund.Unwritten), read from the API server: the Sweep named after each one's Deposit. off
// says why the dropped ones are not refunded.
func unwritten(ctx context.Context, c client.Client, namespace string, owed []transfer.Owed) (kept []transfer.Owed, off error, err error) {
	sweeps := map[string]*payoutv1.Sweep{}
	for _, o := range owed {
		if o.Deposit == nil {
			continue
		}
		name := payoutv1.DepositName(o.Deposit.Network, o.Deposit.TxHash, o.Deposit.LogIndex)
		sw := &payoutv1.Sweep{}
		switch err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, sw); {
		case err == nil:
			sweeps[name] = sw
		case !apierrors.IsNotFound(err):
			return nil, nil, fmt.Errorf("reading whether %s was written off (sweep %s/%s): %w", o.What(), namespace, name, err)
		}
	}
	kept, off = refund.Unwritten(owed, sweeps)
	return kept, off, nil
}

// createRefunds creates a Refund in namespace for each item of owed, with the finalizer; one
// that exists already was requested before. It returns the items requested now.
func createRefunds(ctx context.Context, c client.Client, transferID, namespace string, owed []transfer.Owed, requestedBy string) ([]transfer.Owed, error) {
	var requested []transfer.Owed
	for _, o := range owed {
		rf := &payoutv1.Refund{
			ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: namespace, Labels: map[string]string{payoutv1.RefundTransferLabel: transferID},
				Finalizers: []string{payoutv1.MoneyFinalizer}},
			Spec: payoutv1.RefundSpec{Transfer: transferID, Deposit: o.Deposit, RequestedBy: requestedBy},
		}
		switch err := c.Create(ctx, rf); {
		case err == nil:
			requested = append(requested, o)
		case apierrors.IsAlreadyExists(err):
		default:
			return requested, fmt.Errorf("recording the refund of %s of transfer %s: %w", o.What(), transferID, err)
		}
	}
	return requested, nil
}

// hashFree reports whether no transfer but t holds the claim on t's v2 hash.
func hashFree(ctx context.Context, c client.Client, t *payoutv1.Transfer) (bool, error) {
	if !transfer.Released(t) {
		return false, nil
	}
	key := payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, t.Spec.TxHash)
	held := &payoutv1.Claim{}
	switch err := c.Get(ctx, client.ObjectKey{Name: payoutv1.ClaimName(payoutv1.ClaimTxHash, key)}, held); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading the claim on transaction hash %s: %w", t.Spec.TxHash, err)
	}
	return held.Spec.Holder == payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name}, nil
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
