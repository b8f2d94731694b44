package transfer

import (
	"strings"

	"github.com/shopspring/decimal"
	"k8s.io/apimachinery/pkg/api/equality"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// TokenDecimals is the precision of every accepted token (USDC and USDT have 6 decimals on every
// network this service watches).
const TokenDecimals = 6

// baseUnits reads an amount in token base units; text that is not one reads as zero, which no
// rule accepts as a payment.
func baseUnits(s string) decimal.Decimal {
	if s == "" || len(s) > 30 || strings.TrimLeft(s, "0123456789") != "" {
		return decimal.Zero // digits only: no sign, exponent or fraction
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}

// expectedUnits is the transfer's amount in token base units: 25.00 USD → 25000000.
func expectedUnits(t *payoutv1.Transfer) decimal.Decimal {
	return ExpectedUnits(string(t.Spec.Amount))
}

// ExpectedUnits converts a USD amount to token base units, one USD per token.
func ExpectedUnits(usd string) decimal.Decimal {
	d, err := decimal.NewFromString(usd)
	if err != nil {
		return decimal.Zero
	}
	return d.Shift(TokenDecimals)
}

// TokenAmount shows base units as a token amount: 25000000 → 25.
func TokenAmount(units string) string {
	d, err := decimal.NewFromString(units)
	if err != nil {
		return units + " base units"
	}
	return d.Shift(-TokenDecimals).String()
}

// statusEqual compares two statuses but for their updatedAt.
func statusEqual(a, b *payoutv1.TransferStatus) bool {
	x, y := a.DeepCopy(), b.DeepCopy()
	x.UpdatedAt, y.UpdatedAt = nil, nil
	return equality.Semantic.DeepEqual(x, y)
}
