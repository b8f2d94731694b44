// Package sweeper is the sweeper component (`payoutd --sweeper`): the one part of the service
// that holds the deposit master key (xprv), moving every deposit that is the platform's to the
// network's treasury. It is thin over internal/treasury: each pass loads the stored facts,
// asks the pure decisions what is due and what a batch does next, and persists the answer
// before it acts on the chain:
//
//  1. intents: every due deposit without a Sweep gets one (named after its Deposit, so the API
//     server's atomic create makes it unique), stored before anything is signed;
//  2. admission: a Sweep without a state (an operator's write-off) is admitted or refused;
//  3. per network, at most one open SweepBatch: its sweeps are marked Batched, its transaction
//     is signed and persisted (Signed) before the first broadcast, the same bytes are
//     broadcast until the receipt is at depth, and the outcome is written into its sweeps;
//     with no batch open, Schedule says whether the Pending sweeps of a token make one now.
//
// A kill at any point loses nothing and sends nothing twice: a batch whose transaction is
// persisted only ever broadcasts those bytes (one nonce, one hash); a batch that was created
// and never signed signs once, for the sweeps that are Batched with it.
package sweeper

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/treasury"
)

// Item is one deposit address a sweep transaction empties of the token: its key is at Path
// below the deposit key; Amount (base units) is what the sweeper expects it to hold.
type Item struct {
	Address, Path string
	Amount        string
}

// Mover builds, signs and sends sweep transactions on EVM networks: the mechanism (issue 27
// measures the candidates; branch i27-mech builds it). It holds the deposit key and the gas
// wallet's key.
type Mover interface {
	// Prepare reports whether network is ready for sweeps to the treasury `to`, readying it when
	// it is not (the EVM mover deploys the treasury's delegate once). It is called only while
	// no batch of the network is open.
	Prepare(ctx context.Context, network payoutv1.Network, to string) (bool, error)
	// GasWallet is the address of the sweeper's gas wallet on network, which signs and pays for
	// every sweep transaction there.
	GasWallet(network payoutv1.Network) (string, bool)
	PendingNonce(ctx context.Context, network payoutv1.Network) (uint64, error)
	// Sign builds and signs one transaction moving every item's balance of token to `to`.
	Sign(ctx context.Context, network payoutv1.Network, token payoutv1.Token, to string, items []Item, nonce uint64) (raw []byte, hash string, err error)
	Broadcast(ctx context.Context, network payoutv1.Network, raw []byte) error
	// Balances reads the treasury's balance of each token, the gas wallet's balance (wei) and
	// how many batches of maxItems addresses it pays at the current fees (for the metrics).
	Balances(ctx context.Context, network payoutv1.Network, to string, maxItems int) (map[payoutv1.Token]*big.Int, *big.Int, float64, error)
	// Receipt is what the chain says of the transaction, with the network's depth and the
	// token transfers it made.
	Receipt(ctx context.Context, network payoutv1.Network, hash string) (*chain.TxObservation, error)
	// MaxItems bounds the deposit addresses of one transaction on network below the policy's
	// (Tron: one); 0 leaves the policy's.
	MaxItems(network payoutv1.Network) int
	// Finish undoes what readying items for their batch left behind, once the batch is settled
	// (Tron: the energy delegated to the addresses); ErrNotYet asks for a later pass.
	Finish(ctx context.Context, network payoutv1.Network, items []Item) error
}

// ErrNotYet is a mover's answer when it sent what a step needs first (a Tron address's
// activation or energy): the sweeper tries the step again on a later pass.
var ErrNotYet = errors.New("not yet")

// ErrExpired is Broadcast's answer when the chain says the signed transaction can never be
// included (a Tron transaction past its expiration that no block holds): its batch moved
// nothing and its sweeps are released for a new one.
var ErrExpired = errors.New("the transaction expired unincluded")

var _ Mover = (*EVM)(nil)

