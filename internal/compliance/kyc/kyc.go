// Package kyc answers whether a wallet passed KYC verification for an account (spec 4.5 rule 1,
// 4.10 rule 1). Verification is per account: a wallet verified for one account is unverified
// for every other.
package kyc

import (
	"context"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/compliance/remote"
)

// Verifier answers whether wallet is KYC-verified for account. An error means the answer is
// unknown; callers fail closed with it (it is an *apierror.Error with code Unavailable).
type Verifier interface {
	Verified(ctx context.Context, account, wallet string) (bool, error)
}

var errUnavailable = apierror.Errorf(apierror.Unavailable, "wallet verification service unavailable; retry shortly")

// Store is the local verification store: the Wallet records that `kubectl-payout wallet
// verify` writes into the account's namespace.
type Store struct {
	// Reader is normally the informer cache.
	Reader client.Reader
}

// Verified reads the wallet's record.
func (s Store) Verified(ctx context.Context, account, wallet string) (bool, error) {
	w := &payoutv1.Wallet{}
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: payoutv1.AccountNamespace(account), Name: payoutv1.WalletName(wallet)}, w)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, errUnavailable
	}
	return w.Spec.KYCVerified && w.Spec.Address == payoutv1.NormalizeWallet(wallet), nil
}

// HTTP asks an external verification service:
//
//	GET {BaseURL}/v1/wallets/{wallet}/verification?account={account}
//	200 {"verified": true|false}   404: not verified   anything else: unavailable
//
// A slow or failing service makes every check fail closed rather than pass.
type HTTP struct {
	remote.Service
}

// Verified asks the service.
func (h HTTP) Verified(ctx context.Context, account, wallet string) (bool, error) {
	var body struct {
		Verified *bool `json:"verified"`
	}
	path := "/v1/wallets/" + url.PathEscape(payoutv1.NormalizeWallet(wallet)) + "/verification?" + url.Values{"account": {account}}.Encode()
	status, ok := h.Get(ctx, path, &body, http.StatusNotFound)
	switch {
	case !ok:
		return false, errUnavailable
	case status == http.StatusNotFound:
		return false, nil
	case body.Verified == nil:
		return false, errUnavailable
	}
	return *body.Verified, nil
}
