package controllers

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=depositoptions,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=depositoptions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=chaincursors,verbs=get;list;watch

// DepositOptionReconciler derives each option's availability: enabled by the operator, and the
// network's deposit watcher in sync, as its ChainCursor says (synced, with a heartbeat younger
// than MaxHeartbeatAge). A network with no cursor has no watcher (no chain endpoint is
// configured for it). Every write of a cursor reconciles the options of its network, and an
// available option is looked at again when its watcher's heartbeat would turn stale, so a
// watcher that stops (a crashed leader, a removed network) makes its options unavailable.
type DepositOptionReconciler struct {
	client.Client
	Clock           clock.PassiveClock
	MaxHeartbeatAge time.Duration
}

func (r *DepositOptionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := &payoutv1.DepositOption{}
	if err := r.Get(ctx, req.NamespacedName, o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cc := &payoutv1.ChainCursor{}
	if err := r.Get(ctx, client.ObjectKey{Name: string(o.Spec.Network)}, cc); apierrors.IsNotFound(err) {
		cc = nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	before := o.DeepCopy()
	got, recheck := depositOptionAvailability(o, cc, r.Clock.Now(), r.MaxHeartbeatAge)
	o.Status.Available = got.ready
	setReady(o, readyStatus(got.ready), got.reason, got.message)
	return ctrl.Result{RequeueAfter: recheck}, patchStatus(ctx, r.Client, before, o)
}

// depositOptionAvailability is whether an option can take deposits now, and when to look again
// (when an available option's heartbeat would turn stale; 0 for never).
func depositOptionAvailability(o *payoutv1.DepositOption, cc *payoutv1.ChainCursor, now time.Time, maxAge time.Duration) (readiness, time.Duration) {
	network := string(o.Spec.Network)
	switch {
	case !o.Spec.Enabled:
		return readiness{false, payoutv1.DepositOptionDisabledReason, "switched off by an operator"}, 0
	case cc == nil:
		return readiness{false, payoutv1.DepositOptionNoChainEndpointReason, "no deposit watcher runs for " + network + ": no chain endpoint is configured for it"}, 0
	case cc.Status.HeartbeatAt == nil:
		return readiness{false, payoutv1.DepositOptionChainNotSyncedReason, "the " + network + " deposit watcher has not reported yet"}, 0
	}
	age := now.Sub(cc.Status.HeartbeatAt.Time)
	switch {
	case age > maxAge:
		return readiness{false, payoutv1.DepositOptionChainNotSyncedReason,
			fmt.Sprintf("the %s deposit watcher's last heartbeat is %s old (limit %s)", network, age.Round(time.Second), maxAge)}, 0
	case !cc.Status.Synced:
		msg := "the " + network + " deposit watcher is not in sync"
		if cc.Status.Message != "" {
			msg += ": " + cc.Status.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return readiness{false, payoutv1.DepositOptionChainNotSyncedReason, msg}, 0
	}
	return readiness{true, payoutv1.DepositOptionAvailableReason, "deposits are detected on " + network}, maxAge - age + time.Second
}

// SetupWithManager registers the controller: options, and the cursors of their networks.
func (r *DepositOptionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&payoutv1.DepositOption{}).
		Watches(&payoutv1.ChainCursor{}, handler.EnqueueRequestsFromMapFunc(r.optionsOfCursor)).
		Named("depositoption").Complete(r)
}

// optionsOfCursor maps a cursor to the options of its network (a handful: a list of the cache).
func (r *DepositOptionReconciler) optionsOfCursor(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &payoutv1.DepositOptionList{}
	if err := r.List(ctx, list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, o := range list.Items {
		if string(o.Spec.Network) == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&o)})
		}
	}
	return out
}

// DefaultDepositOptions are the token/network pairs of spec 2.3 and 9: USDC everywhere, USDT on
// the networks that carry it for this service (v1 only).
func DefaultDepositOptions() []payoutv1.DepositOption {
	pairs := []struct {
		token   payoutv1.Token
		network payoutv1.Network
	}{
		{payoutv1.TokenUSDC, payoutv1.NetworkBase},
		{payoutv1.TokenUSDC, payoutv1.NetworkEthereum},
		{payoutv1.TokenUSDC, payoutv1.NetworkPolygon},
		{payoutv1.TokenUSDC, payoutv1.NetworkArbitrum},
		{payoutv1.TokenUSDC, payoutv1.NetworkAvalanche},
		{payoutv1.TokenUSDC, payoutv1.NetworkSolana},
		{payoutv1.TokenUSDT, payoutv1.NetworkEthereum},
		{payoutv1.TokenUSDT, payoutv1.NetworkTron},
	}
	out := make([]payoutv1.DepositOption, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, payoutv1.DepositOption{
			ObjectMeta: metav1.ObjectMeta{Name: payoutv1.DepositOptionName(p.token, p.network)},
			Spec:       payoutv1.DepositOptionSpec{Token: p.token, Network: p.network, Enabled: true},
		})
	}
	return out
}

// EnsureDepositOptions creates the default options that do not exist yet; existing ones, and
// the operators' switches on them, are left alone.
func EnsureDepositOptions(ctx context.Context, c client.Client) error {
	for _, o := range DefaultDepositOptions() {
		if err := c.Create(ctx, &o); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	return nil
}
