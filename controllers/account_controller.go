package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// Account reasons of the Ready condition.
const (
	AccountNamespaceReadyReason       = "NamespaceReady"
	AccountNamespaceTerminatingReason = "NamespaceTerminating"
	AccountNamespaceConflictReason    = "NamespaceOwnedElsewhere"
	// AccountDeletionWaitsReason: the account is deleted, and its namespace holds money owed
	// (the message says what); both stay until nothing is owed.
	AccountDeletionWaitsReason = "DeletionWaits"
	// AccountReleasedReason: the account is deleted and nothing in its namespace is owed; the
	// namespace is released (payoutv1.ReleasedLabel) and goes with the account.
	AccountReleasedReason = "Released"
)

// Defaults of the deletion of an account.
const (
	// heldRecheckInterval: how often a deleted account's namespace is read again while it holds
	// money owed.
	heldRecheckInterval = 30 * time.Second
	// defaultReleaseSettle: how long a released namespace waits before its last check.
	defaultReleaseSettle = 5 * time.Second
)

// releasedAtAnnotation records on a released namespace when it was released.
const releasedAtAnnotation = "payout.stablepay.dev/released-at"

// PayoutAccountReconciler gives every account its namespace, the tenancy boundary that holds
// its recipients, quotes, transfers and wallets, and holds a deleted account (its finalizer,
// payoutv1.MoneyFinalizer) until nothing in its namespace is owed.
//
// Deleting an account deletes its namespace (the namespace's owner reference), and deleting a
// namespace deletes everything in it, the record of what is owed with it: failed transfers with
// a deposit, stray deposits, refunds on their way. So the account carries the finalizer from its
// creation (admin.CreateAccount; this controller adds it to an account made otherwise), and a
// deleted account waits, saying what for in its Ready condition and events, until
// tenancy.Holds finds nothing, read past the cache. Then it labels the namespace released
// (payoutv1.ReleasedLabel: the admission policy of config/policy refuses to delete an account
// namespace without it, and the chain watcher records later deposits for it in
// OrphanNamespace), checks once more after ReleaseSettle, and removes the finalizer: the
// account goes, and the namespace with it.
type PayoutAccountReconciler struct {
	client.Client
	// APIReader reads a deleted account's namespace past the cache: it must not go on a stale
	// view of what is owed. Default: Client.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// ReleaseSettle is how long a released namespace waits before its last check, so that the
	// chain watcher's cache has seen the label (default 5s): a deposit recorded before is in
	// that check, one after goes to OrphanNamespace.
	ReleaseSettle time.Duration
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers;deposits;refunds;claims,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *PayoutAccountReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	acct := &payoutv1.PayoutAccount{}
	if err := r.Get(ctx, req.NamespacedName, acct); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !acct.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, acct)
	}
	if !controllerutil.ContainsFinalizer(acct, payoutv1.MoneyFinalizer) {
		// an account made without it (by hand, or before it existed); under the read version,
		// so that a deletion meanwhile is not raced
		before := acct.DeepCopy()
		controllerutil.AddFinalizer(acct, payoutv1.MoneyFinalizer)
		if err := r.Patch(ctx, acct, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	before := acct.DeepCopy()
	nsName := payoutv1.AccountNamespace(acct.Name)

	ns := &corev1.Namespace{}
	err := r.Get(ctx, client.ObjectKey{Name: nsName}, ns)
	switch {
	case apierrors.IsNotFound(err):
		ns = tenancy.Namespace(acct)
		if err := tenancy.EnsureNamespace(ctx, r.Client, acct); err != nil {
			return ctrl.Result{}, err
		}
	case err != nil:
		return ctrl.Result{}, err
	}

	acct.Status.Namespace = nsName
	switch {
	case ns.Labels[tenancy.AccountLabel] != "" && ns.Labels[tenancy.AccountLabel] != acct.Name:
		setReady(acct, metav1.ConditionFalse, AccountNamespaceConflictReason,
			fmt.Sprintf("namespace %s belongs to account %s", nsName, ns.Labels[tenancy.AccountLabel]))
	case !ns.DeletionTimestamp.IsZero():
		setReady(acct, metav1.ConditionFalse, AccountNamespaceTerminatingReason, "namespace "+nsName+" is being deleted")
	default:
		setReady(acct, metav1.ConditionTrue, AccountNamespaceReadyReason, "objects of the account live in namespace "+nsName)
	}
	return ctrl.Result{}, patchStatus(ctx, r.Client, before, acct)
}

// finalize lets a deleted account go once nothing in its namespace is owed.
func (r *PayoutAccountReconciler) finalize(ctx context.Context, acct *payoutv1.PayoutAccount) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(acct, payoutv1.MoneyFinalizer) {
		return ctrl.Result{}, nil
	}
	nsName := payoutv1.AccountNamespace(acct.Name)
	ns := &corev1.Namespace{}
	err := r.reader().Get(ctx, client.ObjectKey{Name: nsName}, ns)
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, r.release(ctx, acct, "its namespace "+nsName+" is gone")
	case err != nil:
		return ctrl.Result{}, err
	case ns.Labels[tenancy.AccountLabel] != acct.Name:
		return ctrl.Result{}, r.release(ctx, acct, "namespace "+nsName+" is not its own")
	}
	contents, err := r.contents(ctx, nsName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if holds := tenancy.Holds(contents); len(holds) > 0 {
		if payoutv1.NamespaceReleased(ns.Labels) {
			// something is owed again (a deposit recorded before the watcher saw the label):
			// the namespace is guarded again
			if err := r.labelReleased(ctx, ns, false); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: heldRecheckInterval}, r.writeDeleting(ctx, acct, AccountDeletionWaitsReason, tenancy.HoldsMessage(holds), corev1.EventTypeWarning)
	}
	if !payoutv1.NamespaceReleased(ns.Labels) {
		if err := r.labelReleased(ctx, ns, true); err != nil {
			return ctrl.Result{}, err
		}
		msg := fmt.Sprintf("nothing in namespace %s is owed: it is released, and goes with the account", nsName)
		return ctrl.Result{RequeueAfter: r.settle()}, r.writeDeleting(ctx, acct, AccountReleasedReason, msg, corev1.EventTypeNormal)
	}
	if at, err := time.Parse(time.RFC3339, ns.Annotations[releasedAtAnnotation]); err == nil {
		if wait := at.Add(r.settle()).Sub(r.now()); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	// released, and after the settle still nothing owed: the account goes, its namespace with it
	return ctrl.Result{}, r.release(ctx, acct, "nothing in namespace "+nsName+" is owed")
}

// contents reads what the namespace holds that bears on money, past the cache.
func (r *PayoutAccountReconciler) contents(ctx context.Context, ns string) (tenancy.Contents, error) {
	transfers, deps, refunds := &payoutv1.TransferList{}, &payoutv1.DepositList{}, &payoutv1.RefundList{}
	for _, list := range []client.ObjectList{transfers, deps, refunds} {
		if err := r.reader().List(ctx, list, client.InNamespace(ns)); err != nil {
			return tenancy.Contents{}, err
		}
	}
	c := tenancy.Contents{Transfers: transfers.Items, Deposits: deps.Items, Refunds: refunds.Items, HashHeld: map[string]bool{}, Now: r.now()}
	for i := range transfers.Items {
		t := &transfers.Items[i]
		if !transfer.Released(t) {
			continue
		}
		key := payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, t.Spec.TxHash)
		claim := &payoutv1.Claim{}
		switch err := r.reader().Get(ctx, client.ObjectKey{Name: payoutv1.ClaimName(payoutv1.ClaimTxHash, key)}, claim); {
		case err == nil:
			c.HashHeld[t.Name] = claim.Spec.Holder == payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name}
		case !apierrors.IsNotFound(err):
			return tenancy.Contents{}, err
		}
	}
	return c, nil
}

