package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// ArchiveOptions turn on the archiver: finished transfers (and deleted recipients) move from the
// API server into the PostgreSQL archive after the retention. A nil Store leaves everything live.
type ArchiveOptions struct {
	Store  *archive.Store
	Config archive.Config
	// TransferJSON and RecipientJSON render what the facade answers for an object
	// (apiserver.TransferLookupJSON, apiserver.RecipientLookupJSON); it is frozen into the archive.
	TransferJSON  func(*payoutv1.Transfer) ([]byte, error)
	RecipientJSON func(*payoutv1.Recipient) ([]byte, error)
	// Swept are the networks with a treasury (the chain configuration's networks.<name>.treasury):
	// a transfer with a deposit there that the sweeper would sweep stays live until its Sweep
	// exists. Empty: nothing is swept, nothing waits.
	Swept map[payoutv1.Network]bool
}

// Archiver moves what is finished out of the API server, leader-only, in passes: it lists the
// transfers from the cache, gathers what each one's verdict needs, decides
// (archive.DecideTransfer, pure), and archives the due ones in batches at a bounded rate:
//
//	insert the batch into PostgreSQL (idempotent) and read it back ─▶ per transfer: delete its
//	Deposits, its Refunds, its Claims (customer_uuid, v2 hash) ─▶ delete the Transfer last, under
//	the UID and resourceVersion that were archived
//
// A crash or error anywhere leaves the transfer live; the next pass inserts it again (the row
// takes the newer version) and finishes the deletes. Recipients follow the same order once
// every transfer of their lineage has gone: insert, delete the id's Claim, delete the Recipient.
type Archiver struct {
	Client client.Client
	Store  *archive.Store
	Clock  clock.Clock
	Config archive.Config
	// Mailing: outcome e-mails are sent, so a transfer waits for its own before it is archived.
	Mailing bool
	// Swept are the networks the sweeper sweeps (ArchiveOptions.Swept).
	Swept         map[payoutv1.Network]bool
	TransferJSON  func(*payoutv1.Transfer) ([]byte, error)
	RecipientJSON func(*payoutv1.Recipient) ([]byte, error)
	Log           logr.Logger

	// Fault, when set, runs at each stage of an archival (FaultInserted once per batch,
	// FaultChildrenDeleted once per transfer); an error stops the pass there, as a crash would
	// (tests inject one at each stage and check that nothing is lost).
	Fault func(stage ArchiveStage) error

	limiter *rate.Limiter
}

// ArchiveStage names a point between two steps of an archival, where Fault may stop it.
type ArchiveStage string

const (
	// FaultInserted: the batch is in the archive and read back; nothing is deleted yet.
	FaultInserted ArchiveStage = "inserted"
	// FaultChildrenDeleted: a transfer's deposits, refund and claims are deleted; the transfer
	// itself is still live.
	FaultChildrenDeleted ArchiveStage = "children-deleted"
)

