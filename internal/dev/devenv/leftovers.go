package devenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// recordChildren writes the pid and command of each child process (etcd, kube-apiserver) to
// path, so that a later run can stop them if this one is killed before it can.
func recordChildren(path string) {
	self := os.Getpid()
	var b strings.Builder
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid(pid) == self {
			fmt.Fprintf(&b, "%d %s\n", pid, command(pid))
		}
	}
	_ = writeAtomic(path, []byte(b.String()), 0o600)
}

// reapLeftovers stops the processes a killed run left behind, checking that each pid still runs
// the same command (pids are reused).
func reapLeftovers(path string, log logr.Logger) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		pidText, cmd, ok := strings.Cut(line, " ")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || cmd == "" || command(pid) != cmd {
			continue
		}
		log.Info("stopping a process left by an earlier run", "pid", pid, "command", filepath.Base(cmd))
		_ = syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 20 && command(pid) == cmd; i++ {
			time.Sleep(100 * time.Millisecond)
		}
		if command(pid) == cmd {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	_ = os.Remove(path)
}

func ppid(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// the command name in parentheses may hold spaces; the fields after it are fixed
	rest := data[bytes.LastIndexByte(data, ')')+1:]
	fields := strings.Fields(string(rest))
	if len(fields) < 2 {
		return -1
	}
	n, _ := strconv.Atoi(fields[1])
	return n
}

func command(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	exe, _, _ := bytes.Cut(data, []byte{0})
	return string(exe)
}
