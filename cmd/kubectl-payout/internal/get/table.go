package get

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// WriteTransferTable writes transfers as a kubectl-style table, with ages as of now.
func WriteTransferTable(w io.Writer, transfers []payoutv1.Transfer, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "ID\tACCOUNT\tSTATUS\tAMOUNT\tCURRENCY\tTOKEN\tNETWORK\tAGE")
	for _, t := range transfers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			t.Name, t.Spec.Account, orNone(string(t.Status.Phase)), t.Spec.Amount, t.Spec.Quote.TargetCurrency,
			t.Spec.SourceToken, t.Spec.SourceNetwork, age(t.CreationTimestamp.Time, now))
	}
	return tw.Flush()
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