func (a *Archiver) fault(stage ArchiveStage) error {
	if a.Fault == nil {
		return nil
	}
	return a.Fault(stage)
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers;deposits;refunds;recipients;claims,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=quotes,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=sweeps,verbs=get;list;watch

// PassResult counts what a pass did.
type PassResult struct {
	Transfers, Recipients int
	// Kept counts the finished transfers held back, by reason (Retained and NotEnded aside).
	Kept map[archive.Reason]int
	// Next is the earliest time a held-back object becomes due; zero when none will on its own.
	Next time.Time
}

// NeedLeaderElection: one archiver at a time.
func (a *Archiver) NeedLeaderElection() bool { return true }

// Start runs passes until ctx ends: back to back while a pass found work, else after the
// interval (or sooner, when something becomes due).
func (a *Archiver) Start(ctx context.Context) error {
	a.Log.Info("archiving finished transfers", "retention", a.Config.Retention, "batch", a.Config.Batch, "rate", a.Config.Rate)
	for {
		res, err := a.Pass(ctx)
		wait := a.Config.Interval
		switch {
		case err != nil:
			a.Log.Error(err, "archive pass failed; trying again")
		case res.Transfers+res.Recipients > 0:
			wait = 0
		case !res.Next.IsZero():
			wait = min(wait, max(res.Next.Sub(a.Clock.Now()), time.Second))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

func (a *Archiver) init() {
	if a.limiter == nil {
		a.limiter = rate.NewLimiter(rate.Limit(a.Config.Rate), max(a.Config.Batch, 1))
	}
	if a.Clock == nil {
		a.Clock = clock.RealClock{}
	}
}

// Pass archives every transfer and recipient that is due now.
func (a *Archiver) Pass(ctx context.Context) (PassResult, error) {
	a.init()
	res := PassResult{Kept: map[archive.Reason]int{}}
	now := a.Clock.Now()
	transfers := &payoutv1.TransferList{}
	if err := a.Client.List(ctx, transfers); err != nil {
		return res, err
	}
	deposits := &payoutv1.DepositList{}
	if err := a.Client.List(ctx, deposits); err != nil {
		return res, err
	}
	refunds := &payoutv1.RefundList{}
	if err := a.Client.List(ctx, refunds); err != nil {
		return res, err
	}
	depositsOf := map[types.NamespacedName][]payoutv1.Deposit{}
	for _, d := range deposits.Items {
		key := types.NamespacedName{Namespace: d.Namespace, Name: d.Labels[payoutv1.DepositTransferLabel]}
		depositsOf[key] = append(depositsOf[key], d)
	}
	refundsOf := map[types.NamespacedName][]payoutv1.Refund{}
	for _, rf := range refunds.Items {
		key := types.NamespacedName{Namespace: rf.Namespace, Name: rf.Spec.Transfer}
		refundsOf[key] = append(refundsOf[key], rf)
	}
	sweepsOf, err := a.sweeps(ctx)
	if err != nil {
		return res, err
	}

	var due []archive.TransferInput
	liveLineages := map[string]bool{}
	for i := range transfers.Items {
		t := &transfers.Items[i]
		key := client.ObjectKeyFromObject(t)
		in := archive.TransferInput{Transfer: t, Deposits: depositsOf[key], Refunds: refundsOf[key], Mailing: a.Mailing,
			Swept: a.Swept, Sweeps: sweepsOf[key], Now: now, Retention: a.Config.Retention}
		if transfer.Ended(t) { // the cache reads below only for finished transfers
			in.RecipientActive = a.recipientActive(ctx, t)
			in.QuoteExpiresAt = a.quoteExpiry(ctx, t)
			in.HashHeld = a.holdsHash(ctx, t)
		}
		v := archive.DecideTransfer(in)
		if !v.Due() {
			liveLineages[lineageKey(t.Namespace, t.Labels[payoutv1.RecipientLineageLabel])] = true
			if v.Reason != archive.NotEnded {
				res.Kept[v.Reason]++
			}
			if !v.At.IsZero() && (res.Next.IsZero() || v.At.Before(res.Next)) {
				res.Next = v.At
			}
			continue
		}
		due = append(due, in)
	}
	sort.Slice(due, func(i, j int) bool { return archive.EndedAt(due[i].Transfer).Before(archive.EndedAt(due[j].Transfer)) })
	for start := 0; start < len(due); start += a.Config.Batch {
		batch := due[start:min(start+a.Config.Batch, len(due))]
		n, err := a.archiveTransfers(ctx, batch)
		res.Transfers += n
		if err != nil {
			return res, err
		}
	}

	n, err := a.archiveRecipients(ctx, liveLineages, now, &res)
	res.Recipients = n
	return res, err
}

// sweeps are the names of the Sweeps of each transfer (a Sweep is named as its Deposit); none
// are read where nothing is swept.
func (a *Archiver) sweeps(ctx context.Context) (map[types.NamespacedName]map[string]bool, error) {
	out := map[types.NamespacedName]map[string]bool{}
	if len(a.Swept) == 0 {
		return out, nil
	}
	list := &payoutv1.SweepList{}
	if err := a.Client.List(ctx, list); err != nil {
		return nil, err
	}
	for _, sw := range list.Items {
		key := types.NamespacedName{Namespace: sw.Namespace, Name: sw.Spec.Transfer}
		if out[key] == nil {
			out[key] = map[string]bool{}
		}
		out[key][sw.Name] = true
	}
	return out, nil
}

func lineageKey(namespace, lineage string) string { return namespace + "/" + lineage }

// recipientActive reports whether the newest recipient of t's recipient's lineage still takes
// transfers, as the transfer controller finds it (it deletes it after the end, unless kept).
func (a *Archiver) recipientActive(ctx context.Context, t *payoutv1.Transfer) bool {
	id := t.Spec.RecipientID
	for range 32 {
		rc := &payoutv1.Recipient{}
		if err := a.Client.Get(ctx, types.NamespacedName{Namespace: t.Namespace, Name: strconv.FormatInt(id, 10)}, rc); err != nil {
			return false
		}
		if rc.Spec.ReplacedBy == nil {
			return !rc.Spec.Deactivated
		}
		id = *rc.Spec.ReplacedBy
	}
	return true // a chain too long to follow: keep the transfer until someone looks
}

// holdsHash reports whether t holds the claim on its v2 hash. A transfer that released its hash
// (its transaction did not pay it) holds it again only while its deposit is refunded; the archive
// records the hash as used only then, so that the transfer it does pay can still confirm it.
func (a *Archiver) holdsHash(ctx context.Context, t *payoutv1.Transfer) bool {
	if t.Spec.TxHash == "" {
		return false
	}
	c := &payoutv1.Claim{}
	key := payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, t.Spec.TxHash)
	if err := a.Client.Get(ctx, types.NamespacedName{Name: payoutv1.ClaimName(payoutv1.ClaimTxHash, key)}, c); err != nil {
		return !transfer.Released(t) // a hash never released is the transfer's (its claim may be gone already)
	}
	return c.Spec.Holder == payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name}
}

// quoteExpiry is the expiry of t's quote while the Quote object exists.
func (a *Archiver) quoteExpiry(ctx context.Context, t *payoutv1.Transfer) time.Time {
	q := &payoutv1.Quote{}
	if err := a.Client.Get(ctx, types.NamespacedName{Namespace: t.Namespace, Name: t.Spec.QuoteID}, q); err != nil {
		return time.Time{}
	}
	return q.Spec.ExpiresAt.Time
}

// deleteWorkers is how many archived transfers' deletes run at once.
const deleteWorkers = 8

// archiveTransfers archives one batch: insert, read back, then delete what was stored.
func (a *Archiver) archiveTransfers(ctx context.Context, batch []archive.TransferInput) (int, error) {
	if err := a.limiter.WaitN(ctx, len(batch)); err != nil {
		return 0, err
	}
	recs := make([]archive.TransferRecord, 0, len(batch))
	byID := map[string]*archive.TransferInput{}
	for i := range batch {
		rec, err := a.transferRecord(&batch[i])
		if err != nil {
			a.Log.Error(err, "transfer left live: it cannot be rendered for the archive", "transfer", batch[i].Transfer.Name)
			continue
		}
		recs = append(recs, rec)
		byID[rec.ID] = &batch[i]
	}
	stored, refused, err := a.Store.PutTransfers(ctx, recs)
	if err != nil {
		return 0, err
	}
	for id, why := range refused {
		a.Log.Error(why, "transfer left live: the archive refused it", "transfer", id)
	}
	if err := a.fault(FaultInserted); err != nil {
		return 0, err
	}
	// The transfers of a batch are independent: their deletes run side by side (each transfer's
	// own deletes stay in order), since one at a time the archiver is bound by the API server's
	// latency and falls behind the rate transfers finish at.
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(deleteWorkers)
	for _, id := range stored {
		in := byID[id]
		g.Go(func() error {
			deleted, err := a.deleteTransfer(gctx, in)
			if err != nil {
				return fmt.Errorf("transfer %s is archived but still live (the next pass finishes it): %w", in.Transfer.Name, err)
			}
			if deleted {
				done.Add(1)
			}
			return nil
		})
	}
	err = g.Wait()
	return int(done.Load()), err
}

func (a *Archiver) transferRecord(in *archive.TransferInput) (archive.TransferRecord, error) {
	t := in.Transfer
	lookup, err := a.TransferJSON(t)
	if err != nil {
		return archive.TransferRecord{}, err
	}
	withKind := t.DeepCopy()
	withKind.APIVersion, withKind.Kind = payoutv1.GroupVersion.String(), "Transfer"
	obj, err := json.Marshal(withKind)
	if err != nil {
		return archive.TransferRecord{}, err
	}
	rec := archive.TransferRecord{
		ID: t.Name, UID: string(t.UID), Namespace: t.Namespace, Account: t.Spec.Account,
		Method: string(t.Spec.Method), Network: string(t.Spec.SourceNetwork), CustomerUUID: t.Spec.CustomerUUID,
		Phase: string(transfer.Phase(t)), CreatedAt: t.CreationTimestamp.Time, EndedAt: archive.EndedAt(t),
		Lookup: lookup, Object: obj,
	}
	if !transfer.Released(t) || in.HashHeld {
		// a released hash is not this transfer's: the archive must not answer it as used
		rec.TxHash = t.Spec.TxHash
	}
	for i := range in.Refunds {
		if in.Refunds[i].Spec.Deposit != nil {
			continue // a stray deposit's refund is in the transfer's status
		}
		rf := in.Refunds[i].DeepCopy()
		rf.APIVersion, rf.Kind = payoutv1.GroupVersion.String(), "Refund"
		if rec.Refund, err = json.Marshal(rf); err != nil {
			return archive.TransferRecord{}, err
		}
	}
	for i := range in.Deposits {
		d := in.Deposits[i].DeepCopy()
		d.APIVersion, d.Kind = payoutv1.GroupVersion.String(), "Deposit"
		b, err := json.Marshal(d)
		if err != nil {
			return archive.TransferRecord{}, err
		}
		rec.Deposits = append(rec.Deposits, archive.DepositRecord{Namespace: d.Namespace, Name: d.Name, Network: string(d.Spec.Network),
			TxHash: d.Spec.TxHash, LogIndex: d.Spec.LogIndex, Object: b})
	}
	return rec, nil
}

// deleteTransfer deletes an archived transfer's objects, the transfer last: until it goes, the
// next pass finds it and finishes. Its delete carries the archived resourceVersion, so that a
// transfer changed since (a late deposit, a hash) stays and is archived again; deleted is false
// then.
func (a *Archiver) deleteTransfer(ctx context.Context, in *archive.TransferInput) (deleted bool, err error) {
	t := in.Transfer
	for i := range in.Deposits {
		if err := deleteExact(ctx, a.Client, &in.Deposits[i], ""); err != nil {
			return false, err
		}
	}
	for i := range in.Refunds {
		if err := deleteExact(ctx, a.Client, &in.Refunds[i], ""); err != nil {
			return false, err
		}
	}
	holder := payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name}
	if err := a.releaseClaim(ctx, payoutv1.ClaimCustomerUUID, t.Spec.CustomerUUID, holder); err != nil {
		return false, err
	}
	if t.Spec.TxHash != "" {
		if err := a.releaseClaim(ctx, payoutv1.ClaimTxHash, t.Spec.TxHash, holder); err != nil {
			return false, err
		}
	}
	if err := a.fault(FaultChildrenDeleted); err != nil {
		return false, err
	}
	err = deleteExact(ctx, a.Client, t, t.ResourceVersion)
	if apierrors.IsConflict(err) {
		a.Log.Info("transfer changed while it was archived; it is archived again in the next pass", "transfer", t.Name)
		return false, nil
	}
	return err == nil, err
}

// releaseClaim deletes the claim on key if holder holds it.
func (a *Archiver) releaseClaim(ctx context.Context, kind payoutv1.ClaimKind, key string, holder payoutv1.ObjectRef) error {
	c := &payoutv1.Claim{}
	err := a.Client.Get(ctx, types.NamespacedName{Name: payoutv1.ClaimName(kind, payoutv1.NormalizeClaimKey(kind, key))}, c)
	if apierrors.IsNotFound(err) {
		return nil // gone, or not cached yet: the claim controller releases a claim whose holder is gone
	}
	if err != nil {
		return err
	}
	if c.Spec.Holder != holder {
		return nil
	}
	return deleteExact(ctx, a.Client, c, "")
}

// deleteExact deletes obj if it is still the object read (same UID and, when given, the same
// resourceVersion); one already gone is fine.
func deleteExact(ctx context.Context, c client.Client, obj client.Object, resourceVersion string) error {
	uid := obj.GetUID()
	pre := client.Preconditions{UID: &uid}
	if resourceVersion != "" {
		pre.ResourceVersion = &resourceVersion
	}
	return client.IgnoreNotFound(c.Delete(ctx, obj, pre))
}

// archiveRecipients archives the deleted recipients whose lineage has no live transfer.
func (a *Archiver) archiveRecipients(ctx context.Context, liveLineages map[string]bool, now time.Time, res *PassResult) (int, error) {
	list := &payoutv1.RecipientList{}
	if err := a.Client.List(ctx, list); err != nil {
		return 0, err
	}
	var due []*payoutv1.Recipient
	for i := range list.Items {
		rc := &list.Items[i]
		v := archive.DecideRecipient(archive.RecipientInput{Recipient: rc, LineageLive: liveLineages[lineageKey(rc.Namespace, rc.Lineage())],
			Now: now, Retention: a.Config.Retention})
		if v.Due() {
			due = append(due, rc)
		} else if !v.At.IsZero() && (res.Next.IsZero() || v.At.Before(res.Next)) {
			res.Next = v.At
		}
	}
	done := 0
	for start := 0; start < len(due); start += a.Config.Batch {
		batch := due[start:min(start+a.Config.Batch, len(due))]
		if err := a.limiter.WaitN(ctx, len(batch)); err != nil {
			return done, err
		}
		recs := make([]archive.RecipientRecord, 0, len(batch))
		byID := map[int64]*payoutv1.Recipient{}
		for _, rc := range batch {
			lookup, err := a.RecipientJSON(rc)
			if err != nil {
				return done, err
			}
			withKind := rc.DeepCopy()
			withKind.APIVersion, withKind.Kind = payoutv1.GroupVersion.String(), "Recipient"
			obj, err := json.Marshal(withKind)
			if err != nil {
				return done, err
			}
			recs = append(recs, archive.RecipientRecord{ID: rc.Spec.ID, UID: string(rc.UID), Namespace: rc.Namespace, Lineage: rc.Lineage(),
				ReplacedBy: rc.Spec.ReplacedBy, Lookup: lookup, Object: obj})
			byID[rc.Spec.ID] = rc
		}
		stored, err := a.Store.PutRecipients(ctx, recs)
		if err != nil {
			return done, err
		}
		for _, id := range stored {
			rc := byID[id]
			if err := a.releaseClaim(ctx, payoutv1.ClaimRecipientID, rc.Name, payoutv1.ObjectRef{Namespace: rc.Namespace, Name: rc.Name}); err != nil {
				return done, err
			}
			if err := deleteExact(ctx, a.Client, rc, rc.ResourceVersion); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
				return done, err
			}
			done++
		}
	}
	return done, nil
}
