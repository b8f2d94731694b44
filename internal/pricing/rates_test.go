package pricing

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// ratesJSON builds a snapshot-shaped document for every supported currency at rate 1 (USD and
// the pegged BMD are right, the rest are placeholders), with overrides; an override of "" drops
// the currency.
func ratesJSON(date string, overrides map[string]string) string {
	var parts []string
	for _, c := range Currencies() {
		v := "1"
		if o, ok := overrides[c]; ok {
			if o == "" {
				continue
			}
			v = o
		}
		parts = append(parts, fmt.Sprintf("%q: %s", c, v))
	}
	return fmt.Sprintf(`{"base":"USD","date":%q,"rates":{%s}}`, date, strings.Join(parts, ","))
}

func TestParseRatesSnapshotShape(t *testing.T) {
	tab, err := ParseRates([]byte(ratesJSON("2026-10-01", map[string]string{"EUR": "0.8802258812345", "VND": "25947.76804973"})), "test")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tab.Rate("EUR"); got.String() != "0.8802258812345" {
		t.Errorf("EUR = %s, want the text 0.8802258812345 kept exactly", got)
	}
	if got, _ := tab.Rate("VND"); !got.Equal(dec(t, "25947.76804973")) {
		t.Errorf("VND = %s", got)
	}
	if want := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC); !tab.AsOf.Equal(want) {
		t.Errorf("AsOf = %s, want %s", tab.AsOf, want)
	}
	if tab.Source != "test" || !tab.FetchedAt.IsZero() {
		t.Errorf("Source %q FetchedAt %s", tab.Source, tab.FetchedAt)
	}
	if _, err := tab.Rate("BGN"); err == nil {
		t.Error("Rate(BGN) succeeded")
	}
}

// TestParseRatesFawazahmed0Shape parses the unfiltered upstream file (lower-case keys, 339 of
// them, crypto included) and checks that it yields exactly the embedded, filtered snapshot.
func TestParseRatesFawazahmed0Shape(t *testing.T) {
	raw, err := os.ReadFile("testdata/fawazahmed0-usd-2026.9.29.json")
	if err != nil {
		t.Fatal(err)
	}
	up, err := ParseRates(raw, "upstream")
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshotTable(t)
	if !up.AsOf.Equal(snap.AsOf) {
		t.Errorf("AsOf upstream %s snapshot %s", up.AsOf, snap.AsOf)
	}
	for _, c := range Currencies() {
		a, _ := up.Rate(c)
		b, _ := snap.Rate(c)
		if !a.Equal(b) {
			t.Errorf("%s: upstream %s, snapshot %s", c, a, b)
		}
	}
	if len(up.rates) != 81 {
		t.Errorf("upstream table keeps %d rates, want the 81 supported only", len(up.rates))
	}
}

func TestParseRatesISODateTime(t *testing.T) {
	tab, err := ParseRates([]byte(ratesJSON("2026-10-01T14:30:00+02:00", nil)), "t")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 10, 1, 12, 30, 0, 0, time.UTC); !tab.AsOf.Equal(want) || tab.AsOf.Location() != time.UTC {
		t.Errorf("AsOf = %s, want %s", tab.AsOf, want)
	}
}

func TestParseRatesRejects(t *testing.T) {
	cases := map[string]string{
		"not JSON":          `{"date":`,
		"array":             `[1,2]`,
		"no rates":          `{"date":"2026-10-01"}`,
		"rates not object":  `{"date":"2026-10-01","rates":[1]}`,
		"no date":           strings.Replace(ratesJSON("2026-10-01", nil), `"date":"2026-10-01",`, "", 1),
		"bad date":          ratesJSON("01/10/2026", nil),
		"numeric date":      strings.Replace(ratesJSON("2026-10-01", nil), `"2026-10-01"`, `20261001`, 1),
		"base EUR":          strings.Replace(ratesJSON("2026-10-01", nil), `"USD","date"`, `"EUR","date"`, 1),
		"missing EUR":       ratesJSON("2026-10-01", map[string]string{"EUR": ""}),
		"USD not 1":         ratesJSON("2026-10-01", map[string]string{"USD": "1.01"}),
		"quoted number":     ratesJSON("2026-10-01", map[string]string{"EUR": `"0.88"`}),
		"null":              ratesJSON("2026-10-01", map[string]string{"EUR": "null"}),
		"zero":              ratesJSON("2026-10-01", map[string]string{"EUR": "0"}),
		"negative":          ratesJSON("2026-10-01", map[string]string{"EUR": "-0.88"}),
		"too small":         ratesJSON("2026-10-01", map[string]string{"EUR": "0.00001"}),
		"too large":         ratesJSON("2026-10-01", map[string]string{"VND": "250000000"}),
		"huge exponent":     ratesJSON("2026-10-01", map[string]string{"EUR": "1e2000000000"}),
		"tiny exponent":     ratesJSON("2026-10-01", map[string]string{"EUR": "1e-2000000000"}),
		"long number":       ratesJSON("2026-10-01", map[string]string{"EUR": "0.88" + strings.Repeat("1", 60)}),
		"duplicate by case": strings.Replace(ratesJSON("2026-10-01", nil), `"EUR": 1`, `"EUR": 1, "eur": 1`, 1),
	}
	for name, doc := range cases {
		if _, err := ParseRates([]byte(doc), "t"); err == nil {
			t.Errorf("%s: ParseRates accepted %s", name, doc)
		}
	}
}

