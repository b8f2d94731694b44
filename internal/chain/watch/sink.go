package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
//
// A deposit for a transfer whose account was deleted is recorded in payoutv1.OrphanNamespace
// instead, labelled with the transfer and the account: its namespace is released (nothing was
// owed when the account went), being deleted (it takes no new object) or gone. Nothing pays out
// of it there; `kubectl payout refund ID` sends it back to its sender (transfer.OrphanOwed), and
// the event on the network's ChainCursor says so. A log is recorded in one namespace or the
// other: once a namespace is released or terminating it never takes a deposit again.
type DepositRecorder struct {
	Client client.Client
	Log    logr.Logger
	// Orphaned, when set, hears of a deposit recorded in OrphanNamespace, with its object.
	Orphaned func(d chain.DepositObserved, obj *payoutv1.Deposit)
	// Skipped, when set, hears of a deposit that cannot be stored at all (the API server
	// refuses the object as invalid, e.g. an amount of more than 30 digits): it is reported and
	// passed, so that one bad log cannot stop a network's watcher forever.
	Skipped func(d chain.DepositObserved, err error)
}

// RecordDeposits implements chain.DepositSink.
func (r *DepositRecorder) RecordDeposits(ctx context.Context, deposits []chain.DepositObserved) error {
	for _, d := range deposits {
		obj := DepositObject(d)
		var err error
		if r.released(ctx, d.Transfer.Namespace) {
			err = errReleased
		} else {
			err = r.Client.Create(ctx, obj)
		}
		switch {
		case err == nil:
			r.Log.Info("deposit recorded", "deposit", obj.Name, "transfer", d.Transfer, "network", d.Network, "token", d.Token,
				"amount", d.Amount.String(), "tx", d.TxHash, "logIndex", d.LogIndex, "block", d.BlockNumber, "confirmations", d.Confirmations)
		case apierrors.IsAlreadyExists(err):
			// recorded before
		case errors.Is(err, errReleased) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) ||
			(apierrors.IsNotFound(err) && !namespaceExists(ctx, r.Client, d.Transfer.Namespace)):
			if err := r.recordOrphan(ctx, d); err != nil {
				return err
			}
		case apierrors.IsInvalid(err):
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

// errReleased stands for the create a released namespace is not asked for.
var errReleased = errors.New("the namespace is released")

// released reports whether the account namespace ns is released (payoutv1.ReleasedLabel), from
// the cache; when in doubt it says not, and the create decides.
func (r *DepositRecorder) released(ctx context.Context, ns string) bool {
	n := &corev1.Namespace{}
	return r.Client.Get(ctx, client.ObjectKey{Name: ns}, n) == nil && payoutv1.NamespaceReleased(n.Labels)
}

// recordOrphan records d in OrphanNamespace, creating the namespace when it is missing.
func (r *DepositRecorder) recordOrphan(ctx context.Context, d chain.DepositObserved) error {
	obj := OrphanDepositObject(d)
	err := r.Client.Create(ctx, obj)
	if apierrors.IsNotFound(err) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.OrphanNamespace}}
		if err := r.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s for the deposits of deleted accounts: %w", payoutv1.OrphanNamespace, err)
		}
		err = r.Client.Create(ctx, obj)
	}
	switch {
	case err == nil:
		r.Log.Info("deposit of a deleted account recorded", "namespace", obj.Namespace, "deposit", obj.Name, "transfer", d.Transfer,
			"network", d.Network, "token", d.Token, "amount", d.Amount.String(), "tx", d.TxHash, "logIndex", d.LogIndex)
		if r.Orphaned != nil {
			r.Orphaned(d, obj)
		}
		return nil
	case apierrors.IsAlreadyExists(err):
		return nil
	}
	return fmt.Errorf("recording deposit %s of transfer %s (its account is deleted) in %s: %w", obj.Name, d.Transfer, payoutv1.OrphanNamespace, err)
}

// namespaceExists tells a create's NotFound for a missing namespace from any other; when in
// doubt it says the namespace exists, so that the deposit is retried rather than passed.
func namespaceExists(ctx context.Context, c client.Client, ns string) bool {
	err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
	return !apierrors.IsNotFound(err)
}

// OrphanDepositObject is the Deposit object of a deposit whose transfer's account was deleted:
// in OrphanNamespace, labelled with the transfer and the account.
func OrphanDepositObject(d chain.DepositObserved) *payoutv1.Deposit {
	obj := DepositObject(d)
	obj.Namespace = payoutv1.OrphanNamespace
	obj.Labels[payoutv1.AccountLabel] = strings.TrimPrefix(d.Transfer.Namespace, payoutv1.AccountNamespacePrefix)
	return obj
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
