package archive

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed schema.sql
var schema string

// ErrUnavailable wraps every failure to reach the archive: the facade answers 503 for it.
var ErrUnavailable = errors.New("the transfer archive is unavailable")

// Store is the PostgreSQL archive.
type Store struct {
	pool     *pgxpool.Pool
	migrated atomic.Bool
	// Timeout bounds each lookup, so that a hung database answers 503 rather than hanging
	// the caller (default 2s).
	Timeout time.Duration
}

// migrateTimeout bounds the creation of the tables. It is not a lookup's Timeout: a process
// creates them once, on its first use, and a loaded database takes longer over the DDL than over
// a lookup, or another replica holds the migration's lock while it creates them. Whether they
// are missing is asked under Timeout, so a database that does not answer is still found out
// as soon.
const migrateTimeout = 30 * time.Second

// Open prepares the connections to the archive at dsn without reaching it: a database that is
// down at start is reached once it is up. The tables are created on first use when missing.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("archive DSN: %w", err) // pgx never repeats the password
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	return &Store{pool: pool, Timeout: 2 * time.Second}, nil
}

// ensure creates the tables once per process (skipped after Migrate's first success), before a
// lookup's Timeout starts (migrateTimeout).
func (s *Store) ensure(ctx context.Context) error {
	if s.migrated.Load() {
		return nil
	}
	return s.Migrate(ctx)
}

// Close releases the connections.
func (s *Store) Close() { s.pool.Close() }

// Migrate creates the archive's tables when one is missing, under an advisory lock so that
// replicas starting together do not race. A database role that may only read and write the
// tables works once they exist.
func (s *Store) Migrate(ctx context.Context) error {
	var missing bool
	check, cancel := s.bound(ctx)
	err := s.pool.QueryRow(check, `SELECT to_regclass('archived_transfers') IS NULL OR to_regclass('archived_deposits') IS NULL
		OR to_regclass('archived_recipients') IS NULL`).Scan(&missing)
	cancel()
	if err != nil {
		return unavailable(err)
	}
	if missing {
		ctx, cancel := context.WithTimeout(ctx, migrateTimeout)
		defer cancel()
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(1701)`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, schema)
			return err
		})
		if err != nil {
			return unavailable(err)
		}
	}
	s.migrated.Store(true)
	return nil
}

func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.Timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.Timeout)
}

// unavailable marks an error of the database as the archive being unreachable.
func unavailable(err error) error {
	if err == nil || errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// TransferRecord is one transfer as it goes into the archive.
type TransferRecord struct {
	ID, UID, Namespace, Account string
	Method, Network             string
	CustomerUUID                string
	// TxHash is a v2 transfer's confirmed hash as claimed (normalised); empty when none.
	TxHash    string
	Phase     string
	CreatedAt time.Time
	EndedAt   time.Time
	// Lookup is the "transfer" of GET /api/payouts/transfer/{id}, byte for byte.
	Lookup []byte
	// Object is the whole Transfer; Refund its Refund object (nil when none).
	Object, Refund []byte
	Deposits       []DepositRecord
}

// DepositRecord is one Deposit object of an archived transfer.
type DepositRecord struct {
	Namespace, Name string
	Network, TxHash string
	LogIndex        int64
	Object          []byte
}

// PutTransfers writes recs into the archive in one transaction, idempotently: a transfer
// already archived from the same object (a pass interrupted after its insert) takes the newer
// version (a transfer changed between the insert and its delete is archived again: the delete
// is guarded by the resourceVersion archived) but keeps the Refund it was archived with (a
// pass that deleted the Refund object and then stopped inserts again without it), and a row of
// another object with the same id is never touched. It then reads the
// rows back and returns the ids whose row holds this very object (same UID): only those may
// leave the API server. Every other id comes back in refused with the reason: a customer_uuid
// or v2 hash the archive holds for another transfer, or an id archived from another object.
func (s *Store) PutTransfers(ctx context.Context, recs []TransferRecord) (stored []string, refused map[string]error, err error) {
	if len(recs) == 0 {
		return nil, nil, nil
	}
	if err := s.ensure(ctx); err != nil {
		return nil, nil, err
	}
	refused = map[string]error{}
	err = s.insertTransfers(ctx, recs)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		// A unique key of another transfer: find the culprits one by one; the rest go in.
		for i := range recs {
			if err := s.insertTransfers(ctx, recs[i:i+1]); err != nil {
				if errors.As(err, &pgErr) && pgErr.Code == "23505" {
					refused[recs[i].ID] = fmt.Errorf("the archive holds %s for another transfer (%s)", pgErr.ConstraintName, pgErr.Detail)
					continue
				}
				return nil, nil, unavailable(err)
			}
		}
	} else if err != nil {
		return nil, nil, unavailable(err)
	}
	ids := make([]string, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	rows, err := s.pool.Query(ctx, `SELECT id, uid FROM archived_transfers WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, nil, unavailable(err)
	}
	uids := map[string]string{}
	for rows.Next() {
		var id, uid string
		if err := rows.Scan(&id, &uid); err != nil {
			rows.Close()
			return nil, nil, unavailable(err)
		}
		uids[id] = uid
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, unavailable(err)
	}
	for _, r := range recs {
		switch uid, ok := uids[r.ID]; {
		case ok && uid == r.UID:
			stored = append(stored, r.ID)
		case ok:
			refused[r.ID] = fmt.Errorf("the archive holds transfer %s from another object (uid %s, not %s)", r.ID, uid, r.UID)
		case refused[r.ID] == nil:
			refused[r.ID] = fmt.Errorf("transfer %s is not in the archive after its insert", r.ID)
		}
	}
	return stored, refused, nil
}

