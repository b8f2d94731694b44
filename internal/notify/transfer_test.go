package notify

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

func TestFromTransfer(t *testing.T) {
	failedAt := metav1.NewTime(testgen.Epoch.Add(3 * time.Minute))
	later := metav1.NewTime(testgen.Epoch.Add(time.Hour))
	tr := testgen.Transfer("acme", "0a1b2c3d4e5f60718293a4b5", func(t *payoutv1.Transfer) {
		t.CreationTimestamp = testgen.Epoch
		t.Status.Phase = payoutv1.PhaseFailed
		t.Status.Failure = &payoutv1.TransferFailure{Reason: payoutv1.FailurePayoutRejected, Message: "rejected by the recipient's bank", At: failedAt}
		t.Status.History = []payoutv1.StatusChange{
			{Status: payoutv1.PhaseReadyToProcess, At: testgen.Epoch},
			{Status: payoutv1.PhaseFailed, At: failedAt},
		}
		t.Status.UpdatedAt = &later // a later change of facts must not move the Date
	})
	got, err := FromTransfer(tr)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != tr.Name || got.AmountUSD.String() != "25" || got.TargetCurrency != string(tr.Spec.Quote.TargetCurrency) ||
		got.Status != "failed" || got.Error != tr.Status.ErrorText() || !got.UpdatedAt.Equal(failedAt.Time) ||
		got.Recipient.HolderName != "Jane Doe" || got.Recipient.Account != "DE89370400440532013000" {
		t.Errorf("FromTransfer = %+v", got)
	}
	m, err := Render(Failed(got, "customer@example.org"), "example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "IBAN ending in 3000") || strings.Contains(m.Text, "DE8937") {
		t.Errorf("rendered:\n%s", m.Text)
	}

	tr.Spec.Amount = "lots"
	if _, err := FromTransfer(tr); err == nil {
		t.Error("a bad amount was accepted")
	}
}

// TestFromTransferTarget: the mail states what the recipient is paid, which for an amount a cent
// under the quote is a cent's worth under the quote's target (issue 22 item 9).
func TestFromTransferTarget(t *testing.T) {
	tr := testgen.Transfer("acme", "0a1b2c3d4e5f60718293a4b5", func(t *payoutv1.Transfer) { t.Spec.Amount = "24.99" })
	for _, c := range []struct {
		name   string
		payout *payoutv1.PayoutFacts
		want   string
	}{
		// (24.99 - 0.50) × 0.88022588 = 21.5567...; the quote's 21.56 is for 25.00
		{"before the payout intent", nil, "21.55"},
		{"the intent's figure", &payoutv1.PayoutFacts{TargetAmount: "21.55"}, "21.55"},
		{"the provider's figure", &payoutv1.PayoutFacts{TargetAmount: "21.54"}, "21.54"},
	} {
		tr.Status.Payout = c.payout
		got, err := FromTransfer(tr)
		if err != nil {
			t.Fatal(err)
		}
		if got.TargetAmount.String() != c.want {
			t.Errorf("%s: TargetAmount = %s, want %s", c.name, got.TargetAmount, c.want)
		}
	}
}

func TestAccountOf(t *testing.T) {
	cases := []struct {
		typ  string
		d    payoutv1.RecipientDetails
		want string
	}{
		{"email_recipient", payoutv1.RecipientDetails{Email: "j@example.com"}, "j@example.com"},
		{"aba", payoutv1.RecipientDetails{AccountNumber: "000123456789", ABARTN: "011000015"}, "000123456789"},
		{"mexican", payoutv1.RecipientDetails{Other: map[string]string{"clabe": "032180000118359719"}}, "032180000118359719"},
		{"other", payoutv1.RecipientDetails{}, ""},
	}
	for _, c := range cases {
		if got := accountOf(c.typ, c.d); got != c.want {
			t.Errorf("accountOf(%s) = %q, want %q", c.typ, got, c.want)
		}
	}
}
