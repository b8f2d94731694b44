// Package recovery is `kubectl payout recover`: the report of payoutd's start-up check of the
// cluster against the ledgers of record (internal/recovery), and the switch that pauses money or
// moves it again once an operator has redone what a restore took back.
package recovery

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/recovery"
)

// What `recover` needs.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recoveries,verbs=get;update;patch

// Options are the inputs of `recover [--pause | --resume]`.
type Options struct {
	*cli.Factory

	Pause, Resume bool
}

// NewCmdRecover is `recover`.
func NewCmdRecover(f *cli.Factory) *cobra.Command {
	o := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "recover",
		Short: "Show the recovery check; pause money or move it again",
		Long: `Show the report of the check payoutd's controllers make at every start: the
provider's payouts compared with the cluster's transfers. After an etcd restore the
provider and the chains are ahead of the restored objects: the check rebuilds the
claims and hashes the provider's payouts show, lists what it found, and keeps money
from moving (no payout created, no refund signed) until an operator has redone what
no ledger tells (the "Redo" list: revoked keys, blocked wallets, settings changed
after the newest record) and resumes with --resume.

--pause stops money at once (for example before a restore); --resume acknowledges
the last check and clears a pause. Neither stops the facade or the deposit
watchers: transfers are still created and deposits recorded.`,
		Example: `  kubectl payout recover
  kubectl payout recover --pause
  kubectl payout recover --resume`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Pause && o.Resume {
				return cli.UsageErrorf("--pause and --resume exclude each other")
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&o.Pause, "pause", false, "stop money from moving until --resume")
	cmd.Flags().BoolVar(&o.Resume, "resume", false, "acknowledge the last check and clear a pause: money moves again")
	return cmd
}

// Run shows the report, or pauses or resumes.
func (o *Options) Run(ctx context.Context) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	rec := &payoutv1.Recovery{}
	if err := c.Get(ctx, client.ObjectKey{Name: payoutv1.RecoveryName}, rec); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("no recovery check yet: payoutd's controllers write it when they start (recovery %s)", payoutv1.RecoveryName)
		}
		return err
	}
	switch {
	case o.Pause:
		if !rec.Spec.Paused {
			before := rec.DeepCopy()
			rec.Spec.Paused = true
			if err := c.Patch(ctx, rec, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
				return err
			}
		}
		fmt.Fprintln(o.Out, "Paused: no payout is created and no refund signed until kubectl payout recover --resume")
		return nil
	case o.Resume:
		switch rec.Status.State {
		case payoutv1.RecoveryClear, payoutv1.RecoveryRequired:
		default:
			return fmt.Errorf("the check of this start has not finished (%s): there is nothing to acknowledge yet", orNone(rec.Status.Message))
		}
		before := rec.DeepCopy()
		rec.Spec.Paused, rec.Spec.Acknowledged = false, rec.Status.CheckID
		// the lock: a check that finished since the read is not acknowledged unseen
		if err := c.Patch(ctx, rec, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				return fmt.Errorf("the recovery check changed while it was read: run kubectl payout recover again to see it")
			}
			return err
		}
		fmt.Fprintf(o.Out, "Resumed after check %s: money moves\n", rec.Status.CheckID)
		return nil
	}
	return o.print(rec)
}

func (o *Options) print(rec *payoutv1.Recovery) error {
	st := rec.Status
	moves, why := recovery.Moves(rec)
	w := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "State:\t%s\n", orNone(string(st.State)))
	fmt.Fprintf(w, "Check:\t%s\n", orNone(st.CheckID))
	fmt.Fprintf(w, "Checked at:\t%s\n", at(st.CheckedAt))
	fmt.Fprintf(w, "Newest record:\t%s\n", at(st.NewestRecord))
	fmt.Fprintf(w, "Payouts since:\t%s\n", at(st.Since))
	fmt.Fprintf(w, "Paused:\t%t\n", rec.Spec.Paused)
	fmt.Fprintf(w, "Acknowledged:\t%s\n", orNone(rec.Spec.Acknowledged))
	if moves {
		fmt.Fprintf(w, "Money:\tmoves\n")
	} else {
		fmt.Fprintf(w, "Money:\twaits: %s\n", why)
	}
	fmt.Fprintf(w, "Message:\t%s\n", orNone(st.Message))
	if err := w.Flush(); err != nil {
		return err
	}
	if len(st.Findings) > 0 {
		fmt.Fprintf(o.Out, "\nFindings (%d):\n", len(st.Findings))
		t := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(t, "  KIND\tSUBJECT\tMESSAGE")
		for _, f := range st.Findings {
			fmt.Fprintf(t, "  %s\t%s\t%s\n", f.Kind, orNone(f.Subject), f.Message)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if st.State == payoutv1.RecoveryRequired && len(st.Redo) > 0 {
		fmt.Fprintf(o.Out, "\nRedo what was done after the newest record (%s), then kubectl payout recover --resume:\n", at(st.NewestRecord))
		for _, r := range st.Redo {
			fmt.Fprintf(o.Out, "  - %s\n", r)
		}
	}
	return nil
}

func at(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return "<none>"
	}
	return t.UTC().Format(time.RFC3339)
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "<none>"
	}
	return s
}
