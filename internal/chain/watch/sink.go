package watch

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
)

// DepositRecorder is the chain.DepositSink of the operator: one Deposit object per log, named
// by payoutv1.DepositName (network, tx hash, log index), in the transfer's namespace and
// labelled with its id. The API server's atomic create makes recording idempotent: a log scanned
// twice (after a restart or a reorg rewind) meets AlreadyExists and is not credited twice.
type DepositRecorder struct {
	Client client.Client
	Log    logr.Logger
	// Skipped, when set, hears of a deposit that cannot be stored at all (its transfer's
	// namespace is gone, or the API server refuses the object as invalid, e.g. an amount of
	// more than 30 digits): it is reported and passed, so that one bad log cannot stop a
	// network's watcher forever.
	Skipped func(d chain.DepositObserved, err error)
}

// RecordDeposits implements chain.DepositSink.
func (r *DepositRecorder) RecordDeposits(ctx context.Context, deposits []chain.DepositObserved) error {
	for _, d := range deposits {
		obj := DepositObject(d)
		err := r.Client.Create(ctx, obj)
		switch {
		case err == nil:
			r.Log.Info("deposit recorded", "deposit", obj.Name, "transfer", d.Transfer, "network", d.Network, "token", d.Token,
				"amount", d.Amount.String(), "tx", d.TxHash, "logIndex", d.LogIndex, "block", d.BlockNumber, "confirmations", d.Confirmations)
		case apierrors.IsAlreadyExists(err):
			// recorded before
		case apierrors.IsInvalid(err) || (apierrors.IsNotFound(err) && !namespaceExists(ctx, r.Client, d.Transfer.Namespace)):
			r.Log.Error(err, "deposit cannot be recorded; passing it", "transfer", d.Transfer, "tx", d.TxHash, "logIndex", d.LogIndex)
			if r.Skipped != nil {
				r.Skipped(d, err)
			}
		default:
			return fmt.Errorf("recording deposit %s of transfer %s: %w", obj.Name, d.Transfer, err)
		}
	}
	return nil
}

// namespaceExists tells a create's NotFound for a missing namespace from any other; when in
// doubt it says the namespace exists, so that the deposit is retried rather than passed.
func namespaceExists(ctx context.Context, c client.Client, ns string) bool {
	err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
	return !apierrors.IsNotFound(err)
}

// DepositObject is the Deposit object of an observed deposit.
func DepositObject(d chain.DepositObserved) *payoutv1.Deposit {
	return &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{
			Name:      payoutv1.DepositName(d.Network, d.TxHash, d.LogIndex),
			Namespace: d.Transfer.Namespace,
			Labels:    map[string]string{payoutv1.DepositTransferLabel: d.Transfer.Name},
		},
		Spec: payoutv1.DepositSpec{
			Transfer: d.Transfer.Name, Network: d.Network, Token: d.Token, Contract: d.Contract,
			To: d.To, From: d.From, Amount: d.Amount.String(), TxHash: d.TxHash, LogIndex: d.LogIndex,
			BlockNumber: d.BlockNumber, BlockHash: d.BlockHash, BlockTime: metav1.NewTime(d.BlockTime),
			Confirmations: d.Confirmations,
		},
	}
}
