package archive

import (
	"context"
	"encoding/json"
	"time"
)

// LedgerRecord is an archived transfer as the treasury's ledger reads it (internal/ledger): the
// objects it was archived with, as JSON. Everything the ledger counts is in them: the deposits
// received (its Deposit objects), what it credited, its payout and the refunds of its deposit
// (status; Refund) and of its strays (status.strayDeposits).
type LedgerRecord struct {
	Object, Refund []byte
	Deposits       [][]byte
}

// LedgerRecords calls fn with every archived transfer created before until, oldest first. It is a
// scan for reports, bounded by ctx rather than by the store's lookup Timeout.
func (s *Store) LedgerRecords(ctx context.Context, until time.Time, fn func(LedgerRecord) error) error {
	if err := s.ensure(ctx); err != nil {
		return err
	}
	rows, err := s.pool.Query(ctx, `SELECT t.object, t.refund,
			coalesce((SELECT json_agg(d.object ORDER BY d.namespace, d.name) FROM archived_deposits d WHERE d.transfer_id = t.id), '[]')
		FROM archived_transfers t WHERE t.created_at < $1 ORDER BY t.created_at, t.id`, until)
	if err != nil {
		return unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var object, refund, deposits []byte
		if err := rows.Scan(&object, &refund, &deposits); err != nil {
			return unavailable(err)
		}
		rec := LedgerRecord{Object: object, Refund: refund}
		var raw []json.RawMessage
		if err := json.Unmarshal(deposits, &raw); err != nil {
			return err
		}
		for _, d := range raw {
			rec.Deposits = append(rec.Deposits, d)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return unavailable(rows.Err())
}
