package admin

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/tenancy"
)

// VerifiedBy is recorded on the wallets an operator verifies through this package.
const VerifiedBy = "kubectl-payout"

// VerifyWallet marks a wallet KYC-verified for one account. The record is named after the
// normalised address, so every spelling of an EVM address lands on the same record.
func VerifyWallet(ctx context.Context, c client.Client, account, address string) error {
	if err := ValidateWalletAddress(address); err != nil {
		return err
	}
	acct, err := GetAccount(ctx, c, account)
	if err != nil {
		return err
	}
	// Normally already there; ensuring it keeps verify working for an account stored while no
	// controller ran.
	if err := tenancy.EnsureNamespace(ctx, c, acct); err != nil {
		return fmt.Errorf("creating the namespace of account %q: %w", account, err)
	}
	want := &payoutv1.Wallet{
		ObjectMeta: metav1.ObjectMeta{Namespace: payoutv1.AccountNamespace(account), Name: payoutv1.WalletName(address)},
		Spec:       payoutv1.WalletSpec{Address: payoutv1.NormalizeWallet(address), KYCVerified: true, VerifiedBy: VerifiedBy},
	}
	err = createOrUpdate(ctx, c, want, &payoutv1.Wallet{}, func(w *payoutv1.Wallet) bool {
		if w.Spec.KYCVerified && w.Spec.VerifiedBy == VerifiedBy {
			return false
		}
		w.Spec.KYCVerified, w.Spec.VerifiedBy = true, VerifiedBy
		return true
	})
	if err != nil {
		return fmt.Errorf("recording wallet %s as verified for account %q: %w", want.Spec.Address, account, err)
	}
	return nil
}

// BlockWallet puts a wallet on the local risk list, for every account. Blocking a blocked
// wallet changes nothing, except that a new non-empty reason replaces the old one.
func BlockWallet(ctx context.Context, c client.Client, address, reason string) error {
	if err := ValidateWalletAddress(address); err != nil {
		return err
	}
	if err := validateBlockReason(reason); err != nil {
		return err
	}
	want := &payoutv1.BlockedWallet{
		ObjectMeta: metav1.ObjectMeta{Name: payoutv1.WalletName(address)},
		Spec:       payoutv1.BlockedWalletSpec{Address: payoutv1.NormalizeWallet(address), Reason: reason},
	}
	err := createOrUpdate(ctx, c, want, &payoutv1.BlockedWallet{}, func(b *payoutv1.BlockedWallet) bool {
		if reason == "" || b.Spec.Reason == reason {
			return false
		}
		b.Spec.Reason = reason
		return true
	})
	if err != nil {
		return fmt.Errorf("blocking wallet %s: %w", want.Spec.Address, err)
	}
	return nil
}

// createOrUpdate creates want, or when it exists applies mutate to the stored object and
// patches what mutate changed if it reports a change, re-reading on conflicts. A patch, not an
// update: a field of a newer release is not in current, and an update would drop it
// (docs/operations/upgrade.md).
func createOrUpdate[T client.Object](ctx context.Context, c client.Client, want, current T, mutate func(T) bool) error {
	err := c.Create(ctx, want)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(want), current); err != nil {
			return err
		}
		before := current.DeepCopyObject().(client.Object)
		if !mutate(current) {
			return nil
		}
		return c.Patch(ctx, current, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
}
