package freeport

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
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

// narrow makes the picks fall in [lowest, lowest+1000), so that random picks of two processes
// would meet there within a few hundred.
func narrow(t *testing.T) {
	t.Helper()
	old := rangeFile
	t.Cleanup(func() { rangeFile = old })
	rangeFile = filepath.Join(t.TempDir(), "range")
	if err := os.WriteFile(rangeFile, []byte(strconv.Itoa(lowest+1000)+"\t60999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// holderEnv makes the test binary a process that picks ports and holds them (TestMain).
const holderEnv = "FREEPORT_TEST_HOLDER"

func TestMain(m *testing.M) {
	if os.Getenv(holderEnv) != "" {
		hold()
		return
	}
	os.Exit(m.Run())
}

// hold picks 300 ports in the narrow range, prints them and keeps them until stdin closes.
func hold() {
	rangeFile = os.Getenv(holderEnv)
	for range 300 {
		port, err := Port()
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(port)
	}
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// TestNoPortHandedOutTwice: 300 picks of this process and 300 of another one running beside
// it, in 1000 ports, are 600 different ports, none of them bound: a port handed out stays the
// process's until it exits, even before its server binds it.
func TestNoPortHandedOutTwice(t *testing.T) {
	narrow(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+rangeFile)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	seen := map[int]string{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "held" {
		port, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("the other process: %s", sc.Text())
		}
		seen[port] = "the other process"
	}
	if len(seen) != 300 {
		t.Fatalf("the other process holds %d different ports, want 300", len(seen))
	}
	for range 300 {
		port, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if who, ok := seen[port]; ok {
			t.Fatalf("port %d was handed out twice: to %s and to this one", port, who)
		}
		seen[port] = "this process"
	}
}
