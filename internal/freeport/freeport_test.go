package freeport

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestPortBelowTheEphemeralRange: the picked port is free and below the range the kernel hands
// to outgoing connections and port-0 listeners, which a port-0 pick is not.
func TestPortBelowTheEphemeralRange(t *testing.T) {
	first := ephemeralStart()
	for range 50 {
		port, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if port < lowest || port >= first {
			t.Fatalf("port %d is outside [%d, %d)", port, lowest, first)
		}
		l, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		_ = l.Close()
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if p := l.Addr().(*net.TCPAddr).Port; p < first {
		t.Logf("note: the kernel's own pick %d is below %d: the range file says otherwise", p, first)
	}
}

// TestPortSkipsATakenPort: with every port of a narrow range but one taken, that one is picked.
func TestPortSkipsATakenPort(t *testing.T) {
	dir := t.TempDir()
	old := rangeFile
	t.Cleanup(func() { rangeFile = old })
	rangeFile = filepath.Join(dir, "range")
	// a range starting 1000 above lowest: the picks fall in [lowest, lowest+1000)
	if err := os.WriteFile(rangeFile, []byte(strconv.Itoa(lowest+1000)+"\t60999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var held []net.Listener
	t.Cleanup(func() {
		for _, l := range held {
			_ = l.Close()
		}
	})
	keep := -1
	for p := lowest; p < lowest+1000; p++ {
		l, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue // someone else's
		}
		if keep < 0 {
			keep = p
			_ = l.Close()
			continue
		}
		held = append(held, l)
	}
	if keep < 0 {
		t.Skip("no free port in the test range")
	}
	// 100 random tries in 1000 ports find the one free port only by luck; the fallback then
	// answers with a kernel-picked port, which must be free too
	port, err := Port()
	if err != nil {
		t.Fatal(err)
	}
	if port != keep && port >= lowest && port < lowest+1000 {
		t.Fatalf("port %d was taken", port)
	}
}

func TestEphemeralStartReadsTheRange(t *testing.T) {
	old := rangeFile
	t.Cleanup(func() { rangeFile = old })
	rangeFile = filepath.Join(t.TempDir(), "range")
	for text, want := range map[string]int{"40000\t60999\n": 40000, "": defaultEphemeral, "x y": defaultEphemeral} {
		if err := os.WriteFile(rangeFile, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ephemeralStart(); got != want {
			t.Errorf("%q: %d, want %d", text, got, want)
		}
	}
	rangeFile = filepath.Join(t.TempDir(), "missing")
	if got := ephemeralStart(); got != defaultEphemeral {
		t.Errorf("missing file: %d", got)
	}
}
