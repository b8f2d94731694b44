package notify

import (
	"bytes"
	"flag"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking the change):\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

const (
	testIBAN    = "DE89370400440532013000"
	testAccount = "000123456789"
)

func sentTransfer() Transfer {
	return Transfer{
		ID:                "65f0c1d2e3f4a5b6c7d8e9f0",
		AmountUSD:         decimal.RequireFromString("1000"),
		TargetAmount:      decimal.RequireFromString("912.4"),
		TargetCurrency:    "EUR",
		Recipient:         Recipient{HolderName: "Jane Doe", Type: "iban", Account: testIBAN},
		Status:            "completed",
		CreatedAt:         ts("2026-01-02T14:58:11Z"),
		UpdatedAt:         ts("2026-01-02T15:04:05+01:00"),
		EstimatedDelivery: ts("2026-01-03T15:00:00Z"),
	}
}

func failedTransfer() Transfer {
	return Transfer{
		ID:             "0a1b2c3d4e5f60718293a4b5",
		AmountUSD:      decimal.RequireFromString("12500.5"),
		TargetAmount:   decimal.RequireFromString("12480.25"),
		TargetCurrency: "USD",
		Recipient:      Recipient{HolderName: "Simulated   Failure\n<script>x</script>", Type: "aba", Account: testAccount},
		Status:         "failed",
		Error:          "The recipient's bank rejected the payout:\r\naccount closed (code R02). The deposit stays with the service until an operator returns it to the sending wallet.",
		CreatedAt:      ts("2026-01-02T10:00:00Z"),
		UpdatedAt:      ts("2026-01-02T10:01:30Z"),
	}
}

