package apiserver

// The facade's access, least privilege: it reads through the cache (list, watch) and writes
// only what its endpoints create or change.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts;apikeys;wallets;blockedwallets;depositoptions,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recipients,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=quotes,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=quotes/status,verbs=update
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims,verbs=create;delete
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers/status,verbs=update
