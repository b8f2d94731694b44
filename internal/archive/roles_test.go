package archive_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/test/pgtest"
	"github.com/stablepay/payout-operator/test/testenv"
)

// rolesSQL is the SQL of docs/operations/retention.md's "Database roles": the statements to run
// on the server's first database, and those to run in the archive's database.
func rolesSQL(t *testing.T) (server, archiveDB []string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "operations", "retention.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, part, ok := strings.Cut(string(doc), "<!-- archive-roles:begin -->")
	part, _, ok2 := strings.Cut(part, "<!-- archive-roles:end -->")
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(part, -1)
	if !ok || !ok2 || len(blocks) != 2 {
		t.Fatalf("docs/operations/retention.md: want two sql blocks between the archive-roles markers, found %d", len(blocks))
	}
	statements := func(block string) (out []string) {
		for _, s := range strings.Split(block, ";") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return statements(blocks[0][1]), statements(blocks[1][1])
}

func run(ctx context.Context, t *testing.T, dsn string, statements []string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range statements {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// The facade's archive role, set up as the docs say, reads archived transfers and recipients and
// can change nothing: no insert, update or delete, no table of its own.
func TestReaderRoleCannotWrite(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	server, archiveDB := rolesSQL(t)
	run(ctx, t, pg.DSN(), server)
	as := func(role string) string { // the database payout_archive as role (trust authentication)
		return strings.Replace(strings.Replace(pg.DSN(), "/postgres?", "/payout_archive?", 1), "//payout@", "//"+role+"@", 1)
	}
	// the grants before the tables exist (default privileges), as an operator would set it up
	run(ctx, t, strings.Replace(pg.DSN(), "/postgres?", "/payout_archive?", 1), archiveDB)

	writer, err := archive.Open(ctx, as("payout_archiver"))
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	a := record("aaaaaaaaaaaaaaaaaaaaaaaa", "7D0E1C55-8D0F-4D4E-9F59-3C8A5B1F2E3D", "0x"+repeat("ab", 32))
	if stored, _, err := writer.PutTransfers(ctx, []archive.TransferRecord{a}); err != nil || len(stored) != 1 {
		t.Fatalf("the controllers' role archives: %v %v", stored, err)
	}

	reader, err := archive.Open(ctx, as("payout_facade"))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if got, ok, err := reader.TransferLookup(ctx, a.ID); err != nil || !ok || string(got) != string(a.Lookup) {
		t.Fatalf("the facade's role reads a transfer: %q %v %v", got, ok, err)
	}
	if used, err := reader.TxHashUsed(ctx, a.TxHash); err != nil || !used {
		t.Fatalf("the facade's role checks a hash: %v %v", used, err)
	}
	b := record("bbbbbbbbbbbbbbbbbbbbbbbb", "11111111-2222-3333-4444-555555555555", "")
	if stored, _, err := reader.PutTransfers(ctx, []archive.TransferRecord{b}); err == nil || len(stored) != 0 {
		t.Errorf("the facade's role archived a transfer: %v %v", stored, err)
	}
	conn, err := pgx.Connect(ctx, as("payout_facade"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range []string{
		"DELETE FROM archived_transfers",
		"UPDATE archived_transfers SET tx_hash = NULL",
		"INSERT INTO archived_recipients SELECT * FROM archived_recipients",
		"TRUNCATE archived_deposits",
		"DROP TABLE archived_transfers",
		"CREATE TABLE mine (x int)",
	} {
		_, err := conn.Exec(ctx, s)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s as the facade's role: %v, want permission denied", s, err)
		}
	}
	if got, ok, err := writer.TransferLookup(ctx, a.ID); err != nil || !ok || string(got) != string(a.Lookup) {
		t.Errorf("the archived transfer after the facade's attempts: %q %v %v", got, ok, err)
	}
}
