// Package pgtest starts a throwaway PostgreSQL server for tests: initdb into a temporary
// directory, a free loopback port, a private socket directory, stopped when the test ends.
//
// The server binaries come from $PG_BIN, else the newest /usr/lib/postgresql/*/bin, else the
// directory `pg_config --bindir` names: hack/postgres.sh (`make postgres`, which `make test` runs)
// finds them the same way and, as root on a fresh machine, installs Debian's postgresql. When none
// is there the test fails and says how to install it; only -short (`make test-unit`) skips it.
// PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (or
// `nobody`).
package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stablepay/payout-operator/internal/freeport"
)

// TB is the part of testing.TB (and of Ginkgo's GinkgoT()) the server needs.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Skip(args ...any)
	Cleanup(func())
}

// Server is a running PostgreSQL server.
type Server struct {
	bin, dir, data, sock string
	port                 int
	cred                 *syscall.Credential
}

// Start starts a server that is stopped (and its files removed) when the test ends. Under -short
// (`make test-unit`) it skips the test instead.
func Start(tb TB) *Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: this test starts PostgreSQL")
	}
	s, err := start()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(s.Remove)
	return s
}

// StartServer starts a server the caller stops with Remove (for programs and benchmarks).
func StartServer() (*Server, error) { return start() }

// DSN is the server's connection string (database postgres, user payout, trust auth).
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://payout@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Dir is the server's data directory.
func (s *Server) Dir() string { return s.data }

func start() (*Server, error) { return startAt(0) }

// startAt starts a new server, its first try on port (0: a free one; a test forces a taken one).
// Another process's server may bind the port between its pick and this one's start: the
// postmaster then exits ("could not bind"), pg_ctl -w says so, and the next try takes another
// port. pg_ctl -w succeeds only once the postmaster named in this server's own data directory
// (postmaster.pid) is ready, which it is only after binding the port: the server answering
// there is this one.
func startAt(port int) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, data: filepath.Join(dir, "data"), sock: filepath.Join(dir, "sock")}
	if err := os.Mkdir(s.sock, 0o700); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		if s.cred, err = unprivileged(); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		for _, p := range []string{dir, s.sock} {
			if err := os.Chown(p, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
				_ = os.RemoveAll(dir)
				return nil, err
			}
		}
	}
	if err := s.run("initdb", "-D", s.data, "-U", "payout", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	for attempt, try := 0, port; ; attempt, try = attempt+1, 0 {
		s.port = try
		if err = s.Start(); err == nil {
			return s, nil
		}
		if attempt == 4 {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
}

// Start (re)starts a stopped server on its port.
func (s *Server) Start() error {
	if s.port == 0 {
		p, err := freeport.Port()
		if err != nil {
			return err
		}
		s.port = p
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
		s.port, s.sock)
	return s.run("pg_ctl", "-D", s.data, "-o", opts, "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "60", "start")
}

// Stop stops the server and keeps its files (Start brings it back).
func (s *Server) Stop() error {
	return s.run("pg_ctl", "-D", s.data, "-m", "fast", "-w", "stop")
}

// Remove stops the server and removes its files.
func (s *Server) Remove() {
	_ = s.Stop()
	_ = os.RemoveAll(s.dir)
}

func (s *Server) run(tool string, args ...string) error {
	cmd := exec.Command(filepath.Join(s.bin, tool), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		return fmt.Errorf("%s %s: %w\n%s%s", tool, strings.Join(args, " "), err, out, tail(log, 2000))
	}
	return nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// unprivileged is the user the server runs as when the test runs as root.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and neither a postgres nor a nobody user exists to run PostgreSQL as")
}

// binDir finds the server binaries. Installing them is the set-up's job (hack/postgres.sh), not
// a test's: a test that ran apt-get would do so in parallel with the others, and as any user.
func binDir() (string, error) {
	if dir, ok := findBin(); ok {
		return dir, nil
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl) found in $PG_BIN, /usr/lib/postgresql/*/bin or pg_config --bindir: " +
		"run `make postgres` (as root it installs Debian's postgresql with apt-get; `make test` does it), " +
		"or `sudo apt-get install postgresql`, or set PG_BIN to their directory")
}

func findBin() (string, bool) {
	var dirs []string
	if d := os.Getenv("PG_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	dirs = append(dirs, found...)
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, true
		}
	}
	return "", false
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
