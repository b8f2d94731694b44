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
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `describe transfer` needs: the transfer and the events about it.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=list

// TransferOptions are the inputs of `describe transfer ID`.
type TransferOptions struct {
	*cli.Factory
}

// NewCmdTransfer is `describe transfer`.
func NewCmdTransfer(f *cli.Factory) *cobra.Command {
	o := &TransferOptions{Factory: f}
	return &cobra.Command{
		Use:     "transfer ID",
		Aliases: []string{"transfers", "tr"},
		Short:   "Show a transfer, its status history and its events",
		Example: `  kubectl payout describe transfer 65f1c0de9a8b7c6d5e4f3a21`,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
}

// Validate checks the transfer id before anything is sent to the cluster.
func (o *TransferOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the transfer id"); err != nil {
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
	_, err = fmt.Fprint(o.Out, TransferDescription{Transfer: *t, Events: events})
	return err
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
