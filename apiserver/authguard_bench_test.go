package apiserver

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// floodAddresses is the number of distinct addresses of the flood benchmarks.
const floodAddresses = 100_000

// BenchmarkAuthGuardFlood measures the per-address limits of spec 5.3 under a flood: 100 000
// distinct addresses each send one bad credential within one window, while three callers with
// good keys keep asking whether they are blocked, as every request does. One iteration is one
// whole flood on a fresh guard. It reports the heap the guard holds after the flood and the
// latency percentiles of fail (the flood's calls) and blocked (everyone's calls), which show
// any work done under the mutex every request takes.
//
//	go test ./apiserver -run '^$' -bench BenchmarkAuthGuardFlood -benchtime 3x
func BenchmarkAuthGuardFlood(b *testing.B) {
	for _, flood := range []struct {
		name string
		addr func(i int) netip.Addr
	}{
		// one attacker host rotating through the /64s of its /48 and the next: the cheapest
		// flood, since one IPv6 host usually holds whole prefixes
		{"ipv6-rotating-64s", func(i int) netip.Addr {
			var a [16]byte
			binary.BigEndian.PutUint32(a[0:], 0x20010db8)
			binary.BigEndian.PutUint16(a[4:], uint16(i>>16))
			binary.BigEndian.PutUint16(a[6:], uint16(i))
			a[15] = 1
			return netip.AddrFrom16(a)
		}},
		// addresses spread over the whole space (a botnet): no prefix in common
		{"random-v4-and-v6", func(i int) netip.Addr {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			if i%2 == 0 {
				var a [4]byte
				binary.BigEndian.PutUint32(a[:], r.Uint32())
				return netip.AddrFrom4(a)
			}
			var a [16]byte
			binary.BigEndian.PutUint64(a[0:], r.Uint64())
			binary.BigEndian.PutUint64(a[8:], r.Uint64())
			return netip.AddrFrom16(a)
		}},
	} {
		b.Run(flood.name, func(b *testing.B) {
			addrs := make([]netip.Addr, floodAddresses)
			for i := range addrs {
				addrs[i] = flood.addr(i)
			}
			var heap []float64
			var fails, checks []time.Duration
			b.ResetTimer()
			for b.Loop() {
				h, f, c := floodOnce(addrs)
				heap, fails, checks = append(heap, h), append(fails, f...), append(checks, c...)
			}
			b.StopTimer()
			b.ReportMetric(slices.Max(heap)/(1<<20), "heap-MiB")
			for _, m := range []struct {
				name string
				d    []time.Duration
			}{{"fail", fails}, {"blocked", checks}} {
				slices.Sort(m.d)
				b.ReportMetric(float64(percentile(m.d, 50).Nanoseconds()), m.name+"-p50-ns")
				b.ReportMetric(float64(percentile(m.d, 99).Nanoseconds()), m.name+"-p99-ns")
				b.ReportMetric(float64(percentile(m.d, 99.9).Nanoseconds()), m.name+"-p99.9-ns")
				b.ReportMetric(float64(m.d[len(m.d)-1].Nanoseconds()), m.name+"-max-ns")
			}
		})
	}
}

// floodOnce runs one flood on a fresh guard and returns the heap it holds afterwards and the
// latencies of the flood's and the readers' calls.
func floodOnce(addrs []netip.Addr) (heap float64, fails, checks []time.Duration) {
	start := time.Now()
	var ticks atomic.Int64 // a millisecond per failure: the whole flood stays in one window
	g := newAuthGuard(10*time.Minute, 5, 10, func() time.Time { return start.Add(time.Duration(ticks.Load()) * time.Millisecond) })
	legit := []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("2001:db8:ffff::1")}

	fails = make([]time.Duration, 0, len(addrs))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	done := make(chan struct{})
	var wg sync.WaitGroup
	perReader := make([][]time.Duration, len(legit))
	for r, ip := range legit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				t := time.Now()
				g.blocked(ip)
				perReader[r] = append(perReader[r], time.Since(t))
			}
		}()
	}
	for _, ip := range addrs {
		t := time.Now()
		g.fail(ip, badCredential)
		fails = append(fails, time.Since(t))
		ticks.Add(1)
	}
	close(done)
	wg.Wait()

	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(g)
	// what the guard holds: the heap's growth less the readers' latency records kept alive
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	for _, d := range perReader {
		held -= float64(cap(d)) * 8
		checks = append(checks, d...)
	}
	return held, fails, checks
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}