func TestParseRatesAcceptsExponentForm(t *testing.T) {
	tab, err := ParseRates([]byte(ratesJSON("2026-10-01", map[string]string{"VND": "2.594776804973e4"})), "t")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tab.Rate("VND"); !got.Equal(dec(t, "25947.76804973")) {
		t.Errorf("VND = %s", got)
	}
}

func TestNewRateTableListsAllMissing(t *testing.T) {
	_, err := NewRateTable(map[string]decimal.Decimal{"USD": decimal.New(1, 0)}, wednesday, "t")
	if err == nil || !strings.Contains(err.Error(), "lack 80 supported currencies") {
		t.Fatalf("err = %v, want it to count the 80 missing currencies", err)
	}
}

func TestEmbeddedSnapshot(t *testing.T) {
	tab := snapshotTable(t)
	if want := time.Date(2026, 9, 29, 0, 0, 0, 0, time.UTC); !tab.AsOf.Equal(want) {
		t.Errorf("AsOf = %s, want %s", tab.AsOf, want)
	}
	if !strings.Contains(tab.Source, "2026.9.29") {
		t.Errorf("Source %q does not name the package version", tab.Source)
	}
	// Values and pegs recorded in shared/data/rates/README.md.
	want := map[string]string{
		"USD": "1", "BMD": "1", "EUR": "0.88022588", "GBP": "0.75538854", "JPY": "157.47729333",
		"INR": "96.08534228", "NGN": "1326.1643995", "ARS": "1525.02726539", "VND": "25947.76804973",
		"AED": "3.6725", "SAR": "3.75", "QAR": "3.64", "BHD": "0.376", "OMR": "0.38485555",
		"NAD": "16.44012275", "ZAR": "16.44012275",
	}
	codes := make([]string, 0, len(want))
	for c := range want {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		got, err := tab.Rate(c)
		if err != nil || !got.Equal(dec(t, want[c])) {
			t.Errorf("snapshot %s = %s (%v), want %s", c, got, err, want[c])
		}
	}
	// The BAM/EUR peg 1.95583 holds to the precision of the data.
	bam, _ := tab.Rate("BAM")
	eur, _ := tab.Rate("EUR")
	if diff := bam.Sub(eur.Mul(dec(t, "1.95583"))).Abs(); diff.GreaterThan(dec(t, "0.00001")) {
		t.Errorf("BAM %s is not 1.95583 × EUR %s (off by %s)", bam, eur, diff)
	}
	src, err := NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := src.Rates(t.Context()); err != nil || !got.AsOf.Equal(tab.AsOf) {
		t.Errorf("Snapshot.Rates = %v, %v", got, err)
	}
}

func TestLoadSnapshotFile(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/usd.json"
	if err := os.WriteFile(path, []byte(ratesJSON("2026-11-20", map[string]string{"EUR": "0.91"})), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSnapshotFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := s.Rates(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if eur, _ := tab.Rate("EUR"); !eur.Equal(dec(t, "0.91")) {
		t.Errorf("EUR = %s, want 0.91 from the file", eur)
	}
	if !tab.AsOf.Equal(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) || !strings.Contains(tab.Source, path) {
		t.Errorf("AsOf %s Source %q", tab.AsOf, tab.Source)
	}

	// A snapshot never goes stale, however old its date.
	old := dir + "/old.json"
	if err := os.WriteFile(old, []byte(ratesJSON("2001-01-01", nil)), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadSnapshotFile(old); err != nil {
		t.Errorf("old snapshot refused: %v", err)
	} else if _, err := s.Rates(t.Context()); err != nil {
		t.Errorf("old snapshot Rates: %v", err)
	}

	bad := dir + "/bad.json"
	if err := os.WriteFile(bad, []byte(ratesJSON("2026-11-20", map[string]string{"EUR": ""})), 0o600); err != nil {
		t.Fatal(err)
	}
	big := dir + "/big.json"
	if err := os.WriteFile(big, []byte(strings.Repeat(" ", maxSnapshotFileSize+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSnapshotFile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("LoadSnapshotFile(big) = %v, want the size limit", err)
	}
	for _, p := range []string{bad, dir + "/absent.json", dir} {
		if _, err := LoadSnapshotFile(p); err == nil {
			t.Errorf("LoadSnapshotFile(%s) succeeded", p)
		}
	}
}
