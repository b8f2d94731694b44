package apiserver

// The facade's access, least privilege, generated into config/rbac/facade/role.yaml (the
// facade's ServiceAccount; the controllers have a role of their own). It reads through the
// informer cache (get, list, watch) and writes only what its endpoints create or change: it
// never writes a status.
//
//   - recipients: create (POST), patch (PATCH retires the old one, DELETE deactivates), delete
//     (a replacement that lost a race is withdrawn);
//   - quotes: create; transfers: create, patch (a v2 transaction hash, a cancellation request),
//     delete (a transfer it just created, when its recipient was deleted during the create and
//     nothing else acted on it: the caller is told no transfer was created);
//   - claims: get (past the cache), list and watch (an account's claims counted against its cap),
//     create and delete (uniqueness of ids, customer_uuid, hashes;
//     a v2 wallet bound to another account is refused);
//   - no namespace: an account's is made by its controller (or kubectl payout account create);
//     a create in a namespace not made yet waits for it a few seconds;
//   - deposits: read (a v2 hash already credited is refused); chaincursors: read (a v2 transfer
//     records the head its network had reached).
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts;apikeys;wallets;blockedwallets;depositoptions;deposits;chaincursors,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recipients,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=quotes,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims,verbs=get;list;watch;create;delete
