package describe

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/get"
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `describe transfer` needs: the transfer and the events about it.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=list
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=list

// TransferOptions are the inputs of `describe transfer ID [-o json|yaml]`.
type TransferOptions struct {
	*cli.Factory

	Output string
}

// NewCmdTransfer is `describe transfer`.
func NewCmdTransfer(f *cli.Factory) *cobra.Command {
	o := &TransferOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "transfer ID",
		Aliases: []string{"transfers", "tr"},
		Short:   "Show a transfer, its status history and its events",
		Long: `Show a transfer: its account, amount, recipient and quote, its deposit, payout and
refund, its status history and the events about it, oldest first, times in UTC.
-o json and -o yaml print {transfer, events}: the Transfer resource and its Events.`,
		Example: `  kubectl payout describe transfer 65f1c0de9a8b7c6d5e4f3a21
  kubectl payout describe transfer 65f1c0de9a8b7c6d5e4f3a21 -o yaml`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cli.FirstArg(cli.CompleteTransferIDs(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	cli.AddOutputFlag(cmd, &o.Output, cli.OutputJSON, cli.OutputYAML)
	return cmd
}

// Validate checks the transfer id before anything is sent to the cluster.
func (o *TransferOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the transfer id"); err != nil {
		return err
	}
	if err := cli.ValidateOutput(o.Output, cli.OutputJSON, cli.OutputYAML); err != nil {
		return err
	}
	return admin.ValidateTransferID(args[0])
}

// Run gathers the transfer and its events and prints them.
func (o *TransferOptions) Run(ctx context.Context, args []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	t, err := admin.FindTransfer(ctx, c, args[0])
	if err != nil {
		return err
	}
	events, err := eventsAbout(ctx, c, t)
	if err != nil {
		return err
	}
	deps := &payoutv1.DepositList{}
	if err := c.List(ctx, deps, client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: t.Name}); err != nil {
		return fmt.Errorf("listing the deposits of transfer %s: %w", t.Name, err)
	}
	d := TransferDescription{Transfer: *t, Deposits: deps.Items, Events: events}
	if o.Output != cli.OutputText {
		return cli.PrintStructured(o.Out, o.Output, d.Resources())
	}
	_, err = fmt.Fprint(o.Out, d)
	return err
}

// Resources is the description as -o json and -o yaml print it: the Transfer and its Events,
// each with apiVersion and kind, without managed fields.
func (d TransferDescription) Resources() DescribedTransfer {
	out := DescribedTransfer{Transfer: *get.Resource(&d.Transfer), Events: []eventsv1.Event{}}
	for _, e := range d.Events {
		e := *e.DeepCopy()
		e.APIVersion, e.Kind = eventsv1.SchemeGroupVersion.String(), "Event"
		e.ManagedFields = nil
		out.Events = append(out.Events, e)
	}
	return out
}

// DescribedTransfer is the structured output of `describe transfer`.
type DescribedTransfer struct {
	Transfer payoutv1.Transfer `json:"transfer"`
	Events   []eventsv1.Event  `json:"events"`
}

// eventsAbout lists the events whose regarding object is t, oldest first. The API server
// narrows the list by name (a field selector of events.k8s.io/v1); the UID check then drops
// events of an earlier transfer of the same name.
func eventsAbout(ctx context.Context, c client.Client, t *payoutv1.Transfer) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	err := c.List(ctx, list, client.InNamespace(t.Namespace), client.MatchingFields{"regarding.name": t.Name})
	if err != nil {
		return nil, fmt.Errorf("listing the events of transfer %s: %w", t.Name, err)
	}
	var about []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.UID == t.UID {
			about = append(about, e)
		}
	}
	sort.SliceStable(about, func(i, j int) bool { return eventTime(about[i]).Before(eventTime(about[j])) })
	return about, nil
}
