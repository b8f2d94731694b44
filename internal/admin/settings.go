package admin

import (
	"fmt"

	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// AccountSettings are the settings of a new account as an operator states them. Amounts and
// percentages stay text from the command line to the stored resource, so no value ever passes
// through floating point.
type AccountSettings struct {
	Email string

	KYCRequired, V1Enabled, V2WalletScreening, V2FeeStructure, SmartWalletDeployed bool
	// BindWallets binds the v2 sender wallets proven for the account on the wallet verification
	// site (off by default: the spec has no such rule).
	BindWallets bool

	// MinAmount and MaxAmount are inclusive USD bounds; ServiceFeeFixed is in USD: at most two
	// decimals, 0 to 1000000. ServiceFeePercent is at least 0 and below 100 (1.5 means 1.5%). "" means not set:
	// no bound, and no fee (pricing reads an absent fee as 0).
	MinAmount, MaxAmount, ServiceFeePercent, ServiceFeeFixed string

	// AllowedIPs are CIDRs; a bare address means that one address (/32 or /128). Empty allows
	// every caller.
	AllowedIPs []string

	// Quotas are the account's caps; a cap left 0 takes its default (payoutv1.Quotas.Limits).
	Quotas payoutv1.Quotas
}

// DefaultAccountSettings are the settings of the local-run contract's `default` account, with
// e-mail NAME@example.com: provisioned for v1, KYC not required, v2 wallet screening on, a
// deployed smart-contract wallet, no amount limits, no allow-list, no service fees (0), not on
// the v2 fee structure.
func DefaultAccountSettings(name string) AccountSettings {
	return AccountSettings{
		Email:               name + "@example.com",
		V1Enabled:           true,
		V2WalletScreening:   true,
		SmartWalletDeployed: true,
		Quotas:              payoutv1.Quotas{}.Limits(),
	}
}

// Validate reports the first invalid setting as a *FieldError.
func (s AccountSettings) Validate() error {
	_, err := s.Spec()
	return err
}

// Spec is the PayoutAccount spec of valid settings, with the allow-list in canonical CIDR form.
func (s AccountSettings) Spec() (payoutv1.PayoutAccountSpec, error) {
	if err := validateEmail(s.Email); err != nil {
		return payoutv1.PayoutAccountSpec{}, err
	}
	for _, check := range []error{
		validateUSDAmount(FieldMinAmount, s.MinAmount),
		validateUSDAmount(FieldMaxAmount, s.MaxAmount),
		validatePercent(FieldServiceFeePercent, s.ServiceFeePercent),
		validateUSDAmount(FieldServiceFeeFixed, s.ServiceFeeFixed),
	} {
		if check != nil {
			return payoutv1.PayoutAccountSpec{}, check
		}
	}
	if s.MinAmount != "" && s.MaxAmount != "" &&
		decimal.RequireFromString(s.MinAmount).GreaterThan(decimal.RequireFromString(s.MaxAmount)) {
		return payoutv1.PayoutAccountSpec{}, invalid(FieldMaxAmount, s.MaxAmount,
			fmt.Sprintf("below the min amount %s (both bounds are inclusive)", s.MinAmount))
	}
	allowed, err := normalizeAllowedIPs(s.AllowedIPs)
	if err != nil {
		return payoutv1.PayoutAccountSpec{}, err
	}
	quotas, err := validateQuotas(s.Quotas)
	if err != nil {
		return payoutv1.PayoutAccountSpec{}, err
	}
	return payoutv1.PayoutAccountSpec{
		Email:               s.Email,
		KYCRequired:         s.KYCRequired,
		V1Enabled:           s.V1Enabled,
		V2WalletScreening:   s.V2WalletScreening,
		V2FeeStructure:      s.V2FeeStructure,
		SmartWalletDeployed: s.SmartWalletDeployed,
		BindWallets:         s.BindWallets,
		AmountLimits: payoutv1.AmountLimits{
			Min: optional[payoutv1.USDAmount](s.MinAmount),
			Max: optional[payoutv1.USDAmount](s.MaxAmount),
		},
		ServiceFee: payoutv1.ServiceFee{
			Percent: optional[payoutv1.Decimal](s.ServiceFeePercent),
			Fixed:   optional[payoutv1.USDAmount](s.ServiceFeeFixed),
		},
		AllowedIPs: allowed,
		Quotas:     quotas,
	}, nil
}

// validateQuotas applies the schema's rules on quotas (its bounds, and claims enough for every
// open transfer and active recipient), so that the operator reads which flag is wrong.
func validateQuotas(q payoutv1.Quotas) (payoutv1.Quotas, error) {
	for _, c := range []struct {
		field string
		v     int32
		max   int32
	}{
		{FieldMaxOpenV1, q.MaxOpenV1Transfers, 100000},
		{FieldMaxOpenV2, q.MaxOpenV2Transfers, 100000},
		{FieldMaxRecipients, q.MaxActiveRecipients, 1000000},
		{FieldMaxClaims, q.MaxClaims, 10000000},
	} {
		if c.v < 0 || c.v > c.max {
			return payoutv1.Quotas{}, invalid(c.field, fmt.Sprint(c.v), fmt.Sprintf("must be from 1 to %d", c.max))
		}
	}
	q = q.Limits()
	if need := int64(q.MaxOpenV1Transfers) + int64(q.MaxOpenV2Transfers) + int64(q.MaxActiveRecipients); int64(q.MaxClaims) < need {
		return payoutv1.Quotas{}, invalid(FieldMaxClaims, fmt.Sprint(q.MaxClaims),
			fmt.Sprintf("below %d, the open v1 and v2 transfers and active recipients the other caps allow (each holds a claim)", need))
	}
	return q, nil
}

// optional maps "" (not set) to an absent field.
func optional[T ~string](v string) *T {
	if v == "" {
		return nil
	}
	t := T(v)
	return &t
}
