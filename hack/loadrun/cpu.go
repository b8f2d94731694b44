package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cpuProcs are the processes whose CPU time a window accounts for: this one (the load client,
// and the facade with its controllers when it runs in this process), the control plane, and a
// payoutd process and the bare handler's (another loadrun) when the process mode starts them. On a machine of two cores they share, a
// window's rate is what is left of the CPU after all of them, so what one request costs each of
// them says where a facade's requests lose to the floor's.
var cpuProcs = []string{"loadrun", "bare", "payoutd", "kube-apiserver", "etcd"}

// cpuTimes is the CPU time (user and system) spent so far by each of cpuProcs that runs.
type cpuTimes map[string]time.Duration

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on Linux for every
// architecture Go supports).
const clockTick = 10 * time.Millisecond

// readCPU reads the CPU time of this process and of the other cpuProcs, by their command's
// name; it returns nil where /proc cannot be read (the report then has no CPU line).
func readCPU() cpuTimes {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := strconv.Itoa(os.Getpid())
	out := cpuTimes{}
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		name := "loadrun"
		if pid != self {
			comm, err := os.ReadFile(filepath.Join("/proc", pid, "comm"))
			if err != nil {
				continue
			}
			name = strings.TrimSpace(string(comm))
			if strings.HasPrefix(name, "loadrun") {
				name = "bare"
			}
			if !slices.Contains(cpuProcs, name) {
				continue
			}
		}
		stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if err != nil {
			continue
		}
		// the fields after the command (which may hold spaces) are space-separated; utime and
		// stime are the 14th and 15th fields of the line, the 12th and 13th after ") "
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		out[name] += time.Duration(u+s) * clockTick
	}
	return out
}

// since is the CPU each process spent from before to t.
func (t cpuTimes) since(before cpuTimes) cpuTimes {
	if t == nil || before == nil {
		return nil
	}
	d := cpuTimes{}
	for k, v := range t {
		d[k] = v - before[k]
	}
	return d
}

// add sums d into t.
func (t *cpuTimes) add(d cpuTimes) {
	if d == nil {
		return
	}
	if *t == nil {
		*t = cpuTimes{}
	}
	for k, v := range d {
		(*t)[k] += v
	}
}

// perOp is the line of the report saying what one of n operations cost each process in CPU, and
// the cores all of them kept busy over the window's length d.
func (t cpuTimes) perOp(n int64, d time.Duration) string {
	if t == nil || n == 0 {
		return ""
	}
	var parts []string
	var all time.Duration
	for _, p := range cpuProcs {
		if v, ok := t[p]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f", p, float64(v)/float64(time.Microsecond)/float64(n)))
			all += v
		}
	}
	return fmt.Sprintf("CPU µs per op: %s; %.2f cores busy", strings.Join(parts, ", "), all.Seconds()/d.Seconds())
}
