// Package hostport checks a server address setting (host:port) the way payoutd's flags name it.
package hostport

import (
	"fmt"
	"net"
	"strconv"
)

// Check says why addr is not host:port with a host and a port from 1 to 65535, or nil; the
// message quotes addr and is meant to follow the flag's name.
func Check(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not host:port (%v)", addr, err)
	case host == "":
		return fmt.Errorf("%q has no host", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port %q is not a number from 1 to 65535", addr, port)
	}
	return nil
}
