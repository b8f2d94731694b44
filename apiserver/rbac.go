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
//   - claims: read (the account's cap on claims is counted from the cache; get past the cache)
//     and create (uniqueness of ids, customer_uuid, hashes; a v2 wallet bound to another account
//     is refused), and their status, where it asks for the release of a claim whose holder was
//     not made: never delete (a compromised facade could free a tx-hash claim of a live
//     transfer) nor patch (an owner reference to a missing object would have the garbage
//     collector delete it). The claim controller releases a claim only while its holder does
//     not hold the key;
//   - no namespace: an account's is made by its controller (or kubectl payout account create);
//     a create in a namespace not made yet waits for it a few seconds;
//   - deposits: read (a v2 hash already credited is refused); chaincursors: read (a v2 transfer
//     records the head its network had reached);
//   - apikeys: create and patch, for the dashboard's developer area (issue 28), which issues and
//     revokes the signed-in account's keys as kubectl payout apikey does (internal/admin).
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=apikeys,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts;wallets;blockedwallets;depositoptions;deposits;chaincursors,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recipients,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=quotes,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims/status,verbs=patch
