package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/metrics"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// Notifier mails the outcome of a transfer to its customer (spec 6).
type Notifier interface {
	// Notify sends the message of outcome kind of t and returns its Message-ID.
	Notify(ctx context.Context, kind payoutv1.NotificationKind, t *payoutv1.Transfer) (messageID string, err error)
	// Permanent reports whether a Notify error will never be overcome by a retry.
	Permanent(err error) bool
}

// V2Addresses gives the platform's fixed v2 deposit address of a token on a network.
type V2Addresses interface {
	V2Address(network payoutv1.Network, token payoutv1.Token) (string, bool)
}

// TransferReconciler drives transfers through the status machine of spec section 3. It is the
// one writer of Transfer status. Each pass reads top to bottom:
//
//	get from the cache → gather what the chain, the recipient store and the refund say →
//	perform the provider work whose intent is stored (ask by reference, create if absent) →
//	decide (internal/transfer, pure) → delete the recipient and mail the outcome when the
//	decision says so → write the status with the optimistic lock → record events.
//
// The payout is created only from an intent read back from the API server, and the intent and
// a cancellation request exclude each other through the transfer's resourceVersion: a crash at
// any point pays nothing twice, and a cancelled transfer is never paid.
type TransferReconciler struct {
	client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Provider pays fiat.
	Provider fiat.Provider
	// Notifier mails outcomes; nil disables mail (recorded as not configured).
	Notifier Notifier
	// Chain looks up v2 transactions by hash.
	Chain chain.TxLookup
	// V2 gives the platform's fixed v2 deposit addresses.
	V2 V2Addresses
	// MailRetry is how long to wait after a mail server could not be reached.
	MailRetry time.Duration
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=refunds,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recipients,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *TransferReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &payoutv1.Transfer{}
	if err := r.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !t.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	in, err := r.gather(ctx, t)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := transfer.Decide(*in)

	requeue := d.RequeueAfter
	for _, a := range d.Actions {
		switch a.Kind {
		case transfer.ActDeleteRecipient:
			if err := r.deleteRecipient(ctx, t.Namespace, a.RecipientID, t.Name); err != nil {
				return ctrl.Result{}, fmt.Errorf("deleting recipient %d after the transfer ended: %w", a.RecipientID, err)
			}
		case transfer.ActNotify:
			if wait := r.notify(ctx, t, &d, a.Notification); wait > 0 {
				requeue = shortest(requeue, wait)
			}
		}
	}

	if transfer.Unwritten(t, &d.Status) {
		// a fresh v1 transfer: its defaulted status says all there is; writing its Ready condition
		// would cost every create a status patch
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	before := t.DeepCopy()
	t.Status = d.Status
	setReady(t, readyStatus(t.Status.Phase == payoutv1.PhaseCompleted || t.Status.Phase == payoutv1.PhaseRefunded),
		string(t.Status.Phase), lastMessage(t))
	if err := patchStatus(ctx, r.Client, before, t); err != nil {
		if apierrors.IsConflict(err) {
			// Someone changed the transfer (a cancellation, a hash) since it was read: decide again
			// on the new version.
			return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // an immediate retry
		}
		return ctrl.Result{}, err
	}
	metrics.TransferStatusChanged(before, t, r.Clock.Now())
	for _, e := range d.Events {
		r.Recorder.Eventf(t, nil, e.Type, e.Reason, "Transition", "%s", e.Message)
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// gather reads everything the decision needs, and performs the provider work whose intent is
// stored. It changes nothing in the cluster.
func (r *TransferReconciler) gather(ctx context.Context, t *payoutv1.Transfer) (*transfer.Input, error) {
	in := &transfer.Input{Transfer: t, Now: r.Clock.Now(), ProviderName: r.Provider.Name()}
	if t.Spec.Method == payoutv1.TransferV1 {
		deps := &payoutv1.DepositList{}
		if err := r.List(ctx, deps, client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: t.Name}); err != nil {
			return nil, err
		}
		in.Deposits = deps.Items
	}
	if transfer.NeedsTx(t) && r.Chain != nil {
		if addr, ok := r.V2.V2Address(t.Spec.SourceNetwork, t.Spec.SourceToken); ok {
			in.V2Address = addr
			obs, err := r.Chain.LookupTx(ctx, t.Spec.SourceNetwork, t.Spec.TxHash)
			if err != nil {
				// The chain cannot answer now: decide without it and ask again at the next poll.
				log.FromContext(ctx).Info("looking up the v2 transaction failed; trying again", "tx", t.Spec.TxHash, "error", err.Error())
			} else {
				in.Tx = obs
			}
		}
	}
	rs, err := r.recipientState(ctx, t)
	if err != nil {
		return nil, err
	}
	in.Recipient = rs
	rf := &payoutv1.Refund{}
	switch err := r.Get(ctx, client.ObjectKeyFromObject(t), rf); {
	case err == nil:
		in.Refund = rf
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	if transfer.Pending(t) {
		p, err := r.ensurePayout(ctx, t)
		if err != nil {
			return nil, err
		}
		in.Provider = p
	}
	return in, nil
}

// ensurePayout asks the provider about the payout of a stored intent and, for an intent the
// provider does not know yet, creates it. Create is idempotent by reference, so a crash after
// it and before the status write is recovered by the next pass finding the payout.
func (r *TransferReconciler) ensurePayout(ctx context.Context, t *payoutv1.Transfer) (*transfer.ProviderPayout, error) {
	stored := t.Status.Payout
	if stored.Provider != "" && stored.Provider != r.Provider.Name() {
		return nil, reconcile.TerminalError(fmt.Errorf("the payout intent names provider %q but this deployment pays through %q", stored.Provider, r.Provider.Name()))
	}
	p, err := r.Provider.Find(ctx, stored.Reference)
	if err != nil {
		return nil, fmt.Errorf("asking the provider about payout %s: %w", stored.Reference, err)
	}
	if p == nil && stored.State == payoutv1.PayoutAccepted {
		return &transfer.ProviderPayout{Found: false}, nil // never re-create an accepted payout
	}
	if p == nil || p.State == fiat.StatePending {
		req, err := payoutRequest(t)
		if err != nil {
			return nil, reconcile.TerminalError(err)
		}
		p, err = r.Provider.Create(ctx, req)
		switch {
		case fiat.IsPermanent(err):
			// The provider refused the request itself: no payout exists or ever will.
			return &transfer.ProviderPayout{Found: true, State: payoutv1.PayoutRejected, Message: fiat.MessageOf(err)}, nil
		case err != nil:
			return nil, fmt.Errorf("creating payout %s at the provider: %w", stored.Reference, err)
		}
	}
	if p.Reference != "" && p.Reference != stored.Reference {
		return nil, reconcile.TerminalError(fmt.Errorf("the provider answered for reference %q, not %q", p.Reference, stored.Reference))
	}
	return providerView(p), nil
}

func providerView(p *fiat.Payout) *transfer.ProviderPayout {
	v := &transfer.ProviderPayout{Found: true, ProviderID: p.ProviderID, Message: p.Message}
	switch p.State {
	case fiat.StateCompleted:
		v.State = payoutv1.PayoutCompleted
	case fiat.StateRejected:
		v.State = payoutv1.PayoutRejected
	case fiat.StateAccepted:
		v.State = payoutv1.PayoutAccepted
	default:
		v.State = payoutv1.PayoutRequested
	}
	if !p.SourceAmount.IsZero() {
		v.SourceAmount = p.SourceAmount.String()
	}
	if !p.TargetAmount.IsZero() {
		v.TargetAmount = p.TargetAmount.String()
	}
	if !p.Rate.IsZero() {
		v.Rate = p.Rate.String()
	}
	return v
}

// payoutRequest is the payout of t, rebuilt from the stored transfer alone so that every retry
// asks for exactly the same payout: the target amount its stored intent records (priced for the
// transfer's amount, which may be a cent off the quote's) at the quoted rate, to the recipient
// as it was when the transfer was created.
func payoutRequest(t *payoutv1.Transfer) (fiat.PayoutRequest, error) {
	target, err := decimal.NewFromString(string(t.Status.Payout.TargetAmount))
	if err != nil {
		return fiat.PayoutRequest{}, fmt.Errorf("transfer %s: the payout intent's targetAmount %q: %w", t.Name, t.Status.Payout.TargetAmount, err)
	}
	rate, err := decimal.NewFromString(string(t.Spec.Quote.USDToTargetRate))
	if err != nil {
		return fiat.PayoutRequest{}, fmt.Errorf("transfer %s: quote rate %q: %w", t.Name, t.Spec.Quote.USDToTargetRate, err)
	}
	rc := t.Spec.Recipient
	return fiat.PayoutRequest{
		Reference: t.Name, SourceCurrency: "USD", TargetCurrency: string(t.Spec.Quote.TargetCurrency),
		TargetAmount: target, Rate: rate,
		Recipient: fiat.Recipient{AccountHolderName: rc.AccountHolderName, Currency: string(rc.Currency), Type: rc.Type,
			Country: string(rc.Country), Details: transfer.DetailsMap(rc.Details)},
	}, nil
}

// recipientState finds the newest recipient of t's recipient's lineage (an update replaces a
// recipient by a new one) and whether it was deleted.
func (r *TransferReconciler) recipientState(ctx context.Context, t *payoutv1.Transfer) (transfer.RecipientState, error) {
	id := t.Spec.RecipientID
	for range 32 {
		rc := &payoutv1.Recipient{}
		err := r.Get(ctx, types.NamespacedName{Namespace: t.Namespace, Name: fmt.Sprint(id)}, rc)
		if apierrors.IsNotFound(err) {
			return transfer.RecipientState{}, nil
		}
		if err != nil {
			return transfer.RecipientState{}, err
		}
		if rc.Spec.ReplacedBy == nil {
			at, deleted := rc.DeletedAt()
			return transfer.RecipientState{Known: true, ID: id, Inactive: rc.Spec.Deactivated, Deleted: deleted, DeletedAt: at}, nil
		}
		id = *rc.Spec.ReplacedBy
	}
	return transfer.RecipientState{}, fmt.Errorf("recipient %d: a chain of more than 32 updates", t.Spec.RecipientID)
}

// deleteRecipient deactivates a recipient after its transfer ended (spec 2.1), under its
// resourceVersion, marked as deleted after that transfer; a recipient deleted or replaced
// meanwhile is left alone.
func (r *TransferReconciler) deleteRecipient(ctx context.Context, namespace string, id int64, transferID string) error {
	rc := &payoutv1.Recipient{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: fmt.Sprint(id)}, rc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if rc.Spec.Deactivated {
		return nil
	}
	next := rc.DeepCopy()
	next.Spec.Deactivated = true
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[payoutv1.RecipientDeletedAfterAnnotation] = transferID
	return r.Patch(ctx, next, client.MergeFromWithOptions(rc, client.MergeFromWithOptimisticLock{}))
}

// notify mails an outcome and records it in the decided status; it returns how long to wait
// before trying again when the mail server could not take it (the transfer never waits for mail).
func (r *TransferReconciler) notify(ctx context.Context, t *payoutv1.Transfer, d *transfer.Decision, kind payoutv1.NotificationKind) time.Duration {
	if r.Notifier == nil {
		return 0
	}
	withStatus := t.DeepCopy()
	withStatus.Status = d.Status
	id, err := r.Notifier.Notify(ctx, kind, withStatus)
	switch {
	case err == nil:
		transfer.RecordNotification(&d.Status, kind, t.Spec.CustomerEmail, id, "", r.Clock.Now())
	case r.Notifier.Permanent(err):
		transfer.RecordNotification(&d.Status, kind, t.Spec.CustomerEmail, id, err.Error(), r.Clock.Now())
		d.Events = append(d.Events, transfer.Event{Type: corev1.EventTypeWarning, Reason: "MailRefused", Message: fmt.Sprintf("the %s e-mail to %s was refused for good: %v", kind, t.Spec.CustomerEmail, err)})
	default:
		d.Events = append(d.Events, transfer.Event{Type: corev1.EventTypeWarning, Reason: "MailDelayed", Message: fmt.Sprintf("the %s e-mail to %s could not be sent yet: %v", kind, t.Spec.CustomerEmail, err)})
		return r.MailRetry
	}
	return 0
}

func lastMessage(t *payoutv1.Transfer) string {
	if n := len(t.Status.History); n > 0 {
		return t.Status.History[n-1].Message
	}
	return ""
}

func shortest(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// SetupWithManager registers the controller: transfers, and the deposits, refunds and
// recipients that move them.
func (r *TransferReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Provider == nil {
		return errors.New("transfer controller: a fiat provider is required")
	}
	if r.MailRetry <= 0 {
		r.MailRetry = 30 * time.Second
	}
	byLabel := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if id := o.GetLabels()[payoutv1.DepositTransferLabel]; id != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: id}}}
		}
		return nil
	})
	sameName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
	})
	// A recipient deleted through the API stops the transfers of its lineage that escaped the
	// deletion's cancellation (created while it ran, or left by an interrupted deletion).
	lineage := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		rc, ok := o.(*payoutv1.Recipient)
		if !ok {
			return nil
		}
		if _, deleted := rc.DeletedAt(); !deleted || rc.Spec.ReplacedBy != nil {
			return nil
		}
		list := &payoutv1.TransferList{}
		if err := r.List(ctx, list, client.InNamespace(rc.Namespace), client.MatchingLabels{payoutv1.RecipientLineageLabel: rc.Lineage()}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			if transfer.Cancellable(&list.Items[i]) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return out
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&payoutv1.Transfer{}).
		Watches(&payoutv1.Deposit{}, byLabel).
		Watches(&payoutv1.Refund{}, sameName).
		Watches(&payoutv1.Recipient{}, lineage).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)}).
		Named("transfer").
		Complete(r)
}
