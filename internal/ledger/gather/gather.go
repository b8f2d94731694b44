// Package gather reads the treasury ledger's objects (internal/ledger) where they are stored:
// the live ones from the API server and the finished transfers' from the archive, so that the
// ledger of a period reads the same before and after its transfers are archived.
package gather

import (
	"context"
	"encoding/json"
	"fmt"
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
// (network, token, deposit address, base units, sweep transaction, confirmed time). This is the
// one adapter between the sweeper and the ledger: it lists the Sweep resources through c (and,
// once they are archived, the archive's) and converts each confirmed one. Until the sweeper is
// merged nothing is swept.
func Sweeps(ctx context.Context, c client.Reader) ([]ledger.Sweep, error) {
	_, _ = ctx, c
	return nil, nil
}
