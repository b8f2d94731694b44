package testredis

import (
	"context"
	"testing"
)

// TestStartAdoptsNoOtherServer: a second server started on the port of a running one (two test
// processes that picked the same port) must not take the first one's answers for its own; it
// failed to bind, and the first one's stop would leave its test with nothing.
func TestStartAdoptsNoOtherServer(t *testing.T) {
	first := StartForTest(t)
	bin, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	second := &Server{bin: bin, dir: t.TempDir(), port: first.port}
	t.Cleanup(func() { _ = second.Stop() })
	if err := second.start(); err == nil {
		t.Fatalf("a second redis-server on port %d started: it answers with the first one's server", first.port)
	}
	// Start, picking its own port, gets a server of its own
	third, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = third.Stop() })
	if third.port == first.port {
		t.Fatalf("port %d handed out twice", first.port)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	c := third.Client()
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("the third server went with the first: %v", err)
	}
}