// TestRenderGolden pins the complete output: subject, Message-ID, both bodies and the message
// as it goes on the wire.
func TestRenderGolden(t *testing.T) {
	from := &mail.Address{Name: "Payouts", Address: "payouts@example.com"}
	cases := []struct {
		name string
		n    Notification
	}{
		{"payout-sent", PayoutSent(sentTransfer(), "Customer <customer@example.org>")},
		{"payout-failed", Failed(failedTransfer(), "customer@example.org")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Render(c.n, "payouts.example.com")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".txt", []byte(m.Text))
			golden(t, c.name+".html", []byte(m.HTML))

			gm, err := composeMsg(from, m, func() time.Time { t.Fatal("Date must come from the message"); return time.Time{} })
			if err != nil {
				t.Fatal(err)
			}
			var wire bytes.Buffer
			if _, err := gm.WriteTo(&wire); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".eml", wire.Bytes())

			// The wire form is a message net/mail reads, with the headers the customer sees.
			pm, err := mail.ReadMessage(bytes.NewReader(wire.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if got := pm.Header.Get("Message-Id"); got != m.MessageID {
				t.Errorf("Message-ID on the wire %q, rendered %q", got, m.MessageID)
			}
			if to, _ := pm.Header.AddressList("To"); len(to) != 1 || to[0].Address != "customer@example.org" {
				t.Errorf("To = %v", to)
			}
			if d, err := pm.Header.Date(); err != nil || !d.Equal(c.n.Transfer.UpdatedAt) {
				t.Errorf("Date = %v, %v; want the outcome's time %v", d, err, c.n.Transfer.UpdatedAt)
			}
		})
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	n := PayoutSent(sentTransfer(), "customer@example.org")
	a, err := Render(n, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Render(n, "example.com")
	if a != b {
		t.Fatalf("two renderings differ:\n%+v\n%+v", a, b)
	}
}

func TestRenderSubjects(t *testing.T) {
	sent, _ := Render(PayoutSent(sentTransfer(), "c@example.org"), "example.com")
	if sent.Subject != "Your payout of 912.40 EUR has been sent" {
		t.Errorf("sent subject %q", sent.Subject)
	}
	failed, _ := Render(Failed(failedTransfer(), "c@example.org"), "example.com")
	if failed.Subject != "Your payout of 12,500.50 USD could not be completed" {
		t.Errorf("failed subject %q", failed.Subject)
	}
	noTarget := sentTransfer()
	noTarget.TargetAmount = decimal.Zero
	m, _ := Render(PayoutSent(noTarget, "c@example.org"), "example.com")
	if m.Subject != "Your payout of 1,000.00 USD has been sent" {
		t.Errorf("subject without a target amount %q", m.Subject)
	}
	if strings.Contains(m.Text, "Recipient gets") {
		t.Error("an unknown target amount is shown")
	}
}

// TestRenderNeverShowsAccount: neither body nor the wire form carries the account in clear.
func TestRenderNeverShowsAccount(t *testing.T) {
	from := &mail.Address{Address: "payouts@example.com"}
	for _, tr := range []Transfer{sentTransfer(), failedTransfer()} {
		for _, n := range []Notification{PayoutSent(tr, "c@example.org"), Failed(tr, "c@example.org")} {
			m, err := Render(n, "example.com")
			if err != nil {
				t.Fatal(err)
			}
			gm, err := composeMsg(from, m, time.Now)
			if err != nil {
				t.Fatal(err)
			}
			var wire bytes.Buffer
			if _, err := gm.WriteTo(&wire); err != nil {
				t.Fatal(err)
			}
			acct := tr.Recipient.Account
			for what, s := range map[string]string{"text": m.Text, "html": m.HTML, "wire": wire.String()} {
				// Also with the quoted-printable soft line breaks removed.
				flat := strings.ReplaceAll(s, "=\r\n", "")
				if strings.Contains(flat, acct) || strings.Contains(flat, acct[:len(acct)-4]) {
					t.Errorf("%s of %s shows the account %s", what, n.Kind, acct)
				}
			}
			if !strings.Contains(m.Text, "ending in "+acct[len(acct)-4:]) {
				t.Errorf("%s text does not name the account's last four characters:\n%s", n.Kind, m.Text)
			}
		}
	}
}

func TestRenderFailedReason(t *testing.T) {
	tr := failedTransfer()
	tr.Error = ""
	m, err := Render(Failed(tr, "c@example.org"), "example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "Reason:           No reason was given.") {
		t.Errorf("an empty reason is not stated:\n%s", m.Text)
	}
	tr.Error = strings.Repeat("x", 2000)
	m, _ = Render(Failed(tr, "c@example.org"), "example.com")
	if strings.Contains(m.Text, strings.Repeat("x", maxReasonRunes+1)) || !strings.Contains(m.Text, strings.Repeat("x", maxReasonRunes)+"...") {
		t.Error("a long reason is not cut")
	}
}

func TestRenderRefuses(t *testing.T) {
	good := PayoutSent(sentTransfer(), "c@example.org")
	cases := map[string]func(n *Notification) string{
		"unknown kind": func(n *Notification) string { n.Kind = "payout-maybe"; return "example.com" },
		"no id":        func(n *Notification) string { n.Transfer.ID = " "; return "example.com" },
		"no recipient": func(n *Notification) string { n.To = ""; return "example.com" },
		"bad address":  func(n *Notification) string { n.To = "not an address"; return "example.com" },
		"two addresses": func(n *Notification) string {
			n.To = "a@example.org, b@example.org"
			return "example.com"
		},
		"no domain":  func(n *Notification) string { return "" },
		"bad domain": func(n *Notification) string { return "exa mple.com>" },
	}
	for name, mutate := range cases {
		n := good
		domain := mutate(&n)
		if _, err := Render(n, domain); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}

func TestMessageID(t *testing.T) {
	cases := []struct {
		id   string
		kind Kind
		want string
	}{
		{"65f0c1d2e3f4a5b6c7d8e9f0", KindPayoutSent, "<65f0c1d2e3f4a5b6c7d8e9f0.payout-sent@example.com>"},
		{"65f0c1d2e3f4a5b6c7d8e9f0", KindFailed, "<65f0c1d2e3f4a5b6c7d8e9f0.payout-failed@example.com>"},
		{"a.b c@d=", KindFailed, "<a=2Eb=20c=40d=3D.payout-failed@example.com>"},
	}
	for _, c := range cases {
		if got := MessageID(c.id, c.kind, "example.com"); got != c.want {
			t.Errorf("MessageID(%q, %q) = %q, want %q", c.id, c.kind, got, c.want)
		}
	}
	m, _ := Render(Failed(failedTransfer(), "c@example.org"), "example.com")
	if m.MessageID != MessageID(failedTransfer().ID, KindFailed, "example.com") {
		t.Errorf("Render's Message-ID %q", m.MessageID)
	}
}

func TestMaskAccount(t *testing.T) {
	cases := []struct{ typ, account, want string }{
		{"iban", "DE89 3704 0044 0532 0130 00", "IBAN ending in 3000"},
		{"iban", "de89370400440532013000", "IBAN ending in 3000"},
		{"sort_code", "31926819", "account ending in 6819"},
		{"aba", "000123456789", "account ending in 6789"},
		{"philippines", "12345", "account ending in 45"},
		{"philippines", "1234", "bank account"},
		{"iban", "DE89", "IBAN"},
		{"email_recipient", "jane.doe@example.com", "e-mail j***@example.com"},
		{"email_recipient", "broken", "e-mail address"},
		{"aba", "", ""},
		{"clabe", "032180000118359719", "account ending in 9719"},
	}
	for _, c := range cases {
		if got := MaskAccount(c.typ, c.account); got != c.want {
			t.Errorf("MaskAccount(%q, %q) = %q, want %q", c.typ, c.account, got, c.want)
		}
	}
}

func TestMoney(t *testing.T) {
	cases := []struct{ amount, currency, want string }{
		{"1000", "USD", "1,000.00 USD"},
		{"912.4", "EUR", "912.40 EUR"},
		{"0.5", "EUR", "0.50 EUR"},
		{"1234567.891", "USD", "1,234,567.89 USD"},
		{"120000", "JPY", "120,000 JPY"},
		{"12.3456", "KWD", "12.346 KWD"},
		{"100", "XXX", "100.00 XXX"},
		{"999", "USD", "999.00 USD"},
	}
	for _, c := range cases {
		if got := money(decimal.RequireFromString(c.amount), c.currency); got != c.want {
			t.Errorf("money(%s, %s) = %q, want %q", c.amount, c.currency, got, c.want)
		}
	}
}

func TestCleanText(t *testing.T) {
	if got := cleanText("  a\r\nb\t\tc\x00d  ", 100); got != "a b c d" {
		t.Errorf("cleanText = %q", got)
	}
	// a stored name from before the facade refused them (issue 25 item 10)
	if got := cleanText("Ann \u202eeoD\u2066x\u2069\x1b[2J\u0085", 100); got != "Ann eoD x [2J" {
		t.Errorf("cleanText = %q", got)
	}
	if got := cleanText("abcdef", 3); got != "abc..." {
		t.Errorf("cleanText cut = %q", got)
	}
}
