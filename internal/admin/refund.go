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
// request is refused with ErrRefundAlreadyRequested. A transfer that owes nothing is refused with
// ErrNotRefundable and left unchanged. It returns the transfer and what it requested now.
func RequestRefund(ctx context.Context, c client.Client, transferID, requestedBy string) (*payoutv1.Transfer, []transfer.Owed, error) {
	t, err := FindTransfer(ctx, c, transferID)
	if err != nil {
		return nil, nil, err
	}
	deps := &payoutv1.DepositList{}
	if err := c.List(ctx, deps, client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: t.Name}); err != nil {
		return nil, nil, fmt.Errorf("listing the deposits of transfer %s: %w", t.Name, err)
	}
	// A v2 deposit whose hash the transfer released is owed by it only while no other transfer
	// holds the hash (that transfer is paid by the transaction): the refund controller takes the
	// hash back before it sends, or refuses.
	reclaimable, err := hashFree(ctx, c, t)
	if err != nil {
		return nil, nil, err
	}
	owed := transfer.OwedOf(t, deps.Items, reclaimable)
	if transfer.Released(t) && !reclaimable && len(owed) == 0 && t.Status.Refund == nil {
		return nil, nil, refuse(ErrNotRefundable, "transfer %s released its transaction hash %s, and another transfer holds it now: that transaction pays the other transfer, and this one owes nothing",
			t.Name, t.Spec.TxHash)
	}
	if len(owed) == 0 {
		if err := CheckRefundable(t); err != nil {
			return nil, nil, err
		}
		return nil, nil, refuse(ErrNotRefundable, "transfer %s owes nothing", t.Name)
	}
	var requested []transfer.Owed
	for _, o := range owed {
		if o.Deposit == nil {
			if err := CheckRefundable(t); err != nil {
				return nil, nil, err
			}
		}
		rf := &payoutv1.Refund{
			ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: t.Namespace, Labels: map[string]string{payoutv1.RefundTransferLabel: t.Name}},
			Spec:       payoutv1.RefundSpec{Transfer: t.Name, Deposit: o.Deposit, RequestedBy: requestedBy},
		}
		switch err := c.Create(ctx, rf); {
		case err == nil:
			requested = append(requested, o)
		case apierrors.IsAlreadyExists(err):
		default:
			return nil, nil, fmt.Errorf("recording the refund of %s of transfer %s: %w", o.What(), t.Name, err)
		}
	}
	if len(requested) == 0 {
		if len(owed) == 1 && owed[0].Deposit == nil {
			return nil, nil, refuse(ErrRefundAlreadyRequested, "a refund of transfer %s is already requested; it is sent once (see kubectl get refund -n %s %s)", t.Name, t.Namespace, t.Name)
		}
		return nil, nil, refuse(ErrRefundAlreadyRequested, "the refunds of everything transfer %s owes are already requested; each is sent once (see kubectl get refunds -n %s -l %s=%s)",
			t.Name, t.Namespace, payoutv1.RefundTransferLabel, t.Name)
	}
	return t, requested, nil
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

// CheckRefundable says why the deposit of t may not be refunded, or nil when it may: only a
// failed transfer (or one whose completed payout the recipient's bank returned) whose deposit
// arrived from an address the refund wallet can send to has its deposit to send back (its stray
// deposits are owed whatever its status: transfer.OwedOf).
func CheckRefundable(t *payoutv1.Transfer) error {
	switch {
	case t.Status.Refund != nil:
		return refuse(ErrRefundAlreadyRequested, "transfer %s is already refunded (transaction %s)", t.Name, t.Status.Refund.TxHash)
	case !transfer.OwesDeposit(t):
		return refuse(ErrNotRefundable, "transfer %s %s: only a failed transfer whose deposit arrived can be refunded",
			t.Name, phaseText(t.Status.Phase))
	case t.Status.Deposit == nil || t.Status.Deposit.ConfirmedAt == nil:
		return refuse(ErrNotRefundable, "transfer %s failed before its deposit arrived: there is nothing to send back", t.Name)
	}
	if _, ok := chain.RefundAddressOnBase(t.Status.Deposit.From); !ok {
		return refuse(ErrNotRefundable, "transfer %s: the deposit's sender %q has no address on Base, where refunds are sent from (a Solana sender is refunded on Solana, which the refund wallet does not sign for)",
			t.Name, t.Status.Deposit.From)
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
