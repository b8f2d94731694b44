package get

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/text"
)

// TransferColumns are the columns of `get transfers`; WideTransferColumns are added by
// `-o wide`.
var (
	TransferColumns     = []string{"ID", "STATUS", "AMOUNT", "CURRENCY", "NETWORK", "RECIPIENT", "AGE"}
	WideTransferColumns = []string{"METHOD", "TOKEN", "ACCOUNT", "ERROR"}
)

// WriteTransferTable writes transfers as a kubectl-style table, with ages as of now; wide adds
// the method, the token, the account and the error: the failure reason, or for a transfer that
// did not fail the reason of its NeedsAttention condition while True (PayoutLost, PayoutReturned).
func WriteTransferTable(w io.Writer, transfers []payoutv1.Transfer, now time.Time, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	header := TransferColumns
	if wide {
		header = append(append([]string(nil), TransferColumns...), WideTransferColumns...)
	}
	writeRow(tw, header)
	for _, t := range transfers {
		row := []string{
			t.Name, orNone(string(t.Status.Phase)), string(t.Spec.Amount), string(t.Spec.Quote.TargetCurrency),
			string(t.Spec.SourceNetwork), strconv.FormatInt(t.Spec.RecipientID, 10), age(t.CreationTimestamp.Time, now),
		}
		if wide {
			row = append(row, string(t.Spec.Method), string(t.Spec.SourceToken), t.Spec.Account, errorReason(&t))
		}
		writeRow(tw, row)
	}
	return tw.Flush()
}

// writeRow writes one row, its cells through text.Escape: an object written with kubectl
// directly can hold any text, and a control in a cell would rewrite the terminal or the columns.
func writeRow(w io.Writer, cells []string) {
	for i, c := range cells {
		if i > 0 {
			fmt.Fprint(w, "\t")
		}
		fmt.Fprint(w, text.Escape(c))
	}
	fmt.Fprintln(w)
}

func errorReason(t *payoutv1.Transfer) string {
	if f := t.Status.Failure; f != nil {
		return string(f.Reason)
	}
	if c := apimeta.FindStatusCondition(t.Status.Conditions, payoutv1.NeedsAttentionCondition); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason
	}
	return "<none>"
}

func age(created, now time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(created))
}

// orNone shows an unset value the way kubectl does.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
