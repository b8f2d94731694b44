package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartOnATakenPort: a server whose port another server took before it started (two test
// processes that picked the same port) starts on another port, and its DSN reaches it, not the
// other one.
func TestStartOnATakenPort(t *testing.T) {
	first := Start(t)
	second, err := startAt(first.port)
	if err != nil {
		t.Fatalf("a server whose port was taken did not start: %v", err)
	}
	t.Cleanup(second.Remove)
	if second.port == first.port {
		t.Fatalf("both servers on port %d", first.port)
	}
	for _, s := range []*Server{first, second} {
		conn, err := pgx.Connect(context.Background(), s.DSN())
		if err != nil {
			t.Fatal(err)
		}
		var dir string
		err = conn.QueryRow(context.Background(), "SHOW data_directory").Scan(&dir)
		_ = conn.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if dir != s.data {
			t.Errorf("the DSN of the server of %s reaches the server of %s", s.data, dir)
		}
	}
}
