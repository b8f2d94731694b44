package recovery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/fiat"
)

// AnnotationProviderPayout marks a claim the check made for a transfer the cluster lost, with
// the provider's payout that shows its money paid out: the claim reconciler never releases it
// (its holder is gone for good, and its deposit must pay no other transfer).
const AnnotationProviderPayout = "payout.stablepay.dev/provider-payout"

// Lister is a provider that lists its payouts (wise.Client does).
type Lister interface {
	List(ctx context.Context, since time.Time) ([]*fiat.Payout, error)
}

// Margin is how far before the cluster's newest record the check reads the provider's payouts:
// the provider's clock is not ours, and a payout is made a moment after the status write that
// asked for it.
const Margin = time.Hour

// MinWindow is the least window of payouts a check reads.
const MinWindow = 24 * time.Hour

// DefaultGap is the default of Checker.Gap.
const DefaultGap = 15 * time.Minute

// retry is how soon a check that could not finish (the provider or the archive did not answer)
// is made again; money waits meanwhile.
const retry = 30 * time.Second

// What the check reads and writes.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recoveries,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recoveries/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims,verbs=get;list;watch;create

// Checker makes the start-up check and answers whether money may move (Gate). It runs on the
// leader only, once per start.
type Checker struct {
	// Client reads the cluster (the manager's cache, synced before leader runnables start) and
	// writes the claims, transfers and the Recovery object.
	Client client.Client
	// Payouts lists the provider's payouts; nil when the provider cannot (the check then reads
	// only the cluster and says so).
	Payouts Lister
	// Archived reports whether the archive holds a transfer; nil without an archive.
	Archived func(ctx context.Context, id string) (bool, error)
	Clock    clock.PassiveClock
	// Restored: payoutd was started with --recovery (the operator restored etcd): the check
	// requires an acknowledgement whatever it finds, since what no ledger tells (Redo) must be
	// redone.
	Restored bool
	// Gap is how old the Recovery object's heartbeat may be at a start before the check
	// requires recovery (DefaultGap when 0): an etcd restore takes the heartbeat back to the
	// snapshot's time.
	Gap time.Duration
	Log logr.Logger

	mu      sync.Mutex
	checked bool
}

// NeedLeaderElection: the check writes; one replica makes it.
func (c *Checker) NeedLeaderElection() bool { return true }

func (c *Checker) gap() time.Duration {
	if c.Gap > 0 {
		return c.Gap
	}
	return DefaultGap
}

// heartbeatEvery is how often the leader writes the heartbeat: often enough that a gap is
// never a heartbeat missed.
func (c *Checker) heartbeatEvery() time.Duration { return min(time.Minute, c.gap()/4) }

// Start makes the check, again every retry until it finishes, then writes the heartbeat until
// ctx ends.
func (c *Checker) Start(ctx context.Context) error {
	for {
		err := c.check(ctx)
		if err == nil {
			break
		}
		c.Log.Error(err, "the recovery check could not finish; no money moves until it does", "retry", retry)
		c.writeChecking(ctx, err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retry):
		}
	}
	c.mu.Lock()
	c.checked = true
	c.mu.Unlock()
	tick := time.NewTicker(c.heartbeatEvery())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := c.beat(ctx); err != nil {
				c.Log.Error(err, "writing the recovery heartbeat")
			}
		}
	}
}

// beat writes the heartbeat.
func (c *Checker) beat(ctx context.Context) error {
	rec := &payoutv1.Recovery{}
	if err := c.Client.Get(ctx, client.ObjectKey{Name: payoutv1.RecoveryName}, rec); err != nil {
		return err
	}
	before := rec.DeepCopy()
	now := metav1.NewTime(c.Clock.Now())
	rec.Status.Heartbeat = &now
	return c.Client.Status().Patch(ctx, rec, client.MergeFrom(before))
}

// MoneyMoves says whether a payout may be created or a refund signed now, and when not, why.
// It fails closed: before this process's check finished, while the Recovery object cannot be
// read, while an operator paused, and after a check that required recovery until an operator
// acknowledged it.
func (c *Checker) MoneyMoves(ctx context.Context) (bool, string) {
	c.mu.Lock()
	checked := c.checked
	c.mu.Unlock()
	if !checked {
		return false, "money waits for the recovery check of this start (kubectl payout recover shows it)"
	}
	rec := &payoutv1.Recovery{}
	if err := c.Client.Get(ctx, client.ObjectKey{Name: payoutv1.RecoveryName}, rec); err != nil {
		return false, fmt.Sprintf("money waits: the Recovery object %s cannot be read (%v)", payoutv1.RecoveryName, err)
	}
	return Moves(rec)
}

