package get

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/text"
	"github.com/stablepay/payout-operator/test/testgen"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// goldenTransfers cover every column: each status kind, both methods, both tokens, two
// accounts, a failure reason, a payout needing a person, ages from seconds to days.
func goldenTransfers() []payoutv1.Transfer {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(testgen.Epoch.Add(-d)) }
	return []payoutv1.Transfer{
		*testgen.Transfer("payout-acme", "65f1c0de9a8b7c6d5e4f3a21", func(t *payoutv1.Transfer) {
			t.CreationTimestamp = at(50 * time.Hour)
			t.Status.Phase = payoutv1.PhaseCompleted
			// its payout came back from the recipient's bank (issue 23 item 10)
			t.Status.Conditions = []metav1.Condition{{Type: payoutv1.NeedsAttentionCondition, Status: metav1.ConditionTrue, Reason: "PayoutReturned"}}
		}),
		*testgen.Transfer("payout-acme", "65f1c0de9a8b7c6d5e4f3a22", testgen.Failed(payoutv1.FailurePayoutRejected, "rejected by the bank"),
			func(t *payoutv1.Transfer) {
				t.CreationTimestamp = at(3 * time.Hour)
				t.Spec.Amount, t.Spec.Quote.TargetCurrency, t.Spec.RecipientID = "1250.75", "GBP", 4823019475520
			}),
		*testgen.Transfer("payout-globex", "65f1c0de9a8b7c6d5e4f3a23", testgen.V2(), func(t *payoutv1.Transfer) {
			t.CreationTimestamp = at(7 * time.Minute)
			t.Spec.Account = "globex"
			t.Spec.SourceNetwork = payoutv1.NetworkPolygon
			t.Status.Phase = payoutv1.PhasePendingMatch
		}),
		*testgen.Transfer("payout-globex", "65f1c0de9a8b7c6d5e4f3a24", func(t *payoutv1.Transfer) {
			t.CreationTimestamp = at(12 * time.Second)
			t.Spec.Account = "globex"
			t.Spec.SourceToken, t.Spec.SourceNetwork = payoutv1.TokenUSDT, payoutv1.NetworkTron
		}),
	}
}

// TestTransferTableGolden compares the table of `get transfers` (and its -o wide form) with the
// literal text of testdata/. Run `go test ./cmd/kubectl-payout/internal/get -update` after a
// deliberate change of the columns, and read the diff.
func TestTransferTableGolden(t *testing.T) {
	for _, c := range []struct {
		golden string
		wide   bool
	}{
		{"transfers.golden", false},
		{"transfers-wide.golden", true},
	} {
		t.Run(c.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteTransferTable(&out, goldenTransfers(), testgen.Epoch.Time, c.wide); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", c.golden)
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if out.String() != string(want) {
				t.Errorf("the table differs from %s:\n--- got\n%s--- want\n%s", path, out.String(), want)
			}
		})
	}
}

func TestEmptyTableIsHeaderOnly(t *testing.T) {
	var out bytes.Buffer
	if err := WriteTransferTable(&out, nil, time.Now(), false); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "ID   STATUS   AMOUNT   CURRENCY   NETWORK   RECIPIENT   AGE\n" {
		t.Errorf("got %q", got)
	}
}

// TestTableEscapesControls: a cell of stored text cannot move the cursor, colour the terminal or
// reverse the columns after it (issue 25 item 10).
func TestTableEscapesControls(t *testing.T) {
	tr := *testgen.Transfer("payout-acme", "65f1c0de9a8b7c6d5e4f3a21", func(t *payoutv1.Transfer) {
		t.CreationTimestamp = metav1.NewTime(testgen.Epoch.Add(-time.Hour))
		t.Spec.Account = "acme\x1b[2J\u202e"
		t.Status.Phase = "failed\tcompleted"
	})
	var out bytes.Buffer
	if err := WriteTransferTable(&out, []payoutv1.Transfer{tr}, testgen.Epoch.Time, true); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{`acme\u001b[2J\u202e`, `failed\u0009completed`} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in:\n%s", want, got)
		}
	}
	if _, bad := text.Unsafe(strings.ReplaceAll(got, "\n", "")); bad {
		t.Errorf("a control reaches the terminal:\n%q", got)
	}
}
