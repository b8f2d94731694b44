package watch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// Benchmarks of the deposit watcher against a real anvil node (and, for the latency, a real
// API server). Run them alone, on a quiet machine:
//
//	go test ./internal/chain/watch -run '^$' -bench . -benchtime 200x -count 3
//
// BenchmarkScanBlock compares one block's scan with 100 and with 100,000 open deposit
// addresses: RPC requests and calls per block must not change, CPU per block must stay flat.
// BenchmarkDepositLatency measures the delay from the block that brings a deposit to depth to
// its Deposit object being stored, with 100 and 100,000 open addresses.

// bookOf is an address book holding the given real addresses and random ones up to size.
func bookOf(size int, real map[common.Address]string) *AddressBook {
	b := NewAddressBook(nil, logr.Discard())
	for a, id := range real {
		b.put(&payoutv1.Transfer{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: id},
			Spec: payoutv1.TransferSpec{Method: payoutv1.TransferV1, SourceNetwork: payoutv1.NetworkBase, DepositAddress: a.Hex()}})
	}
	for i := 0; b.Len() < size; i++ {
		var a [20]byte
		_, _ = rand.Read(a[:])
		b.put(&payoutv1.Transfer{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("%024x", i)},
			Spec: payoutv1.TransferSpec{Method: payoutv1.TransferV1, SourceNetwork: payoutv1.NetworkBase, DepositAddress: "0x" + hex.EncodeToString(a[:])}})
	}
	b.synced.Store(ptr(func() bool { return true }))
	return b
}

func ptr[T any](v T) *T { return &v }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const (
	benchBlocks       = 30 // blocks of traffic
	transfersPerBlock = 20 // USDC transfers in each
	depositsPerBlock  = 2  // of which to watched addresses
)

func BenchmarkScanBlock(b *testing.B) {
	set := devchain.StartForTest(b, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(b, c)
	watched := map[common.Address]string{}
	first := chaintest.Head(b, c) + 1
	for blk := 0; blk < benchBlocks; blk++ {
		for i := 0; i < transfersPerBlock; i++ {
			var to common.Address
			_, _ = rand.Read(to[:])
			if i < depositsPerBlock {
				watched[to] = fmt.Sprintf("%024x", 1<<40+len(watched))
			}
			if _, err := c.SendTransfer(ctx, set.FundedKey, devchain.USDC, to, big.NewInt(int64(1_000_000+i))); err != nil {
				b.Fatal(err)
			}
		}
		chaintest.Mine(b, c, 1)
	}
	last := chaintest.Head(b, c)
	chaintest.Mine(b, c, 3)
	// the cursor before each block of traffic
	cursors := make([]evm.Cursor, 0, benchBlocks)
	for n := first - 1; n < last; n++ {
		h, err := c.Client.HeaderByNumber(ctx, big.NewInt(n))
		if err != nil {
			b.Fatal(err)
		}
		cursors = append(cursors, evm.Cursor{Block: n, Hash: h.Hash(), Recent: []evm.BlockRef{{Number: n, Hash: h.Hash()}}})
	}
	head := chaintest.Head(b, c)
	// Both sizes scan the same blocks in turn, so that the machine's noise falls on both alike.
	sizes := []int{100, 100_000}
	scanners := make([]*evm.Scanner, len(sizes))
	for i, size := range sizes {
		n := chaintest.Network(c, 3)
		n.MaxBlockRange = 1 // one block per step, as when the watcher keeps up with the chain
		ch, err := evm.NewChain(payoutv1.NetworkBase, n)
		if err != nil {
			b.Fatal(err)
		}
		scanners[i] = &evm.Scanner{Chain: ch, Book: bookOf(size, watched)}
		if _, err := scanners[i].Step(ctx, cursors[0], head); err != nil { // verifies the chain id
			b.Fatal(err)
		}
	}
	cpu := make([]time.Duration, len(sizes))
	wall := make([]time.Duration, len(sizes))
	req0 := make([]int64, len(sizes))
	for i, s := range scanners {
		req0[i] = s.Chain.Client.Calls.Load()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, s := range scanners {
			k = (k + i) % len(scanners) // alternate which size goes first
			s = scanners[k]
			c0, w0 := cpuTime(), time.Now()
			st, err := s.Step(ctx, cursors[i%len(cursors)], head)
			wall[k] += time.Since(w0)
			cpu[k] += cpuTime() - c0
			if err != nil {
				b.Fatal(err)
			}
			if len(st.Deposits) != depositsPerBlock {
				b.Fatalf("%d deposits in block %d, want %d", len(st.Deposits), st.To, depositsPerBlock)
			}
		}
	}
	b.StopTimer()
	for k, size := range sizes {
		b.ReportMetric(float64(scanners[k].Chain.Client.Calls.Load()-req0[k])/float64(b.N), fmt.Sprintf("rpc-calls/block@%d", size))
		b.ReportMetric(float64(cpu[k].Microseconds())/float64(b.N), fmt.Sprintf("cpu-µs/block@%d", size))
		b.ReportMetric(float64(wall[k].Microseconds())/float64(b.N), fmt.Sprintf("wall-µs/block@%d", size))
	}
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-ratio-100k/100")
}

func BenchmarkAddressBookLookup(b *testing.B) {
	for _, size := range []int{100, 100_000} {
		book := bookOf(size, nil)
		probe := "0x" + hex.EncodeToString(make([]byte, 20))
		b.Run(fmt.Sprintf("addresses=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				book.TransferFor(payoutv1.NetworkBase, probe)
			}
		})
	}
}