// Moves is the gate's rule on the Recovery object.
func Moves(rec *payoutv1.Recovery) (bool, string) {
	switch {
	case rec.Spec.Paused:
		return false, "money is paused by an operator (kubectl payout recover --resume moves it again)"
	case rec.Status.State == payoutv1.RecoveryChecking || rec.Status.State == "":
		return false, "money waits for the recovery check (kubectl payout recover shows it)"
	case rec.Status.State == payoutv1.RecoveryRequired && rec.Spec.Acknowledged != rec.Status.CheckID:
		return false, fmt.Sprintf("money waits for an operator: recovery check %s found the cluster behind the ledgers (kubectl payout recover lists what to redo, then --resume)", rec.Status.CheckID)
	}
	return true, ""
}

// check reads the ledgers and the cluster, repairs what the ledgers show and writes the report.
func (c *Checker) check(ctx context.Context) error {
	transfers := &payoutv1.TransferList{}
	if err := c.Client.List(ctx, transfers); err != nil {
		return fmt.Errorf("listing transfers: %w", err)
	}
	claims := &payoutv1.ClaimList{}
	if err := c.Client.List(ctx, claims); err != nil {
		return fmt.Errorf("listing claims: %w", err)
	}
	in := Input{Transfers: map[string]*payoutv1.Transfer{}, Archived: map[string]bool{}, Holders: map[string]string{}}
	for i := range transfers.Items {
		t := &transfers.Items[i]
		in.Transfers[t.Name] = t
	}
	for i := range claims.Items {
		h := claims.Items[i].Spec.Holder
		in.Holders[claims.Items[i].Name] = h.Namespace + "/" + h.Name
	}
	now := c.Clock.Now()
	newest := Newest(in.Transfers)
	in.Since = now.Add(-MinWindow)
	if !newest.IsZero() && newest.Add(-Margin).Before(in.Since) {
		in.Since = newest.Add(-Margin)
	}
	message := ""
	if c.Payouts != nil {
		payouts, err := c.Payouts.List(ctx, in.Since)
		if err != nil {
			return fmt.Errorf("listing the provider's payouts since %s: %w", in.Since.Format(time.RFC3339), err)
		}
		in.Payouts = payouts
	} else {
		message = "the provider cannot list its payouts: they were not compared. "
	}
	for _, p := range in.Payouts {
		if in.Transfers[p.Reference] != nil || c.Archived == nil {
			continue
		}
		ok, err := c.Archived(ctx, p.Reference)
		if err != nil {
			return fmt.Errorf("looking transfer %s up in the archive: %w", p.Reference, err)
		}
		in.Archived[p.Reference] = ok
	}
	report := Check(in)
	if err := c.apply(ctx, &report); err != nil {
		return err
	}
	prev := &payoutv1.Recovery{}
	switch err := c.Client.Get(ctx, client.ObjectKey{Name: payoutv1.RecoveryName}, prev); {
	case err == nil:
		if hb := prev.Status.Heartbeat; hb != nil && now.Sub(hb.Time) > c.gap() {
			report.add(RecordsStale, "", "the cluster's records stop at %s, %s before this start (the leader writes a heartbeat every %v): etcd was restored, or payoutd stood still; what was done after it is lost",
				hb.UTC().Format(time.RFC3339), now.Sub(hb.Time).Round(time.Second), c.heartbeatEvery())
		}
	case !apierrors.IsNotFound(err):
		return err
	}
	return c.writeReport(ctx, in, newest, report, message)
}