func (s *Store) insertTransfers(ctx context.Context, recs []TransferRecord) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, r := range recs {
			b.Queue(`INSERT INTO archived_transfers (id, uid, namespace, account, method, network, customer_uuid, tx_hash, phase,
					created_at, ended_at, lookup, object, refund)
				VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, ''), $9, $10, $11, $12, $13, $14)
				ON CONFLICT (id) DO UPDATE SET tx_hash = EXCLUDED.tx_hash, phase = EXCLUDED.phase, ended_at = EXCLUDED.ended_at,
					lookup = EXCLUDED.lookup, object = EXCLUDED.object,
					refund = coalesce(EXCLUDED.refund, archived_transfers.refund)
				WHERE archived_transfers.uid = EXCLUDED.uid`,
				r.ID, r.UID, r.Namespace, r.Account, r.Method, r.Network, strings.ToLower(r.CustomerUUID), r.TxHash, r.Phase,
				r.CreatedAt, r.EndedAt, string(r.Lookup), string(r.Object), nullJSON(r.Refund))
			for _, d := range r.Deposits {
				b.Queue(`INSERT INTO archived_deposits (namespace, name, transfer_id, network, tx_hash, log_index, object)
					VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
					d.Namespace, d.Name, r.ID, d.Network, strings.ToLower(d.TxHash), d.LogIndex, string(d.Object))
			}
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// TransferLookup is the archived answer of GET /api/payouts/transfer/{id} ("transfer" of the
// body, byte for byte), and whether the archive holds the transfer.
func (s *Store) TransferLookup(ctx context.Context, id string) ([]byte, bool, error) {
	if err := s.ensure(ctx); err != nil {
		return nil, false, err
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var lookup string
	err := s.pool.QueryRow(ctx, `SELECT lookup FROM archived_transfers WHERE id = $1`, id).Scan(&lookup)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, unavailable(err)
	}
	return []byte(lookup), true, nil
}

// ArchivedTransfer is what confirm-transfer needs to know of an archived transfer.
type ArchivedTransfer struct {
	ID, Namespace, Method, Network, TxHash, Phase string
}

// Transfer reads an archived transfer's keys, and whether the archive holds it.
func (s *Store) Transfer(ctx context.Context, id string) (*ArchivedTransfer, bool, error) {
	if err := s.ensure(ctx); err != nil {
		return nil, false, err
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	a := &ArchivedTransfer{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT namespace, method, network, coalesce(tx_hash, ''), phase FROM archived_transfers WHERE id = $1`, id).
		Scan(&a.Namespace, &a.Method, &a.Network, &a.TxHash, &a.Phase)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, unavailable(err)
	}
	return a, true, nil
}