// BenchmarkDepositLatency: each op sends a deposit, mines it to one block short of depth, waits
// a random part of a poll interval (so the depth block falls anywhere in the watcher's poll
// cycle), mines the depth block and measures until the Deposit object is stored (the create
// returned). A real watcher runs on a real API server.
func BenchmarkDepositLatency(b *testing.B) {
	set := devchain.StartForTest(b, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(b, c)
	for _, poll := range []time.Duration{250 * time.Millisecond, time.Second} {
		for _, size := range []int{100, 100_000} {
			b.Run(fmt.Sprintf("poll=%s/addresses=%d", poll, size), func(b *testing.B) {
				benchLatency(b, c, set, poll, size)
			})
		}
	}
}

func benchLatency(b *testing.B, c *devchain.Chain, set *devchain.Set, poll time.Duration, size int) {
	ns := namespace(b)
	id := fmt.Sprintf("0b%022x", time.Now().UnixNano()%(1<<60))
	addr, _, err := deriver.DepositAddress(payoutv1.NetworkBase, id)
	if err != nil {
		b.Fatal(err)
	}
	to := common.HexToAddress(addr)
	book := bookOf(size, map[common.Address]string{to: id})
	// the book's fake transfers live in namespace "bench"; the real one here
	book.byAddr[keyOf(payoutv1.NetworkBase, addr)] = bookEntry{transfer: types.NamespacedName{Namespace: ns, Name: id}}

	n := chaintest.Network(c, 3)
	n.PollInterval.Duration = poll
	ch, err := evm.NewChain(payoutv1.NetworkBase, n)
	if err != nil {
		b.Fatal(err)
	}
	type stored struct{ polled, at time.Time }
	recorded := make(chan stored, 16)
	deleteCursor(b, payoutv1.NetworkBase)
	w := &Watcher{
		Scanner: &evm.Scanner{Chain: ch, Book: book},
		Sink:    &DepositRecorder{Client: env.Client, Log: logr.Discard()},
		Client:  env.Client, Reader: env.Client, Log: logr.Discard(),
		Recorded: func(_ evm.Step, polled, at time.Time) { recorded <- stored{polled, at} },
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = w.Start(wctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitScanned(b, payoutv1.NetworkBase, chaintest.Head(b, c)-1)

	var delays []time.Duration
	var work time.Duration // from the poll that saw the depth block to the Deposit stored
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := c.SendTransfer(ctx, set.FundedKey, devchain.USDC, to, big.NewInt(int64(1_000_000+i))); err != nil {
			b.Fatal(err)
		}
		chaintest.Mine(b, c, 2) // the deposit's block and one more: 2 of 3 confirmations
		time.Sleep(poll + time.Duration(mrand.Int64N(int64(poll))))
		select {
		case <-recorded:
			b.Fatal("a deposit was stored before depth")
		default:
		}
		b.StartTimer()
		chaintest.Mine(b, c, 1)
		t0 := time.Now()
		select {
		case s := <-recorded:
			delays = append(delays, s.at.Sub(t0))
			work += s.at.Sub(s.polled)
		case <-time.After(30 * time.Second):
			b.Fatal("no deposit stored within 30s")
		}
	}
	b.StopTimer()
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	var sum time.Duration
	for _, d := range delays {
		sum += d
	}
	b.ReportMetric(float64(sum.Milliseconds())/float64(len(delays)), "mean-ms")
	b.ReportMetric(float64(delays[len(delays)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(delays[len(delays)*95/100].Milliseconds()), "p95-ms")
	b.ReportMetric(float64(delays[len(delays)-1].Milliseconds()), "max-ms")
	b.ReportMetric(float64(work.Microseconds())/1000/float64(len(delays)), "poll-to-stored-ms")
}

var _ chain.DepositSink = (*DepositRecorder)(nil)