// Sweeper runs the passes. Client writes to the API server and reads from the manager's
// informer cache: a pass lists every Deposit and Sweep from there, never from the API server.
// Reader reads past the cache wherever a stale read could move money: the batch driven, the
// sweeps a batch marks, signs for and settles, and before a new batch is created, the open
// batches and the sweeps it takes.
type Sweeper struct {
	Client client.Client
	Reader client.Reader
	Mover  Mover
	// Treasury is the treasury address per network; a network without one is not swept.
	Treasury map[payoutv1.Network]string
	Policy   treasury.Policy
	Now      func() time.Time
	// Interval between passes at most.
	Interval time.Duration
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=sweeps,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=sweeps/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=sweepbatches,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=sweepbatches/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=refunds,verbs=get;list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",namespace=system,resources=events,verbs=create;patch

// Pass runs one pass over every network. It returns how long until the next pass is due at the
// latest (a batch waiting for its maximum age, a transaction waiting for depth).
func (s *Sweeper) Pass(ctx context.Context) (time.Duration, error) {
	// read-only views of the cache: nothing below writes into these objects (it copies first)
	var deps payoutv1.DepositList
	if err := s.Client.List(ctx, &deps, client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	var sweeps payoutv1.SweepList
	if err := s.Client.List(ctx, &sweeps, client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	if err := s.intents(ctx, deps.Items, sweeps.Items); err != nil {
		return 0, err
	}
	next := time.Duration(0)
	var errs []error
	for network, to := range s.Treasury {
		s.watch(ctx, network, to)
		wait, err := s.network(ctx, network, to, deps.Items, sweeps.Items)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", network, err))
		}
		if wait > 0 && (next == 0 || wait < next) {
			next = wait
		}
	}
	return next, errors.Join(errs...)
}

// watch records the treasury's and the gas wallet's balances on network (metrics); a chain that
// does not answer leaves the last values and is only logged: the pass goes on.
func (s *Sweeper) watch(ctx context.Context, network payoutv1.Network, to string) {
	units, gas, left, err := s.Mover.Balances(ctx, network, to, max(s.Policy.MaxItems, 1))
	if err != nil {
		log.FromContext(ctx).Error(err, "reading the treasury's and the gas wallet's balances", "network", network)
		return
	}
	for token, u := range units {
		metrics.Treasury(network, token, u, gas, left)
	}
}

// intents creates the Sweep of every due deposit that has none, and admits Sweeps without a
// state (the write-offs operators create). deps and sweeps are every Deposit and Sweep, as the
// cache holds them (not to be written to); a Sweep the cache does not show yet meets
// AlreadyExists, a stale one's status write a conflict: the next pass sees it.
func (s *Sweeper) intents(ctx context.Context, deps []payoutv1.Deposit, sweeps []payoutv1.Sweep) error {
	existing := map[string]*payoutv1.Sweep{}
	for i := range sweeps {
		existing[sweeps[i].Namespace+"/"+sweeps[i].Name] = &sweeps[i]
	}
	byTransfer := map[string][]payoutv1.Deposit{}
	for _, d := range deps {
		k := d.Namespace + "/" + d.Spec.Transfer
		byTransfer[k] = append(byTransfer[k], d)
	}
	for k, group := range byTransfer {
		var open []*payoutv1.Deposit
		for i := range group {
			if sw := existing[group[i].Namespace+"/"+group[i].Name]; sw == nil || sw.Status.State == "" {
				open = append(open, &group[i])
			}
		}
		if len(open) == 0 {
			continue
		}
		ns, id, _ := strings.Cut(k, "/")
		t, refunds, err := s.transferOf(ctx, ns, id)
		if err != nil {
			return err
		}
		for _, dep := range open {
			sw := existing[dep.Namespace+"/"+dep.Name]
			v := treasury.Judge(t, group, refunds, dep, sw != nil && sw.Spec.Reason == payoutv1.SweepWrittenOff)
			if sw == nil {
				if !v.Due {
					continue
				}
				sw = treasury.Intent(t, dep, v.Reason)
				if err := s.Client.Create(ctx, sw); err != nil && !apierrors.IsAlreadyExists(err) {
					return err
				} else if err != nil {
					continue // the next pass admits the one that exists
				}
			}
			if st := treasury.Admit(sw, v); st.State != sw.Status.State || st.Message != sw.Status.Message {
				sw = sw.DeepCopy()
				sw.Status = st
				if err := s.Client.Status().Update(ctx, sw); err != nil && !apierrors.IsConflict(err) {
					return err
				}
			}
		}
	}
	return nil
}

func (s *Sweeper) transferOf(ctx context.Context, ns, id string) (*payoutv1.Transfer, []payoutv1.Refund, error) {
	t := &payoutv1.Transfer{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: id}, t); apierrors.IsNotFound(err) {
		t = nil
	} else if err != nil {
		return nil, nil, err
	}
	var refunds payoutv1.RefundList
	if err := s.Client.List(ctx, &refunds, client.InNamespace(ns), client.MatchingLabels{payoutv1.RefundTransferLabel: id}); err != nil {
		return nil, nil, err
	}
	return t, refunds.Items, nil
}

// network drives the network's open batch, or makes a new one when the schedule says so. The
// batches are listed from the cache; the one driven is read again from the API server, and
// before a new batch is created the open batches and the sweeps it takes are read from there
// (fresh), so that a cache behind the sweeper's own writes never opens a second batch.
func (s *Sweeper) network(ctx context.Context, network payoutv1.Network, to string, deps []payoutv1.Deposit, sweeps []payoutv1.Sweep) (time.Duration, error) {
	if wait, busy, err := s.batches(ctx, s.Client, network); busy || err != nil {
		return wait, err
	}
	var here []payoutv1.Deposit
	for _, d := range deps {
		if d.Spec.Network == network {
			here = append(here, d)
		}
	}
	pending := map[payoutv1.Token][]payoutv1.Sweep{}
	for _, sw := range sweeps {
		if sw.Spec.Network == network && sw.Status.State == payoutv1.SweepPending && !treasury.Stranded(&sw) {
			pending[sw.Spec.Token] = append(pending[sw.Spec.Token], sw)
		}
	}
	policy := s.Policy
	if n := s.Mover.MaxItems(network); n > 0 && (policy.MaxItems <= 0 || n < policy.MaxItems) {
		policy.MaxItems = n
	}
	next := time.Duration(0)
	for _, token := range []payoutv1.Token{payoutv1.TokenUSDC, payoutv1.TokenUSDT} {
		batch, wait := treasury.Schedule(treasury.Ready(pending[token], here), s.Now(), policy)
		if len(batch) == 0 {
			if wait > 0 && (next == 0 || wait < next) {
				next = wait
			}
			continue
		}
		if wait, busy, err := s.batches(ctx, s.Reader, network); busy || err != nil {
			return wait, err
		}
		if fresh, err := s.stillPending(ctx, batch); err != nil || !fresh {
			return time.Second, err // the cache is behind: the next pass schedules again
		}
		if ready, err := s.Mover.Prepare(ctx, network, to); err != nil || !ready {
			return time.Second, err
		}
		b := treasury.NewBatch(batch, to)
		if err := s.Client.Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, err
		}
		// one open batch per network: the gas wallet's nonces follow one another
		return time.Second, nil
	}
	return next, nil
}

