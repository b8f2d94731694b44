// Package testredis runs a private redis-server for tests: Debian's redis-server (installed by
// `make redis-server`, which `make test` runs) on a free loopback port, with a scratch
// directory, no persistence, stopped with the test. A test can stop it and start it again on
// the same port, as an outage would.
package testredis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/stablepay/payout-operator/internal/freeport"
)

// EnvBinary names a redis-server binary to use instead of the one on PATH.
const EnvBinary = "PAYOUT_REDIS_SERVER"

// Find returns $PAYOUT_REDIS_SERVER, else redis-server from PATH or /usr/bin. Its error says how
// to install it: the tests that need Redis fail without it; only -short skips them.
func Find() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("testredis: %s=%s: %w", EnvBinary, p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/redis-server"); err == nil {
		return "/usr/bin/redis-server", nil
	}
	return "", errors.New("testredis: redis-server is not installed; the tests of the shared limits run a real Redis: " +
		"run `make redis-server` (as root it installs Debian's redis-server with apt-get; `make test` does it), " +
		"or `sudo apt-get install redis-server`, or set " + EnvBinary)
}

// Server is a running redis-server of a test.
type Server struct {
	bin, dir string
	port     int

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	runs int
}

// Start runs redis-server with its files in dir, on a free loopback port, and waits until it
// answers.
func Start(dir string) (*Server, error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir}
	// a free port can be taken between choosing it and binding it: choose again
	for attempt := 0; ; attempt++ {
		if s.port, err = freeport.Port(); err != nil {
			return nil, err
		}
		if err = s.start(); err == nil {
			return s, nil
		}
		if attempt == 4 {
			return nil, err
		}
	}
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Client is a new client of the server, for looking at what the code under test wrote.
func (s *Server) Client() *redis.Client {
	return redis.NewClient(clientOptions(s.Addr()))
}

func clientOptions(addr string) *redis.Options {
	return &redis.Options{Addr: addr, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}}
}

// Restart starts the server again on the same port (empty: it keeps nothing), after Stop.
func (s *Server) Restart() error {
	var err error
	for range 20 {
		// the port's last connections may hold it for a moment
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("testredis: already running")
	}
	s.runs++
	logFile := filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", s.runs))
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--logfile", logFile, "--loglevel", "warning")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testredis: starting %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		// the server answering must be this child: another one on the port (a process that
		// picked it too) answers as well, while this child fails to bind and exits
		pid, err := serverPID(s.Addr())
		if err == nil && pid == cmd.Process.Pid {
			s.cmd, s.done = cmd, done
			return nil
		}
		if err == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			return fmt.Errorf("testredis: port %d answers for another redis-server (pid %d)", s.port, pid)
		}
		select {
		case <-done:
			log, _ := os.ReadFile(logFile)
			return fmt.Errorf("testredis: redis-server on port %d exited: %s", s.port, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			return fmt.Errorf("testredis: redis-server on port %d did not answer within 10 s", s.port)
		}
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after 5 s) and waits until it has exited.
// Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	s.cmd, s.done = nil, nil
	return nil
}

// TB is the part of testing.TB StartForTest uses; Ginkgo's GinkgoT() has it too.
type TB interface {
	Helper()
	Fatal(args ...any)
	Skip(args ...any)
	TempDir() string
	Cleanup(func())
}

// StartForTest starts a server that stops when the test (or suite) ends; it fails the test
// when redis-server is missing or does not start. Under -short (`make test-unit`) it skips the
// test instead.
func StartForTest(tb TB) *Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: this test starts redis-server")
	}
	s, err := Start(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Stop() })
	return s
}

// serverPID is the process id of the redis-server answering at addr (INFO server's process_id).
func serverPID(addr string) (int, error) {
	opts := clientOptions(addr)
	opts.MaxRetries, opts.DialTimeout = -1, time.Second
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("testredis: INFO server at %s has no process_id", addr)
}
