// Package kyc answers whether a wallet passed KYC verification for an account (spec 4.5 rule 1,
// 4.10 rule 1). Verification is per account: a wallet verified for one account is unverified
// for every other.
package kyc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
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
// The service must answer within Timeout; a slow or failing service makes every check fail
// closed rather than pass.
type HTTP struct {
	BaseURL string
	// Token, when set, is sent as a Bearer credential.
	Token   string
	Client  *http.Client
	Timeout time.Duration
}

// Verified asks the service.
func (h HTTP) Verified(ctx context.Context, account, wallet string) (bool, error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := fmt.Sprintf("%s/v1/wallets/%s/verification?%s", h.BaseURL, url.PathEscape(payoutv1.NormalizeWallet(wallet)),
		url.Values{"account": {account}}.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, errUnavailable
	}
	req.Header.Set("Accept", "application/json")
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	c := h.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, errUnavailable
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotFound:
		return false, nil
	case http.StatusOK:
	default:
		return false, errUnavailable
	}
	var body struct {
		Verified *bool `json:"verified"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body); err != nil || body.Verified == nil {
		return false, errUnavailable
	}
	return *body.Verified, nil
}