// batches drives network's open batch, listed through r, and settles the closed ones that still
// hold their finalizer; busy reports an open batch (none may be created). Each batch driven is
// read from the API server first: its status decides what is signed and sent.
func (s *Sweeper) batches(ctx context.Context, r client.Reader, network payoutv1.Network) (wait time.Duration, busy bool, err error) {
	var list payoutv1.SweepBatchList
	if err := r.List(ctx, &list); err != nil {
		return 0, false, err
	}
	for i := range list.Items {
		b := &list.Items[i]
		if b.Spec.Network != network || (!treasury.Open(b) && !controllerutil.ContainsFinalizer(b, payoutv1.MoneyFinalizer)) {
			continue
		}
		fresh := &payoutv1.SweepBatch{}
		if err := s.Reader.Get(ctx, client.ObjectKeyFromObject(b), fresh); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return 0, false, err
		}
		if treasury.Open(fresh) {
			wait, err := s.drive(ctx, fresh)
			return wait, true, err
		}
		if controllerutil.ContainsFinalizer(fresh, payoutv1.MoneyFinalizer) {
			if _, err := s.drive(ctx, fresh); err != nil {
				return 0, false, err
			}
		}
	}
	return 0, false, nil
}

// stillPending reports whether the API server holds every sweep of batch as the cache showed
// it: Pending, released as often. A batch is named by its sweeps and their releases, so one
// scheduled on a stale view is never created.
func (s *Sweeper) stillPending(ctx context.Context, batch []payoutv1.Sweep) (bool, error) {
	for i := range batch {
		sw := &payoutv1.Sweep{}
		if err := s.Reader.Get(ctx, client.ObjectKeyFromObject(&batch[i]), sw); err != nil {
			return false, err
		}
		if sw.Status.State != payoutv1.SweepPending || len(sw.Status.ReleasedBatches) != len(batch[i].Status.ReleasedBatches) {
			return false, nil
		}
	}
	return true, nil
}

