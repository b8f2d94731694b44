// Package freeport picks loopback addresses for servers that another process will bind: the
// dev environment's payoutd, and the test rigs that start payoutd, Redis or PostgreSQL.
//
// The usual way, listening on port 0 and closing the listener, hands the other process a port
// from the kernel's ephemeral range, the range every outgoing connection and every port-0
// listener on the machine draws from too. Between the pick and the other process's bind, a
// connection anywhere on a busy machine (a CI run starts hundreds) may take that port, and the
// server dies with "address already in use" (seen: `make run`'s wallet verification site). Ports
// below the ephemeral range are never handed out by the kernel, so only a process that asks for
// one by number can take it in that window.
//
// Our own processes pick from that range too, and `go test` runs packages side by side: two
// processes could pick the same free port, and the second server to start would find the
// first one answering there (seen: a test's Redis vanished mid-test when another package's
// test stopped its own). So every port handed out is locked for the life of the process
// (flock on a file per port in a directory of the user's): no two of our processes hand out
// the same port, and the kernel releases the lock when the process exits, however it ends.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// lowest is the smallest port picked: above the well-known and most registered services'.
const lowest = 20000

// defaultEphemeral is Linux's default first ephemeral port, where the range cannot be read.
const defaultEphemeral = 32768

// rangeFile is where Linux keeps its ephemeral port range.
var rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// Loopback returns a 127.0.0.1:port address nothing listens on now, its port below the
// kernel's ephemeral range.
func Loopback() (string, error) {
	port, err := Port()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// Port returns a port of 127.0.0.1 nothing listens on now, below the kernel's ephemeral range,
// that no other process of the user's (nor this one) was handed while it runs: random, locked
// (see the package's comment) and tried by listening on it. Where the range leaves no room
// below it, it falls back to a port the kernel picks, locked likewise.
func Port() (int, error) {
	first := ephemeralStart()
	if first-lowest >= 1000 {
		for range 100 {
			port := lowest + rand.IntN(first-lowest)
			ok, err := take(port)
			if err != nil {
				return 0, err
			}
			if ok {
				return port, nil
			}
		}
	}
	for range 100 {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		ok, err := take(port)
		if err != nil {
			return 0, err
		}
		if ok {
			return port, nil
		}
	}
	return 0, errors.New("freeport: no free port after 200 tries")
}

// lockDir is the directory of the port locks, one per user (a port is the machine's, but a
// lock file another user made could not be opened).
var lockDir = filepath.Join(os.TempDir(), fmt.Sprintf("payout-freeport-%d", os.Getuid()))

var (
	mu sync.Mutex
	// held keeps the lock files open, and so locked, until the process exits.
	held []*os.File
)

// take locks port for this process and reports whether it got the lock and the port is free.
// The lock files are never removed: a process that removed one while another held it would
// let a third lock a new file of the same name.
func take(port int) (bool, error) {
	mu.Lock()
	defer mu.Unlock()
	if err := os.MkdirAll(lockDir, 0o700); err != nil {
		return false, fmt.Errorf("freeport: %w", err)
	}
	// a shared temporary directory: a directory of that name another user made is not ours
	if st, err := os.Lstat(lockDir); err != nil || !st.IsDir() || st.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
		return false, fmt.Errorf("freeport: %s is not a directory of this user's", lockDir)
	}
	f, err := os.OpenFile(filepath.Join(lockDir, strconv.Itoa(port)), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("freeport: %w", err)
	}
	// a lock of another open file, in this process or another, refuses this one
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, fmt.Errorf("freeport: locking port %d: %w", port, err)
	}
	if !free(port) {
		_ = f.Close() // someone else's: the lock goes with the file
		return false, nil
	}
	held = append(held, f)
	return true, nil
}

// ephemeralStart is the first port of the kernel's ephemeral range.
func ephemeralStart() int {
	b, err := os.ReadFile(rangeFile)
	if err != nil {
		return defaultEphemeral
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return defaultEphemeral
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 1 {
		return defaultEphemeral
	}
	return n
}

func free(port int) bool {
	l, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}
