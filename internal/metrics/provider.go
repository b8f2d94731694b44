package metrics

import (
	"context"
	"time"

	"github.com/stablepay/payout-operator/internal/fiat"
)

// Operations of the fiat provider (the methods of fiat.Provider).
const (
	OpFind   = "find"
	OpCreate = "create"
	OpGet    = "get"
)

// Outcomes of a provider call: success, or the fiat.Kind of its error.
const (
	OutcomeSuccess = "success"
)

var (
	operations = set(OpFind, OpCreate, OpGet)
	outcomes   = set(OutcomeSuccess, string(fiat.Transient), string(fiat.Permanent), string(fiat.Inconsistent))
)

// ProviderCall records one call to the fiat payout provider: operation is OpFind, OpCreate or
// OpGet, err the call's error (its fiat.Kind is the outcome; nil is success), d its latency.
func ProviderCall(operation string, err error, d time.Duration) {
	op := oneOf(operation, operations)
	outcome := OutcomeSuccess
	if err != nil {
		outcome = oneOf(string(fiat.KindOf(err)), outcomes)
	}
	providerRequests.WithLabelValues(op, outcome).Inc()
	providerDuration.WithLabelValues(op).Observe(d.Seconds())
}

// InstrumentProvider wraps p so that every call is recorded with ProviderCall. payoutd wraps
// the provider it hands the transfer controller:
//
//	copts.Provider = metrics.InstrumentProvider(provider)
func InstrumentProvider(p fiat.Provider) fiat.Provider {
	if p == nil {
		return nil
	}
	return instrumented{p}
}

type instrumented struct{ fiat.Provider }

func (i instrumented) Find(ctx context.Context, reference string, notBefore time.Time) (*fiat.Payout, error) {
	start := time.Now()
	p, err := i.Provider.Find(ctx, reference, notBefore)
	ProviderCall(OpFind, err, time.Since(start))
	return p, err
}

func (i instrumented) Create(ctx context.Context, req fiat.PayoutRequest) (*fiat.Payout, error) {
	start := time.Now()
	p, err := i.Provider.Create(ctx, req)
	ProviderCall(OpCreate, err, time.Since(start))
	return p, err
}

func (i instrumented) Get(ctx context.Context, providerID string) (*fiat.Payout, error) {
	start := time.Now()
	p, err := i.Provider.Get(ctx, providerID)
	ProviderCall(OpGet, err, time.Since(start))
	return p, err
}
