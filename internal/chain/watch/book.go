// Package watch runs the chain watchers inside the operator: one leader-only runnable per
// configured network. On EVM networks and Tron it scans the blocks reaching confirmation depth
// (package evm; Tron through its Ethereum-compatible JSON-RPC, package tron), matches token
// transfers against the deposit addresses of v1 transfers (an in-memory AddressBook fed by the
// Transfer informer), records each match as a Deposit object (the ledger the transfer controller
// credits from), and persists its progress in the network's ChainCursor. On Solana it keeps the
// ChainCursor in step with the node (SolanaWatcher). Setup wires it all to a manager, and its
// Chains answers v2 lookups on every configured network.
package watch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// AddressBook is the chain.AddressBook of the operator: the deposit address of every v1
// transfer, from the Transfer informer the manager's cache already runs. A transfer stays in the
// book while its object exists, so a late deposit to a closed transfer is still recorded; it
// leaves when the transfer is deleted (archived). A lookup is one map read under a read lock:
// the cost per log is the same with a hundred or a hundred thousand open addresses.
//
// An address issued on an EVM network is the same address on every EVM network (one key), so
// the book answers for it on all of them: a deposit sent on the wrong EVM network is recorded
// under the network it arrived on, and the transfer keeps it as a stray deposit, refundable
// there, instead of it going unseen. Tron's addresses are its own.
type AddressBook struct {
	cache cache.Cache
	log   logr.Logger

	mu     sync.RWMutex
	byAddr map[bookKey]bookEntry
	synced atomic.Pointer[func() bool]
}

// bookEntry is the transfer of an address, and when it was created.
type bookEntry struct {
	transfer types.NamespacedName
	created  time.Time
}

type bookKey struct {
	family  payoutv1.Network // evmFamily for every EVM network, else the network
	address string           // NormalizeWallet form: lower-case 0x hex for EVM
}

// evmFamily keys the addresses shared by every EVM network.
const evmFamily payoutv1.Network = "evm"

func keyOf(network payoutv1.Network, address string) bookKey {
	if network.EVM() {
		network = evmFamily
	}
	return bookKey{network, payoutv1.NormalizeWallet(address)}
}

// NewAddressBook makes a book fed by c's Transfer informer once Start runs.
func NewAddressBook(c cache.Cache, log logr.Logger) *AddressBook {
	return &AddressBook{cache: c, log: log, byAddr: map[bookKey]bookEntry{}}
}

// TransferFor implements chain.AddressBook.
func (b *AddressBook) TransferFor(network payoutv1.Network, address string) (types.NamespacedName, bool) {
	b.mu.RLock()
	e, ok := b.byAddr[keyOf(network, address)]
	b.mu.RUnlock()
	return e.transfer, ok
}

// Oldest is the creation time of the oldest transfer whose address the book answers for on
// network (on an EVM network, every EVM transfer's), and false when it holds none: a watcher
// that lost its place restarts from that transfer's block, so that no deposit to an address
// it watches is skipped. It reads the whole book (a watcher asks it only when it starts afresh).
func (b *AddressBook) Oldest(network payoutv1.Network) (time.Time, bool) {
	family := keyOf(network, "").family
	b.mu.RLock()
	defer b.mu.RUnlock()
	var oldest time.Time
	found := false
	for k, e := range b.byAddr {
		if k.family == family && (!found || e.created.Before(oldest)) {
			oldest, found = e.created, true
		}
	}
	return oldest, found
}

// Len is the number of addresses in the book.
func (b *AddressBook) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.byAddr)
}

// HasSynced reports whether the book holds every transfer the API server had when the informer
// listed them; a watcher scans nothing before, or it could pass a deposit whose transfer the
// book does not know yet.
func (b *AddressBook) HasSynced() bool {
	f := b.synced.Load()
	return f != nil && (*f)()
}

// WaitForSync waits until HasSynced or ctx ends.
func (b *AddressBook) WaitForSync(ctx context.Context) bool {
	return toolscache.WaitForCacheSync(ctx.Done(), b.HasSynced)
}

// NeedLeaderElection: the book serves the watchers, which run on the leader only.
func (b *AddressBook) NeedLeaderElection() bool { return true }

// Start registers the book with the Transfer informer and keeps it until ctx ends.
func (b *AddressBook) Start(ctx context.Context) error {
	inf, err := b.cache.GetInformer(ctx, &payoutv1.Transfer{})
	if err != nil {
		return fmt.Errorf("address book: %w", err)
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { b.put(obj) },
		UpdateFunc: func(_, obj any) { b.put(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			b.remove(obj)
		},
	})
	if err != nil {
		return fmt.Errorf("address book: %w", err)
	}
	synced := reg.HasSynced
	b.synced.Store(&synced)
	<-ctx.Done()
	return inf.RemoveEventHandler(reg)
}

func entry(obj any) (bookKey, bookEntry, bool) {
	t, ok := obj.(*payoutv1.Transfer)
	if !ok || t.Spec.Method != payoutv1.TransferV1 || t.Spec.DepositAddress == "" {
		return bookKey{}, bookEntry{}, false
	}
	return keyOf(t.Spec.SourceNetwork, t.Spec.DepositAddress),
		bookEntry{transfer: types.NamespacedName{Namespace: t.Namespace, Name: t.Name}, created: t.CreationTimestamp.Time}, true
}

func (b *AddressBook) put(obj any) {
	k, e, ok := entry(obj)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, taken := b.byAddr[k]; taken && old.transfer != e.transfer {
		// Addresses are derived from unique transfer ids: this is a bug or a hand-made object.
		// The first holder keeps the address.
		b.log.Error(nil, "two transfers have one deposit address; deposits go to the first", "address", k.address, "network", k.family, "first", old.transfer, "second", e.transfer)
		return
	}
	b.byAddr[k] = e
}

func (b *AddressBook) remove(obj any) {
	k, e, ok := entry(obj)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byAddr[k].transfer == e.transfer {
		delete(b.byAddr, k)
	}
}