// labelReleased marks the namespace released (or no longer), under the read version.
func (r *PayoutAccountReconciler) labelReleased(ctx context.Context, ns *corev1.Namespace, released bool) error {
	before := ns.DeepCopy()
	if released {
		metav1.SetMetaDataLabel(&ns.ObjectMeta, payoutv1.ReleasedLabel, "true")
		metav1.SetMetaDataAnnotation(&ns.ObjectMeta, releasedAtAnnotation, r.now().UTC().Format(time.RFC3339))
	} else {
		delete(ns.Labels, payoutv1.ReleasedLabel)
		delete(ns.Annotations, releasedAtAnnotation)
	}
	return r.Patch(ctx, ns, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// writeDeleting records why a deleted account waits (Ready false) and says it in an event when
// that changed.
func (r *PayoutAccountReconciler) writeDeleting(ctx context.Context, acct *payoutv1.PayoutAccount, reason, msg, kind string) error {
	before := acct.DeepCopy()
	setReady(acct, metav1.ConditionFalse, reason, msg)
	if err := patchStatus(ctx, r.Client, before, acct); err != nil {
		return err
	}
	if old := apimeta.FindStatusCondition(before.Status.Conditions, payoutv1.ReadyCondition); r.Recorder != nil && (old == nil || old.Reason != reason || old.Message != msg) {
		r.Recorder.Eventf(acct, nil, kind, reason, "Delete", "%s", msg)
	}
	return nil
}

// release removes the account's finalizer: it goes, and its namespace with it.
func (r *PayoutAccountReconciler) release(ctx context.Context, acct *payoutv1.PayoutAccount, why string) error {
	before := acct.DeepCopy()
	controllerutil.RemoveFinalizer(acct, payoutv1.MoneyFinalizer)
	if err := r.Patch(ctx, acct, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(err)
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(acct, nil, corev1.EventTypeNormal, AccountReleasedReason, "Delete", "the account is deleted: %s", why)
	}
	return nil
}

func (r *PayoutAccountReconciler) reader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

func (r *PayoutAccountReconciler) settle() time.Duration {
	if r.ReleaseSettle > 0 {
		return r.ReleaseSettle
	}
	return defaultReleaseSettle
}

func (r *PayoutAccountReconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return time.Now()
}

// SetupWithManager registers the controller.
func (r *PayoutAccountReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&payoutv1.PayoutAccount{}).
		Owns(&corev1.Namespace{}).
		Named("payoutaccount").
		Complete(r)
}
