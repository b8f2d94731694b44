package simbank

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Operation names, for Faults.Ops.
const (
	OpQuote    = "quote"    // POST /v3/profiles/{profileId}/quotes
	OpAccount  = "account"  // POST /v1/accounts
	OpTransfer = "transfer" // POST /v1/transfers
	OpFund     = "fund"     // POST /v3/profiles/{profileId}/transfers/{transferId}/payments
	OpGet      = "get"      // GET /v1/transfers/{transferId}
	OpList     = "list"     // GET /v1/transfers
)

// Faults makes the simulated bank misbehave on purpose, the way a real bank and network do, so
// that tests can prove the client never pays twice. Each rate is the fraction of calls, in
// [0, 1], that get that fault; together they are at most 1.
type Faults struct {
	// ErrorRate: answer 500, 502, 503 or 429 (in turn) without acting.
	ErrorRate float64
	// TimeoutRate: hold the call for Stall, then act and answer. A client whose timeout is
	// shorter than Stall has given up by then, yet the bank did what it asked.
	TimeoutRate float64
	// DropRate: act, then close the connection without any answer. Only calls that change
	// something (OpQuote, OpAccount, OpTransfer, OpFund) are dropped; reads are answered.
	DropRate float64
	// Stall is how long a timeout fault holds a call; default 2 s.
	Stall time.Duration
	// Ops limits the faults to these operations (OpQuote, ...); empty means every operation.
	Ops []string
	// Seed makes the choice of faulty calls repeatable for one sequence of calls; 0 picks a
	// random seed.
	Seed uint64
}

// FaultCounts says how many faults the bank has injected since it started.
type FaultCounts struct {
	Errors, Timeouts, Drops int
}

type fault int

const (
	noFault fault = iota
	errorFault
	timeoutFault
	dropFault
)

type injector struct {
	mu      sync.Mutex
	f       Faults
	rng     *rand.Rand
	counts  FaultCounts
	turn    int
	closing <-chan struct{}
}

func (in *injector) set(f Faults) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if f.Stall <= 0 {
		f.Stall = 2 * time.Second
	}
	seed := f.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	in.f, in.rng = f, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func (in *injector) decide(op string, mutating bool) (fault, time.Duration) {
	in.mu.Lock()
	defer in.mu.Unlock()
	f := in.f
	if in.rng == nil || (len(f.Ops) > 0 && !slices.Contains(f.Ops, op)) {
		return noFault, 0
	}
	x := in.rng.Float64()
	switch {
	case x < f.ErrorRate:
		in.counts.Errors++
		return errorFault, 0
	case x < f.ErrorRate+f.TimeoutRate:
		in.counts.Timeouts++
		return timeoutFault, f.Stall
	case x < f.ErrorRate+f.TimeoutRate+f.DropRate && mutating:
		in.counts.Drops++
		return dropFault, 0
	}
	return noFault, 0
}

var errorStatuses = []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusTooManyRequests}

// wrap applies the faults to one operation's handler.
func (in *injector) wrap(op string, mutating bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		kind, stall := in.decide(op, mutating)
		switch kind {
		case errorFault:
			in.mu.Lock()
			status := errorStatuses[in.turn%len(errorStatuses)]
			in.turn++
			in.mu.Unlock()
			writeError(w, errorf(status, "error.simulated", "simulated fault: the bank answered %d without acting", status))
		case timeoutFault:
			select {
			case <-time.After(stall):
			case <-in.closing:
			}
			h(w, r)
		case dropFault:
			h(discard{header: http.Header{}}, r)
			// Nothing has been written: aborting the handler makes the server close the
			// connection, and the client sees it end without an answer.
			panic(http.ErrAbortHandler)
		default:
			h(w, r)
		}
	}
}

func (in *injector) snapshot() FaultCounts {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.counts
}

// discard is a ResponseWriter that throws the answer away.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
