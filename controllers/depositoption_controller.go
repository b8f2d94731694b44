package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=depositoptions,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=depositoptions/status,verbs=get;update;patch

// SetupDepositOptionController derives each option's availability: enabled by the operator and
// watched on a configured chain endpoint. watched reports whether deposits on a network can be
// detected by this deployment.
func SetupDepositOptionController(mgr ctrl.Manager, watched func(payoutv1.Network) bool) error {
	r := &statusReconciler[payoutv1.DepositOption, *payoutv1.DepositOption]{Client: mgr.GetClient(), observe: depositOptionObserver(watched)}
	return ctrl.NewControllerManagedBy(mgr).For(&payoutv1.DepositOption{}).Named("depositoption").Complete(r)
}

// depositOptionObserver derives an option's availability.
func depositOptionObserver(watched func(payoutv1.Network) bool) func(context.Context, *payoutv1.DepositOption) (readiness, error) {
	return func(_ context.Context, o *payoutv1.DepositOption) (readiness, error) {
		switch {
		case !o.Spec.Enabled:
			o.Status.Available = false
			return readiness{false, payoutv1.DepositOptionDisabledReason, "switched off by an operator"}, nil
		case !watched(o.Spec.Network):
			o.Status.Available = false
			return readiness{false, payoutv1.DepositOptionNoChainEndpointReason, "no chain endpoint is configured for " + string(o.Spec.Network)}, nil
		}
		o.Status.Available = true
		return readiness{true, payoutv1.DepositOptionAvailableReason, "deposits are detected on " + string(o.Spec.Network)}, nil
	}
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