// drive takes a batch one step (or several, while each is persisted before the next).
func (s *Sweeper) drive(ctx context.Context, b *payoutv1.SweepBatch) (time.Duration, error) {
	logger := log.FromContext(ctx).WithValues("sweepBatch", b.Name)
	switch treasury.Next(b.Status) {
	case treasury.ActionMark:
		for _, it := range b.Spec.Items {
			for _, share := range it.Sweeps {
				sw := &payoutv1.Sweep{}
				if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: it.Namespace, Name: share.Name}, sw); err != nil {
					return 0, err
				}
				switch {
				case sw.Status.State == payoutv1.SweepBatched && sw.Status.Batch == b.Name:
				case sw.Status.State == payoutv1.SweepPending:
					sw.Status = treasury.Mark(sw.Status, b.Name)
					if err := s.Client.Status().Update(ctx, sw); err != nil {
						return 0, err
					}
				default:
					// never sign for a deposit another batch moves: fail closed, an operator looks
					return 0, fmt.Errorf("sweep %s/%s is %s (batch %q), not Pending: batch %s is not signed", it.Namespace, share.Name, sw.Status.State, sw.Status.Batch, b.Name)
				}
			}
		}
		b.Status.State, b.Status.Message = payoutv1.SweepBatchPending, "its sweeps are batched; signing"
		if err := s.Client.Status().Update(ctx, b); err != nil {
			return 0, err
		}
		return s.drive(ctx, b)
	case treasury.ActionSign:
		items := make([]Item, len(b.Spec.Items))
		for i, it := range b.Spec.Items {
			for _, share := range it.Sweeps {
				sw := &payoutv1.Sweep{}
				if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: it.Namespace, Name: share.Name}, sw); err != nil {
					return 0, err
				}
				if sw.Status.State != payoutv1.SweepBatched || sw.Status.Batch != b.Name {
					return 0, fmt.Errorf("sweep %s/%s is not batched with %s: not signed", it.Namespace, share.Name, b.Name)
				}
			}
			items[i] = Item{Address: it.Address, Path: it.Path, Amount: it.Amount}
		}
		from, ok := s.Mover.GasWallet(b.Spec.Network)
		if !ok {
			return 0, fmt.Errorf("no gas wallet on %s", b.Spec.Network)
		}
		nonce, err := s.Mover.PendingNonce(ctx, b.Spec.Network)
		if err != nil {
			return 0, err
		}
		raw, hash, err := s.Mover.Sign(ctx, b.Spec.Network, b.Spec.Token, b.Spec.To, items, nonce)
		if errors.Is(err, ErrNotYet) {
			logger.Info("sweep not signed yet", "why", err.Error())
			return 3 * time.Second, nil
		} else if err != nil {
			return 0, err
		}
		b.Status = treasury.Signed(b.Status, from, nonce, raw, hash)
		if err := s.Client.Status().Update(ctx, b); err != nil {
			return 0, err // nothing was broadcast: the next pass signs again
		}
		logger.Info("sweep signed", "txHash", b.Status.TxHash, "nonce", nonce, "deposits", len(items))
		return s.drive(ctx, b)
	case treasury.ActionWatch:
		obs, err := s.Mover.Receipt(ctx, b.Spec.Network, b.Status.TxHash)
		if err != nil {
			return 0, err
		}
		before := b.Status
		if obs == nil || !obs.Found {
			raw, err := hex.DecodeString(strings.TrimPrefix(b.Status.SignedTx, "0x"))
			if err != nil {
				return 0, fmt.Errorf("batch %s: stored transaction is not hex: %w", b.Name, err)
			}
			if err := s.Mover.Broadcast(ctx, b.Spec.Network, raw); errors.Is(err, ErrExpired) {
				b.Status = treasury.Expired(b.Status, err.Error(), s.Now())
			} else if err != nil {
				b.Status.Message = truncate(fmt.Sprintf("broadcast: %v; the same bytes are sent again", err))
			} else {
				b.Status = treasury.Broadcast(b.Status)
			}
		} else {
			b.Status = treasury.Broadcast(b.Status)
			b.Status = treasury.Observed(b, obs, s.Now())
		}
		if !equality.Semantic.DeepEqual(b.Status, before) {
			if err := s.Client.Status().Update(ctx, b); err != nil {
				return 0, err
			}
		}
		if treasury.Open(b) {
			return 2 * time.Second, nil
		}
		return s.drive(ctx, b)
	case treasury.ActionSettle:
		for _, it := range b.Spec.Items {
			for _, share := range it.Sweeps {
				sw := &payoutv1.Sweep{}
				if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: it.Namespace, Name: share.Name}, sw); err != nil {
					return 0, err
				}
				if st, ok := treasury.Settle(sw, b); ok {
					sw.Status = st
					if err := s.Client.Status().Update(ctx, sw); err != nil {
						return 0, err
					}
				}
			}
		}
		if controllerutil.ContainsFinalizer(b, payoutv1.MoneyFinalizer) {
			if err := s.Mover.Finish(ctx, b.Spec.Network, itemsOf(b)); errors.Is(err, ErrNotYet) {
				logger.Info("sweep batch settled; finishing", "why", err.Error())
				return 3 * time.Second, nil
			} else if err != nil {
				return 0, err
			}
		}
		if controllerutil.RemoveFinalizer(b, payoutv1.MoneyFinalizer) {
			if err := s.Client.Update(ctx, b); err != nil {
				return 0, err
			}
		}
	}
	return 0, nil
}

func itemsOf(b *payoutv1.SweepBatch) []Item {
	items := make([]Item, len(b.Spec.Items))
	for i, it := range b.Spec.Items {
		items[i] = Item{Address: it.Address, Path: it.Path, Amount: it.Amount}
	}
	return items
}

func truncate(s string) string {
	if len(s) > 512 {
		return s[:509] + "..."
	}
	return s
}

// Start runs passes until ctx ends (a manager.Runnable of the elected leader only): after each,
// it waits until the next pass is due, at most Interval.
func (s *Sweeper) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("sweeper")
	for {
		next, err := s.Pass(ctx)
		if err != nil {
			logger.Error(err, "sweep pass")
		}
		if next <= 0 || next > s.Interval {
			next = s.Interval
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// NeedLeaderElection: one sweeper signs at a time.
func (s *Sweeper) NeedLeaderElection() bool { return true }
