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
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
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

// Port returns a port of 127.0.0.1 nothing listens on now, below the kernel's ephemeral range:
// random, so that processes picking at the same time rarely pick alike, and tried by listening
// on it. Where the range leaves no room below it, it falls back to a port the kernel picks.
func Port() (int, error) {
	first := ephemeralStart()
	if first-lowest >= 1000 {
		for range 100 {
			port := lowest + rand.IntN(first-lowest)
			if free(port) {
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
