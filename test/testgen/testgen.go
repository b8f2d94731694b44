// Package testgen builds valid objects of every kind for tests, changed by functional options:
// testgen.Transfer("0123...", testgen.V2(), func(t *payoutv1.Transfer) { ... }).
package testgen

import (
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Epoch is a fixed instant for deterministic fixtures.
var Epoch = metav1.NewTime(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))

// Account is a PayoutAccount with the local-run defaults.
func Account(name string, mods ...func(*payoutv1.PayoutAccount)) *payoutv1.PayoutAccount {
	a := &payoutv1.PayoutAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: payoutv1.PayoutAccountSpec{
			Email: name + "@example.com", V1Enabled: true, V2WalletScreening: true, SmartWalletDeployed: true,
			Quotas: payoutv1.Quotas{}.Limits(),
		},
	}
	return apply(a, mods)
}

// APIKey is a key of account with a syntactically valid hash.
func APIKey(keyID, account string, mods ...func(*payoutv1.APIKey)) *payoutv1.APIKey {
	k := &payoutv1.APIKey{
		ObjectMeta: metav1.ObjectMeta{Name: keyID},
		Spec: payoutv1.APIKeySpec{
			Account:    account,
			SecretHash: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
		},
	}
	return apply(k, mods)
}

// IBANDetails are the details of a valid EUR iban recipient.
func IBANDetails() payoutv1.RecipientDetails {
	return payoutv1.RecipientDetails{LegalType: "PRIVATE", IBAN: "DE89370400440532013000"}
}

// Recipient is an active EUR iban recipient with the given id in namespace.
func Recipient(namespace string, id int64, mods ...func(*payoutv1.Recipient)) *payoutv1.Recipient {
	r := &payoutv1.Recipient{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: itoa(id)},
		Spec: payoutv1.RecipientSpec{
			ID: id, AccountHolderName: "Jane Doe", Currency: "EUR", Type: "iban",
			Details: IBANDetails(), Country: "DE",
		},
	}
	return apply(r, mods)
}

// Quote is an open EUR quote of 25.00 USD.
func Quote(namespace, id string, mods ...func(*payoutv1.Quote)) *payoutv1.Quote {
	fx, payout, pct := payoutv1.Decimal("0.10"), payoutv1.Decimal("0.40"), payoutv1.Decimal("0.4")
	q := &payoutv1.Quote{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: id},
		Spec: payoutv1.QuoteSpec{
			Account: "acme", SourceAmount: "25.00", TargetCurrency: "EUR", USDToTargetRate: "0.88022588",
			ServiceFeePercent: "0", TargetAmount: "21.56", TransferFee: "0.50",
			FeeFxPercent: &pct, FeeFxAmount: &fx, FeePayoutAmount: &payout,
			EstimatedDelivery: metav1.NewTime(Epoch.Add(24 * time.Hour)), ExpiresAt: metav1.NewTime(Epoch.Add(5 * time.Minute)),
		},
	}
	return apply(q, mods)
}

// Transfer is a v1 USDC-on-Base transfer of 25.00 USD to recipient 123456789.
func Transfer(namespace, id string, mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
	t := &payoutv1.Transfer{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: id},
		Spec: payoutv1.TransferSpec{
			Method: payoutv1.TransferV1, Account: "acme", QuoteID: "5b0c3f9e-2f43-4a8c-9d4e-0d5f6a7b8c9d", Amount: "25.00",
			RecipientID: 123456789,
			Recipient: payoutv1.RecipientSnapshot{
				ID: 123456789, AccountHolderName: "Jane Doe", Currency: "EUR", Type: "iban", Country: "DE", Details: IBANDetails(),
			},
			Quote: payoutv1.QuoteSnapshot{
				SourceAmount: "25.00", ServiceFeePercent: "0", TargetCurrency: "EUR", USDToTargetRate: "0.88022588",
				TargetAmount: "21.56", TransferFee: "0.50", EstimatedDelivery: metav1.NewTime(Epoch.Add(24 * time.Hour)),
			},
			CustomerUUID: "7d0e1c55-8d0f-4d4e-9f59-3c8a5b1f2e3d", CustomerEmail: "payer@example.com",
			SourceToken: payoutv1.TokenUSDC, SourceNetwork: payoutv1.NetworkBase,
			WalletAddress:  "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
			DepositAddress: "0x71C7656EC7ab88b098defB751B7401B5f6d8976F",
			ExpiresAt:      &expires,
		},
	}
	return apply(t, mods)
}

// expires is the v1 deposit deadline of the fixtures, a century after Epoch: suites that run the
// transfer controller on the wall clock must not see a fixture expire (it was once a day after
// Epoch, and every such suite failed on that day). Tests of expiry set their own deadline.
var expires = metav1.NewTime(Epoch.AddDate(100, 0, 0))

// V2 makes a transfer a v2 transfer (fixed deposit address, no expiry).
func V2() func(*payoutv1.Transfer) {
	return func(t *payoutv1.Transfer) { t.Spec.Method, t.Spec.ExpiresAt = payoutv1.TransferV2, nil }
}

// Deposit is the deposit of the fixtures: 25 USDC on Base from the transfer's wallet, at depth.
func Deposit() *payoutv1.DepositFacts {
	at := metav1.NewTime(Epoch.Add(time.Minute))
	return &payoutv1.DepositFacts{
		Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, TxHash: "0x" + strings.Repeat("ab", 32), LogIndex: 0,
		From: "0x8ba1f109551bd432803012645ac136ddd64dba72", Amount: "25000000", BlockNumber: 1234,
		BlockHash: "0x" + strings.Repeat("cd", 32), Confirmations: 3, SeenAt: at, ConfirmedAt: &at,
	}
}

// Failed marks a transfer failed for reason, as the controller would.
func Failed(reason payoutv1.FailureReason, message string) func(*payoutv1.Transfer) {
	return func(t *payoutv1.Transfer) {
		t.Status.Failure = &payoutv1.TransferFailure{Reason: reason, Message: message, At: metav1.NewTime(Epoch.Add(2 * time.Minute))}
		t.Status.Phase = payoutv1.PhaseFailed
	}
}

// Claim is a claim on key held by holder.
func Claim(kind payoutv1.ClaimKind, key string, holder payoutv1.ObjectRef) *payoutv1.Claim {
	key = payoutv1.NormalizeClaimKey(kind, key)
	return &payoutv1.Claim{
		ObjectMeta: metav1.ObjectMeta{Name: payoutv1.ClaimName(kind, key)},
		Spec:       payoutv1.ClaimSpec{Kind: kind, Key: key, Holder: holder},
	}
}

// Wallet is a KYC-verified wallet record of address in namespace.
func Wallet(namespace, address string) *payoutv1.Wallet {
	return &payoutv1.Wallet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: payoutv1.WalletName(address)},
		Spec:       payoutv1.WalletSpec{Address: payoutv1.NormalizeWallet(address), KYCVerified: true, VerifiedBy: "test"},
	}
}

func apply[T any](obj *T, mods []func(*T)) *T {
	for _, m := range mods {
		m(obj)
	}
	return obj
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
