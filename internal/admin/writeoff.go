package admin

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/treasury"
)

// WriteOff records an operator's decision not to refund the stray deposit named depositName
// (a Deposit, in whichever namespace holds it): the Sweep named after it, with reason
// WrittenOff and who (by) and why, created atomically, so that the sweeper moves it to the
// treasury once it is due. treasury.WriteOff decides, on the facts read here from the API
// server: only a stray of an ended transfer, or a deposit recorded after its account was
// deleted, and never while a refund of it is in flight or once it is refunded
// (treasury.ErrNotWritable). A deposit that has a Sweep already (written off before, or due for
// another reason) is refused the same way. From the Sweep's creation on, a refund of the deposit
// is refused (refund.WrittenOff).
func WriteOff(ctx context.Context, c client.Client, depositName, by, why string) (*payoutv1.Sweep, *payoutv1.Deposit, error) {
	dep, err := findDeposit(ctx, c, depositName)
	if err != nil {
		return nil, nil, err
	}
	var t *payoutv1.Transfer
	if dep.Namespace != payoutv1.OrphanNamespace {
		tr := &payoutv1.Transfer{}
		switch err := c.Get(ctx, client.ObjectKey{Namespace: dep.Namespace, Name: dep.Spec.Transfer}, tr); {
		case err == nil:
			t = tr
		case !apierrors.IsNotFound(err):
			return nil, nil, fmt.Errorf("reading transfer %s: %w", dep.Spec.Transfer, err)
		}
	}
	deps := &payoutv1.DepositList{}
	if err := c.List(ctx, deps, client.InNamespace(dep.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: dep.Spec.Transfer}); err != nil {
		return nil, nil, fmt.Errorf("listing the deposits of transfer %s: %w", dep.Spec.Transfer, err)
	}
	ref := payoutv1.DepositRef{Network: dep.Spec.Network, TxHash: strings.ToLower(dep.Spec.TxHash), LogIndex: dep.Spec.LogIndex}
	var rf *payoutv1.Refund
	got := &payoutv1.Refund{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: dep.Namespace, Name: payoutv1.StrayRefundName(dep.Spec.Transfer, ref)}, got); {
	case err == nil:
		rf = got
	case !apierrors.IsNotFound(err):
		return nil, nil, fmt.Errorf("reading the refund of deposit %s: %w", dep.Name, err)
	}
	sw, err := treasury.WriteOff(t, deps.Items, dep, rf, by, why)
	if err != nil {
		return nil, nil, err
	}
	if err := c.Create(ctx, sw); apierrors.IsAlreadyExists(err) {
		had := &payoutv1.Sweep{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(sw), had); err != nil {
			return nil, nil, fmt.Errorf("deposit %s has a sweep already: %w", dep.Name, err)
		}
		state := string(had.Status.State)
		if state == "" {
			state = "not admitted yet"
		}
		return nil, nil, refuse(treasury.ErrNotWritable, "deposit %s has a sweep already (reason %s, %s): a deposit is swept once (kubectl get sweep -n %s %s)",
			dep.Name, had.Spec.Reason, state, had.Namespace, had.Name)
	} else if err != nil {
		return nil, nil, fmt.Errorf("recording the write-off of deposit %s: %w", dep.Name, err)
	}
	return sw, dep, nil
}

// findDeposit finds a Deposit by name in whichever namespace holds it.
func findDeposit(ctx context.Context, c client.Client, name string) (*payoutv1.Deposit, error) {
	list := &payoutv1.DepositList{}
	if err := c.List(ctx, list, client.MatchingFields{index.Name: name}); err != nil {
		return nil, fmt.Errorf("looking up deposit %s: %w", name, err)
	}
	switch len(list.Items) {
	case 0:
		return nil, refuse(ErrNotFound, "deposit %s does not exist (kubectl get deposits -A lists them)", name)
	case 1:
		return &list.Items[0], nil
	}
	namespaces := make([]string, len(list.Items))
	for i, d := range list.Items {
		namespaces[i] = d.Namespace
	}
	return nil, fmt.Errorf("deposit %s is recorded in several namespaces (%s); a log is recorded once: nothing is written off",
		name, strings.Join(namespaces, ", "))
}
