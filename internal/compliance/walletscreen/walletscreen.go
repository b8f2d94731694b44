// Package walletscreen screens sender wallets against a risk database (spec 4.10 rule 2, 4.11).
// The local risk list is the BlockedWallet resources (`kubectl-payout wallet block`); a
// deployment can put a commercial risk API behind the same interface.
package walletscreen

import (
	"context"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/compliance/remote"
)

// Screener reports whether a wallet is blocked. An error means the answer is unknown; callers
// fail closed with it (an *apierror.Error with code Unavailable).
type Screener interface {
	Blocked(ctx context.Context, wallet string) (bool, error)
}

var errUnavailable = apierror.Errorf(apierror.Unavailable, "wallet screening service unavailable; retry shortly")

// LocalList reads the BlockedWallet resources. EVM addresses compare case-insensitively.
type LocalList struct {
	Reader client.Reader
}

// Blocked looks the wallet up.
func (l LocalList) Blocked(ctx context.Context, wallet string) (bool, error) {
	b := &payoutv1.BlockedWallet{}
	err := l.Reader.Get(ctx, client.ObjectKey{Name: payoutv1.WalletName(wallet)}, b)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, errUnavailable
	}
	return b.Spec.Address == payoutv1.NormalizeWallet(wallet), nil
}

// HTTP asks a risk API:
//
//	GET {BaseURL}/v1/addresses/{wallet}/risk   200 {"blocked": true|false}   anything else: unavailable
type HTTP struct {
	remote.Service
}

// Blocked asks the risk API.
func (h HTTP) Blocked(ctx context.Context, wallet string) (bool, error) {
	var body struct {
		Blocked *bool `json:"blocked"`
	}
	if _, ok := h.Get(ctx, "/v1/addresses/"+url.PathEscape(payoutv1.NormalizeWallet(wallet))+"/risk", &body); !ok || body.Blocked == nil {
		return false, errUnavailable
	}
	return *body.Blocked, nil
}