// apply makes the claims and sets the hashes the report asks for. A claim someone made
// meanwhile is read back: another holder is a conflict, reported.
func (c *Checker) apply(ctx context.Context, r *Report) error {
	for _, b := range r.Bind {
		claim := payoutv1.NewClaim(b.Kind, b.Key, b.Holder)
		if b.Holder.Namespace == "" {
			claim.Annotations = map[string]string{AnnotationProviderPayout: b.ProviderID}
		}
		err := c.Client.Create(ctx, claim)
		if apierrors.IsAlreadyExists(err) {
			held := &payoutv1.Claim{}
			if err := c.Client.Get(ctx, client.ObjectKeyFromObject(claim), held); err != nil {
				return err
			}
			if held.Spec.Holder != b.Holder {
				r.add(DepositConflict, b.Holder.Name, "%s %s paid transfer %s (payout %s), but %s/%s claimed it during the check: look at both",
					b.Kind, b.Key, b.Holder.Name, b.ProviderID, held.Spec.Holder.Namespace, held.Spec.Holder.Name)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("claiming %s %s for transfer %s: %w", b.Kind, b.Key, b.Holder.Name, err)
		}
	}
	for _, h := range r.Rehash {
		t := &payoutv1.Transfer{}
		if err := c.Client.Get(ctx, h.Transfer, t); err != nil {
			return client.IgnoreNotFound(err)
		}
		if t.Spec.TxHash != "" {
			continue
		}
		next := t.DeepCopy()
		next.Spec.TxHash = h.TxHash
		if err := c.Client.Patch(ctx, next, client.MergeFromWithOptions(t, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("setting transfer %s's hash %s again: %w", h.Transfer.Name, h.TxHash, err)
		}
	}
	return nil
}

// maxFindings is how many findings the Recovery object holds (its CRD's MaxItems, less the
// summary of the rest).
const maxFindings = 199

func (c *Checker) writeReport(ctx context.Context, in Input, newest time.Time, r Report, message string) error {
	now := metav1.NewTime(c.Clock.Now())
	st := payoutv1.RecoveryStatus{CheckID: newCheckID(now.Time), CheckedAt: &now, Heartbeat: &now, Since: &metav1.Time{Time: in.Since}, Redo: Redo}
	if !newest.IsZero() {
		st.NewestRecord = &metav1.Time{Time: newest}
	}
	st.Findings = r.Findings
	if len(st.Findings) > maxFindings {
		more := len(st.Findings) - maxFindings
		st.Findings = append(st.Findings[:maxFindings:maxFindings], payoutv1.RecoveryFinding{Kind: "More",
			Message: fmt.Sprintf("%d more findings: the controller's log lists every one", more)})
	}
	for _, f := range r.Findings {
		c.Log.Info("recovery finding", "kind", f.Kind, "subject", f.Subject, "message", f.Message)
	}
	switch {
	case r.Required():
		st.State = payoutv1.RecoveryRequired
		message += fmt.Sprintf("%d payouts read since %s; the cluster is behind the ledgers (%d findings). What could be rebuilt was; redo what is listed after the newest record, then kubectl payout recover --resume",
			len(in.Payouts), in.Since.UTC().Format(time.RFC3339), len(r.Findings))
	case c.Restored:
		st.State = payoutv1.RecoveryRequired
		message += fmt.Sprintf("started with --recovery: %d payouts read since %s agree with the cluster; redo what is listed after the newest record, then kubectl payout recover --resume",
			len(in.Payouts), in.Since.UTC().Format(time.RFC3339))
	default:
		st.State = payoutv1.RecoveryClear
		message += fmt.Sprintf("%d payouts read since %s agree with the cluster", len(in.Payouts), in.Since.UTC().Format(time.RFC3339))
	}
	st.Message = truncate(message, 512)
	c.Log.Info("recovery check", "state", st.State, "check", st.CheckID, "findings", len(r.Findings), "message", st.Message)
	return c.writeStatus(ctx, st)
}

// writeChecking says on the Recovery object why the check has not finished.
func (c *Checker) writeChecking(ctx context.Context, cause error) {
	now := metav1.NewTime(c.Clock.Now())
	st := payoutv1.RecoveryStatus{State: payoutv1.RecoveryChecking, CheckedAt: &now,
		Message: truncate(fmt.Sprintf("the check cannot finish (%v); money waits, trying again every %v", cause, retry), 512)}
	if err := c.writeStatus(ctx, st); err != nil {
		c.Log.Error(err, "writing the Recovery object")
	}
}

// writeStatus creates the Recovery object when missing and replaces its status, keeping the
// operator's spec. The write is a merge patch from the status as read, not an update: a field
// of a newer release (after a rollback to this one) is in neither, and stays
// (docs/operations/upgrade.md).
func (c *Checker) writeStatus(ctx context.Context, st payoutv1.RecoveryStatus) error {
	rec := &payoutv1.Recovery{}
	err := c.Client.Get(ctx, client.ObjectKey{Name: payoutv1.RecoveryName}, rec)
	if apierrors.IsNotFound(err) {
		rec = &payoutv1.Recovery{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.RecoveryName}}
		err = c.Client.Create(ctx, rec)
	}
	if err != nil {
		return fmt.Errorf("the Recovery object: %w", err)
	}
	before := rec.DeepCopy()
	st.ObservedGeneration = rec.Generation
	st.Conditions = rec.Status.Conditions
	if st.Heartbeat == nil {
		st.Heartbeat = rec.Status.Heartbeat // a check that has not finished is no sign of life
	}
	ready, reason := metav1.ConditionTrue, string(st.State)
	probe := rec.DeepCopy()
	probe.Status = st
	moves, why := Moves(probe)
	if !moves {
		ready = metav1.ConditionFalse
	} else {
		why = "money moves"
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: payoutv1.ReadyCondition, Status: ready, Reason: reason,
		Message: truncate(why, 512), ObservedGeneration: rec.Generation})
	rec.Status = st
	return c.Client.Status().Patch(ctx, rec, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

func newCheckID(at time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return at.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
