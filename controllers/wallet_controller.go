package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Wallet reasons of the Ready condition.
const (
	WalletVerifiedReason   = "KYCVerified"
	WalletUnverifiedReason = "NotVerified"
	WalletBlockedReason    = "Blocked"
	WalletMisnamedReason   = "NameMismatch"
)

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=wallets;blockedwallets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=wallets/status;blockedwallets/status,verbs=get;update;patch

// SetupWalletControllers report on the wallet records the KYC check and the local risk list
// read. A record not named after its address would never be found by the facade, so it is
// flagged rather than silently ignored.
func SetupWalletControllers(mgr ctrl.Manager) error {
	wallets := &statusReconciler[payoutv1.Wallet, *payoutv1.Wallet]{Client: mgr.GetClient(), observe: observeWallet}
	if err := ctrl.NewControllerManagedBy(mgr).For(&payoutv1.Wallet{}).Named("wallet").Complete(wallets); err != nil {
		return err
	}
	blocked := &statusReconciler[payoutv1.BlockedWallet, *payoutv1.BlockedWallet]{Client: mgr.GetClient(), observe: func(_ context.Context, w *payoutv1.BlockedWallet) (readiness, error) {
		if w.Name != payoutv1.WalletName(w.Spec.Address) {
			return readiness{false, WalletMisnamedReason, "a risk-list entry must be named " + payoutv1.WalletName(w.Spec.Address)}, nil
		}
		return readiness{true, WalletBlockedReason, "wallet screening fails for this address"}, nil
	}}
	return ctrl.NewControllerManagedBy(mgr).For(&payoutv1.BlockedWallet{}).Named("blockedwallet").Complete(blocked)
}

// observeWallet reports whether a wallet record is verified and findable.
func observeWallet(_ context.Context, w *payoutv1.Wallet) (readiness, error) {
	switch {
	case w.Name != payoutv1.WalletName(w.Spec.Address):
		return readiness{false, WalletMisnamedReason, "a wallet record must be named " + payoutv1.WalletName(w.Spec.Address)}, nil
	case w.Spec.KYCVerified:
		return readiness{true, WalletVerifiedReason, "KYC-verified for this account"}, nil
	}
	return readiness{false, WalletUnverifiedReason, "not KYC-verified"}, nil
}