// CustomerUUIDUsed reports whether an archived transfer holds the customer_uuid.
func (s *Store) CustomerUUIDUsed(ctx context.Context, uuid string) (bool, error) {
	return s.exists(ctx, `SELECT EXISTS (SELECT 1 FROM archived_transfers WHERE customer_uuid = lower($1))`, uuid)
}

// TxHashUsed reports whether the hash is linked to an archived transfer: as a v2 transfer's
// confirmed hash (hash normalised as claimed), or as a v1 deposit's transaction.
func (s *Store) TxHashUsed(ctx context.Context, hash string) (bool, error) {
	return s.exists(ctx, `SELECT EXISTS (SELECT 1 FROM archived_transfers WHERE tx_hash = $1)
		OR EXISTS (SELECT 1 FROM archived_deposits WHERE tx_hash = lower($1))`, hash)
}

func (s *Store) exists(ctx context.Context, query string, arg any) (bool, error) {
	if err := s.ensure(ctx); err != nil {
		return false, err
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var found bool
	if err := s.pool.QueryRow(ctx, query, arg).Scan(&found); err != nil {
		return false, unavailable(err)
	}
	return found, nil
}

// RecipientRecord is one recipient as it goes into the archive.
type RecipientRecord struct {
	ID         int64
	UID        string
	Namespace  string
	Lineage    string
	ReplacedBy *int64
	// Lookup is GET /api/payouts/recipients/{id}'s body, byte for byte; Object the Recipient.
	Lookup, Object []byte
}

// PutRecipients writes recs into the archive in one transaction, idempotently, and returns the
// ids whose row holds this very object (same UID): only those may leave the API server.
func (s *Store) PutRecipients(ctx context.Context, recs []RecipientRecord) ([]int64, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	if err := s.ensure(ctx); err != nil {
		return nil, err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, r := range recs {
			b.Queue(`INSERT INTO archived_recipients (id, uid, namespace, lineage, replaced_by, lookup, object)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (id) DO UPDATE SET replaced_by = EXCLUDED.replaced_by, lookup = EXCLUDED.lookup, object = EXCLUDED.object
				WHERE archived_recipients.uid = EXCLUDED.uid`,
				r.ID, r.UID, r.Namespace, r.Lineage, r.ReplacedBy, string(r.Lookup), string(r.Object))
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return nil, unavailable(err)
	}
	ids := make([]int64, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	rows, err := s.pool.Query(ctx, `SELECT id, uid FROM archived_recipients WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	uids := map[int64]string{}
	for rows.Next() {
		var id int64
		var uid string
		if err := rows.Scan(&id, &uid); err != nil {
			return nil, unavailable(err)
		}
		uids[id] = uid
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	var stored []int64
	for _, r := range recs {
		if uids[r.ID] == r.UID {
			stored = append(stored, r.ID)
		}
	}
	return stored, nil
}

// ArchivedRecipient is an archived recipient.
type ArchivedRecipient struct {
	ID         int64
	Namespace  string
	ReplacedBy *int64
	// Lookup is GET /api/payouts/recipients/{id}'s body as it was archived.
	Lookup []byte
}

// Recipient reads an archived recipient, and whether the archive holds it.
func (s *Store) Recipient(ctx context.Context, id int64) (*ArchivedRecipient, bool, error) {
	if err := s.ensure(ctx); err != nil {
		return nil, false, err
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	a := &ArchivedRecipient{ID: id}
	var lookup string
	err := s.pool.QueryRow(ctx, `SELECT namespace, replaced_by, lookup FROM archived_recipients WHERE id = $1`, id).
		Scan(&a.Namespace, &a.ReplacedBy, &lookup)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, unavailable(err)
	}
	a.Lookup = []byte(lookup)
	return a, true, nil
}

// Counts are the archive's rows.
type Counts struct{ Transfers, Deposits, Recipients int64 }

// Count counts the archive's rows (for tests and the benchmark).
func (s *Store) Count(ctx context.Context) (Counts, error) {
	var c Counts
	if err := s.ensure(ctx); err != nil {
		return c, err
	}
	err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM archived_transfers), (SELECT count(*) FROM archived_deposits),
		(SELECT count(*) FROM archived_recipients)`).Scan(&c.Transfers, &c.Deposits, &c.Recipients)
	return c, unavailable(err)
}
