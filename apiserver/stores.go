package apiserver

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/index"
)

// stores are the informers' own stores of what every request reads: the API key and its
// account on every request, the deposit options and a transfer by id on the two reads every
// integrator polls. They are read directly rather than through the cache's client, whose Get and
// List find the informer by the object's type, apply options and copy into a list by reflection
// on every call: for these reads that machinery cost more than the read (docs/benchmarks.md,
// "Cached reads"). The objects are the informers' own: read them, never change them.
type stores struct {
	keys, accounts, options, transfers toolscache.Indexer
	// held counts the objects under the accounts' caps, from the events of the informers of
	// transfers, recipients and claims (quotatally.go); of the last two nothing else is read here
	held *quotaTally
	// synced are the informers' HasSynced; ready is set once they all have: until then a
	// read waits (awaitSynced), as a read through the cache client did, since the store of an
	// informer that has not listed yet holds nothing and every key would read as unknown.
	synced []func() bool
	ready  atomic.Bool
	// optionsGen counts changes of the deposit options seen by the informer's handler: an
	// answer encoded at one count is good until the next (see Server.optionsBody).
	optionsGen atomic.Uint64
}

// How controller-runtime's cache files objects in a field index (internal/index):
// "field:<field>" names the index, "__all_namespaces/<value>" is the key across namespaces and
// "<namespace>/<value>" within one (pkg/cache/internal's FieldIndexName and
// KeyToNamespacedKey). transferIDIndex is the metadata.name index a transfer is found by. The
// transfer lookup and quota specs of this package fail if that ever changes.
const (
	transferIDIndex  = fieldIndex + index.Name
	fieldIndex       = "field:"
	allNamespacesKey = "__all_namespaces/"
)

// openStores takes the informers of the six kinds (made now if the cache has not made them
// yet; the cache starts them), watches the deposit options' changes and feeds the caps' tally.
func openStores(ctx context.Context, informers cache.Informers) (*stores, error) {
	s := &stores{held: newQuotaTally()}
	for _, st := range []struct {
		obj client.Object
		to  *toolscache.Indexer
		// tally feeds the caps' tally from the informer, for the kinds a cap counts
		tally func(*quotaTally, eventSource) (func() bool, error)
	}{
		{&payoutv1.APIKey{}, &s.keys, nil}, {&payoutv1.PayoutAccount{}, &s.accounts, nil},
		{&payoutv1.DepositOption{}, &s.options, nil},
		{&payoutv1.Transfer{}, &s.transfers, registerTally[payoutv1.Transfer]},
		{&payoutv1.Recipient{}, nil, registerTally[payoutv1.Recipient]}, // only tallied
		{&payoutv1.Claim{}, nil, registerTally[payoutv1.Claim]},         // only tallied
	} {
		inf, err := informers.GetInformer(ctx, st.obj, cache.BlockUntilSynced(false))
		if err != nil {
			return nil, fmt.Errorf("informer of %T: %w", st.obj, err)
		}
		shared, ok := inf.(toolscache.SharedIndexInformer)
		if !ok {
			return nil, fmt.Errorf("informer of %T is a %T, not a SharedIndexInformer", st.obj, inf)
		}
		if st.to != nil {
			*st.to = shared.GetIndexer()
		}
		s.synced = append(s.synced, shared.HasSynced)
		if st.tally != nil {
			tallied, err := st.tally(s.held, inf)
			if err != nil {
				return nil, fmt.Errorf("counting the caps' objects of %T: %w", st.obj, err)
			}
			s.synced = append(s.synced, tallied)
		}
		if _, ok := st.obj.(*payoutv1.DepositOption); ok {
			bump := func() { s.optionsGen.Add(1) }
			if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc:    func(any) { bump() },
				UpdateFunc: func(any, any) { bump() },
				DeleteFunc: func(any) { bump() },
			}); err != nil {
				return nil, fmt.Errorf("watching deposit options: %w", err)
			}
		}
	}
	return s, nil
}

// syncWait bounds how long a read waits for the informers of a replica that has just started.
const syncWait = 10 * time.Second

// awaitSynced returns once the informers have synced, or a 503 when they have not within
// syncWait or the request ends first. A replica that has just started answers nothing from an
// empty store: before this wait, a burst of requests at start read every key as unknown, past
// the key lookup's budget, and got 401 (the crash test's restarts).
func (s *stores) awaitSynced(ctx context.Context) error {
	if s.ready.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, syncWait)
	defer cancel()
	for {
		if !slices.ContainsFunc(s.synced, func(synced func() bool) bool { return !synced() }) {
			s.ready.Store(true)
			return nil
		}
		select {
		case <-ctx.Done():
			return apierror.Errorf(apierror.Unavailable, "the service is starting: try again in a few seconds")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// apiKey is the cached key named id, or nil.
func (s *stores) apiKey(ctx context.Context, id string) (*payoutv1.APIKey, error) {
	if err := s.awaitSynced(ctx); err != nil {
		return nil, err
	}
	return get[payoutv1.APIKey](s.keys, id)
}

// account is the cached account named name, or nil.
func (s *stores) account(ctx context.Context, name string) (*payoutv1.PayoutAccount, error) {
	if err := s.awaitSynced(ctx); err != nil {
		return nil, err
	}
	return get[payoutv1.PayoutAccount](s.accounts, name)
}

// transfer is the cached transfer named id in any account's namespace, or nil.
func (s *stores) transfer(ctx context.Context, id string) (*payoutv1.Transfer, error) {
	if err := s.awaitSynced(ctx); err != nil {
		return nil, err
	}
	objs, err := s.transfers.ByIndex(transferIDIndex, allNamespacesKey+id)
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	t, ok := objs[0].(*payoutv1.Transfer)
	if !ok {
		return nil, fmt.Errorf("the transfer cache holds a %T", objs[0])
	}
	return t, nil
}

// depositOptions are the cached deposit options (copies of the structs; their maps and slices
// are the cache's).
func (s *stores) depositOptions(ctx context.Context) ([]payoutv1.DepositOption, error) {
	if err := s.awaitSynced(ctx); err != nil {
		return nil, err
	}
	objs := s.options.List()
	items := make([]payoutv1.DepositOption, 0, len(objs))
	for _, o := range objs {
		opt, ok := o.(*payoutv1.DepositOption)
		if !ok {
			return nil, fmt.Errorf("the deposit option cache holds a %T", o)
		}
		items = append(items, *opt)
	}
	return items, nil
}

// get reads a cluster-scoped object by name from an informer's store: nil when it is not there.
func get[T any](ix toolscache.Indexer, name string) (*T, error) {
	obj, found, err := ix.GetByKey(name)
	if err != nil || !found {
		return nil, err
	}
	t, ok := obj.(*T)
	if !ok {
		return nil, fmt.Errorf("the cache holds a %T where a %T belongs", obj, t)
	}
	return t, nil
}
