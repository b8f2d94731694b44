package pricing

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestDefaultTariffCoversEveryCurrency(t *testing.T) {
	tariff := DefaultTariff()
	if err := tariff.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tariff) != len(Currencies()) {
		t.Errorf("tariff has %d corridors, want %d", len(tariff), len(Currencies()))
	}
	for _, c := range Currencies() {
		fees, ok := tariff.Corridor(c)
		if !ok {
			t.Errorf("%s has no fee schedule", c)
			continue
		}
		if fees.Rail == "" {
			t.Errorf("%s has no rail", c)
		}
		if fees.ProviderCharge.IsPositive() != (fees.Rail == "SWIFT") {
			t.Errorf("%s: provider charge %s on rail %s; the tariff charges one exactly on SWIFT corridors", c, fees.ProviderCharge, fees.Rail)
		}
	}
	if usd, _ := tariff.Corridor("USD"); !usd.FXPercent.IsZero() {
		t.Errorf("USD payouts carry an FX fee of %s%%", usd.FXPercent)
	}
	// DefaultTariff hands out a copy: changing it must not change prices.
	delete(tariff, "EUR")
	if _, ok := DefaultTariff().Corridor("EUR"); !ok {
		t.Error("deleting from DefaultTariff() changed the built-in tariff")
	}
}

func TestTariffValidateRejects(t *testing.T) {
	good := CorridorFees{Rail: "x", FXPercent: decimal.RequireFromString("0.5"), PayoutFixed: decimal.RequireFromString("0.25")}
	mutate := map[string]func(c *CorridorFees){
		"negative FX":         func(c *CorridorFees) { c.FXPercent = decimal.RequireFromString("-0.1") },
		"FX 100%":             func(c *CorridorFees) { c.FXPercent = decimal.RequireFromString("100") },
		"sum 100%":            func(c *CorridorFees) { c.FXPercent, c.PayoutPercent = decimal.New(60, 0), decimal.New(40, 0) },
		"sub-cent payout":     func(c *CorridorFees) { c.PayoutFixed = decimal.RequireFromString("0.255") },
		"negative provider":   func(c *CorridorFees) { c.ProviderCharge = decimal.RequireFromString("-1") },
		"sub-cent provider":   func(c *CorridorFees) { c.ProviderCharge = decimal.RequireFromString("1.001") },
		"negative delivery":   func(c *CorridorFees) { c.DeliveryBusinessDays = -1 },
		"negative payout pct": func(c *CorridorFees) { c.PayoutPercent = decimal.RequireFromString("-0.01") },
	}
	if err := (Tariff{"EUR": good}).Validate(); err != nil {
		t.Fatalf("good corridor refused: %v", err)
	}
	for name, m := range mutate {
		c := good
		m(&c)
		if err := (Tariff{"EUR": c}).Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, c)
		}
	}
	if err := (Tariff{"BGN": good}).Validate(); err == nil || !strings.Contains(err.Error(), "BGN") {
		t.Errorf("Validate accepted an unsupported currency: %v", err)
	}
}

func TestEstimatedDelivery(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		now  string
		days int
		want string
	}{
		{"2026-09-30T10:00:00Z", 0, "2026-09-30T11:00:00Z"},      // instant rail, Wednesday
		{"2026-10-03T10:00:00Z", 0, "2026-10-03T11:00:00Z"},      // instant rails run on Saturdays
		{"2026-09-30T10:00:00Z", 1, "2026-10-01T10:00:00Z"},      // Wednesday + 1 = Thursday
		{"2026-10-02T10:00:00Z", 1, "2026-10-05T10:00:00Z"},      // Friday + 1 = Monday
		{"2026-10-03T10:00:00Z", 1, "2026-10-05T10:00:00Z"},      // Saturday + 1 = Monday
		{"2026-10-04T23:30:00Z", 1, "2026-10-05T23:30:00Z"},      // Sunday + 1 = Monday
		{"2026-09-30T10:00:00Z", 3, "2026-10-05T10:00:00Z"},      // Wednesday + 3 = Monday
		{"2026-10-02T10:00:00Z", 2, "2026-10-06T10:00:00Z"},      // Friday + 2 = Tuesday
		{"2026-09-30T12:00:00+02:00", 1, "2026-10-01T10:00:00Z"}, // answered in UTC
	}
	for _, c := range cases {
		got := CorridorFees{DeliveryBusinessDays: c.days}.EstimatedDelivery(at(c.now))
		if !got.Equal(at(c.want)) || got.Location() != time.UTC {
			t.Errorf("%s + %d business days = %s, want %s", c.now, c.days, got.Format(time.RFC3339), c.want)
		}
	}
}
