package pricing

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// wednesday is a quote time inside a business week.
var wednesday = time.Date(2026, 9, 30, 10, 0, 0, 0, time.UTC)

func dec(t testing.TB, s string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("bad decimal literal %q: %v", s, err)
	}
	return d
}

func snapshotTable(t testing.TB) *RateTable {
	t.Helper()
	s, err := NewSnapshot()
	if err != nil {
		t.Fatalf("NewSnapshot: %v", err)
	}
	return s.Table()
}

// wantAPIError checks that err is an *apierror.Error with code and field, and returns it.
func wantAPIError(t *testing.T, err error, code apierror.Code, field string) *apierror.Error {
	t.Helper()
	var e *apierror.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *apierror.Error", err, err)
	}
	if e.Code != code || e.Field != field {
		t.Fatalf("error %q: code %q field %q, want code %q field %q", e.Message, e.Code, e.Field, code, field)
	}
	return e
}

// decEqualPtr compares an optional decimal with its expected text; "" expects nil.
func decEqualPtr(got *decimal.Decimal, want string) bool {
	if want == "" {
		return got == nil
	}
	return got != nil && got.Equal(decimal.RequireFromString(want))
}

func fmtPtr(d *decimal.Decimal) string {
	if d == nil {
		return "<nil>"
	}
	return d.String()
}
