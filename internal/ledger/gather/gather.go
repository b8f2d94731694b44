// Package gather reads the treasury ledger's objects (internal/ledger) where they are stored:
// the live ones from the API server and the finished transfers' from the archive, so that the
// ledger of a period reads the same before and after its transfers are archived.
package gather

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/internal/ledger"
)

// Objects lists the ledger's live objects through c (every namespace: the deposits of deleted
// accounts' transfers are in OrphanNamespace; c needs list on transfers, deposits and refunds),
// then the archived
// transfers created before until from store (nil: no archive), live ones first: a transfer
// archived and not deleted yet counts once, as it stands live.
func Objects(ctx context.Context, c client.Reader, store *archive.Store, until time.Time) (ledger.Objects, error) {
	var o ledger.Objects
	transfers := &payoutv1.TransferList{}
	if err := c.List(ctx, transfers); err != nil {
		return o, fmt.Errorf("listing transfers: %w", err)
	}
	deposits := &payoutv1.DepositList{}
	if err := c.List(ctx, deposits); err != nil {
		return o, fmt.Errorf("listing deposits: %w", err)
	}
	refunds := &payoutv1.RefundList{}
	if err := c.List(ctx, refunds); err != nil {
		return o, fmt.Errorf("listing refunds: %w", err)
	}
	o.Transfers, o.Deposits, o.Refunds = transfers.Items, deposits.Items, refunds.Items
	sweeps, err := Sweeps(ctx, c)
	if err != nil {
		return o, err
	}
	o.Sweeps = sweeps
	if store == nil {
		return o, nil
	}
	err = store.LedgerRecords(ctx, until, func(rec archive.LedgerRecord) error {
		var t payoutv1.Transfer
		if err := json.Unmarshal(rec.Object, &t); err != nil {
			return fmt.Errorf("an archived transfer does not read as a Transfer: %w", err)
		}
		o.Transfers = append(o.Transfers, t)
		if rec.Refund != nil {
			var rf payoutv1.Refund
			if err := json.Unmarshal(rec.Refund, &rf); err != nil {
				return fmt.Errorf("the archived refund of transfer %s does not read as a Refund: %w", t.Name, err)
			}
			o.Refunds = append(o.Refunds, rf)
		}
		for _, b := range rec.Deposits {
			var d payoutv1.Deposit
			if err := json.Unmarshal(b, &d); err != nil {
				return fmt.Errorf("an archived deposit of transfer %s does not read as a Deposit: %w", t.Name, err)
			}
			o.Deposits = append(o.Deposits, d)
		}
		return nil
	})
	if err != nil {
		return o, fmt.Errorf("reading the archive: %w", err)
	}
	return o, nil
}

// Sweeps are the sweeper's records of the deposits it moved to the treasury, as ledger facts
// (network, token, deposit address, base units, sweep transaction, confirmed time): the one
// adapter between the sweeper and the ledger. Only confirmed Sweeps count, with what the
// receipt showed at depth (status.moved: an address's Sweeps share what its batch item moved).
// Sweeps are not archived: the archiver deletes a transfer's Deposits, never a Sweep, which
// holds what the ledger needs of its deposit (spec.address, network, token).
func Sweeps(ctx context.Context, c client.Reader) ([]ledger.Sweep, error) {
	list := &payoutv1.SweepList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing sweeps: %w", err)
	}
	var out []ledger.Sweep
	for _, sw := range list.Items {
		if sw.Status.State != payoutv1.SweepConfirmed {
			continue
		}
		units, ok := new(big.Int).SetString(sw.Status.Moved, 10)
		if !ok {
			return nil, fmt.Errorf("sweep %s/%s: status.moved %q is not a number of base units", sw.Namespace, sw.Name, sw.Status.Moved)
		}
		f := ledger.Sweep{Network: string(sw.Spec.Network), Token: string(sw.Spec.Token), Address: sw.Spec.Address, Units: units, TxHash: sw.Status.TxHash}
		if sw.Status.ConfirmedAt != nil {
			f.ConfirmedAt = sw.Status.ConfirmedAt.Time
		}
		out = append(out, f)
	}
	return out, nil
}
