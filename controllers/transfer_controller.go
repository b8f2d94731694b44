package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
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
//	get from the cache → gather what the chain, the recipient store, the account, the refunds
//	and the provider (about a stored payout intent) say, reading only → pay: do what
//	transfer.PayoutStep says about the stored intent and the provider's answer (follow it,
//	or create the payout: the one call that moves money) → decide (internal/transfer, pure;
//	when the decision asks for the payer's screening, screen and decide again) → write the
//	status with the optimistic lock → record events → perform the decision's side effects
//	(mail the stored outcome, delete the recipient, release or bind a claim) now that what
//	they act on is stored.
//
// The payout is created only from an intent read back from the API server, and the intent and
// a cancellation request exclude each other through the transfer's resourceVersion: a crash at
// any point pays nothing twice, and a cancelled transfer is never paid. No side effect runs
// before the status that decided it is stored: a conflict or a crash before the write performs
// nothing, and a retry after it performs the same again (each is idempotent).
type TransferReconciler struct {
	client.Client
	// APIReader reads past the cache where a stale read could lose money or mail twice: the
	// deposits of a transfer about to expire, a refund request before a claim is released, a
	// pending mail before it is sent.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// Provider pays fiat.
	Provider fiat.Provider
	// Notifier mails outcomes; nil disables mail (no outcome is stored to be mailed).
	Notifier Notifier
	// Chain looks up v2 transactions by hash.
	Chain chain.TxLookup
	// V2 gives the platform's fixed v2 deposit addresses.
	V2 V2Addresses
	// Screener screens the wallet that paid, at depth, before the payout; required (fail closed).
	Screener walletscreen.Screener
	// MatchTimeout is how long a confirmed v2 hash may stay unfound before the transfer fails
	// and releases it (transfer.DefaultMatchTimeout when 0).
	MatchTimeout time.Duration
	// MailRetry is how long to wait after a mail server could not be reached.
	MailRetry time.Duration
	// Gate says whether money may move: while it says no, no deposit is bound and no payout
	// created (the provider is still asked). nil: always.
	Gate Gate
}

// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=transfers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=deposits,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=refunds,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=recipients,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=chaincursors,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=blockedwallets,verbs=get;list;watch
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=claims,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *TransferReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &payoutv1.Transfer{}
	if err := r.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !t.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	in, asked, err := r.gather(ctx, t)
	if err != nil {
		return ctrl.Result{}, err
	}
	if asked != nil {
		if in.Provider, err = r.pay(ctx, t, *asked, in.Paused == ""); err != nil {
			return ctrl.Result{}, err
		}
	}
	d := transfer.Decide(*in)
	// The decision may ask for the payer's screening, then for the provider's word before a
	// failure: each is asked once, and the decision made again with the answer.
	for range 3 {
		switch {
		case d.Screen != "" && in.Screening == nil:
			in.Screening = r.screen(ctx, d.Screen)
		case d.AskProvider && in.ProviderBefore == nil:
			if in.ProviderBefore, err = r.askProvider(ctx, t); err != nil {
				return ctrl.Result{}, err // no failure without the provider's answer
			}
		case d.BindDeposit != nil && in.DepositHolder == "" && in.Paused == "":
			if in.DepositHolder, err = r.bindDeposit(ctx, t, *d.BindDeposit); err != nil {
				return ctrl.Result{}, err
			}
		default:
			continue
		}
		d = transfer.Decide(*in)
	}

	if transfer.StillDefault(t, &d.Status) && d.Waiting == "" {
		// a fresh v1 transfer: its defaulted status says all there is; writing its Ready condition
		// would cost every create a status patch (one that waits on the service says so, once)
		return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
	}
	before := t.DeepCopy()
	t.Status = d.Status
	setReady(t, d.Ready.Status, d.Ready.Reason, d.Ready.Message)
	setNeedsAttention(t)
	if err := patchStatus(ctx, r.Client, before, t); err != nil {
		if apierrors.IsConflict(err) {
			// Someone changed the transfer (a cancellation, a hash) since it was read: decide again
			// on the new version. Nothing was done on the old one.
			return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // an immediate retry
		}
		return ctrl.Result{}, err
	}
	metrics.TransferStatusChanged(before, t, r.Clock.Now())
	for _, e := range d.Events {
		r.Recorder.Eventf(t, nil, e.Type, e.Reason, "Transition", "%s", e.Message)
	}
	requeue, err := r.perform(ctx, t, d.Actions)
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: shortest(d.RequeueAfter, requeue)}, nil
}

// perform carries out the side effects of a decision whose status t is stored. Each is safe to
// repeat; it returns how soon to come back when one must be tried again (mail).
func (r *TransferReconciler) perform(ctx context.Context, t *payoutv1.Transfer, actions []transfer.Action) (time.Duration, error) {
	var mail []payoutv1.NotificationKind
	for _, a := range actions {
		switch a.Kind {
		case transfer.ActDeleteRecipient:
			if err := r.deleteRecipient(ctx, t.Namespace, a.RecipientID, t.Name); err != nil {
				return 0, fmt.Errorf("deleting recipient %d after the transfer ended: %w", a.RecipientID, err)
			}
		case transfer.ActReleaseHash:
			if err := r.releaseHash(ctx, t); err != nil {
				return 0, fmt.Errorf("releasing transaction hash %s: %w", t.Spec.TxHash, err)
			}
		case transfer.ActBindWallet:
			if err := r.bindWallet(ctx, t, a.Wallet); err != nil {
				return 0, fmt.Errorf("binding wallet %s to account %s: %w", a.Wallet, t.Spec.Account, err)
			}
		case transfer.ActNotify:
			mail = append(mail, a.Notification)
		}
	}
	if len(mail) == 0 || r.Notifier == nil {
		return 0, nil
	}
	return r.mail(ctx, t, mail)
}

// gather reads everything the decision needs, and what the provider holds under a stored payout
// intent when it is to be asked (asked; nil when not). It changes nothing, in the cluster or at
// the provider.
func (r *TransferReconciler) gather(ctx context.Context, t *payoutv1.Transfer) (*transfer.Input, *transfer.PayoutAnswer, error) {
	in := &transfer.Input{Transfer: t, Now: r.Clock.Now(), ProviderName: r.Provider.Name(), Mailing: r.Notifier != nil,
		MatchTimeout: r.MatchTimeout, ScreenSender: t.Spec.Method == payoutv1.TransferV1}
	if in.MatchTimeout == 0 {
		in.MatchTimeout = transfer.DefaultMatchTimeout
	}
	acct := &payoutv1.PayoutAccount{}
	switch err := r.Get(ctx, client.ObjectKey{Name: t.Spec.Account}, acct); {
	case err == nil:
		in.BindWallets = acct.Spec.BindWallets
		in.ScreenSender = in.ScreenSender || acct.Spec.V2WalletScreening
	case apierrors.IsNotFound(err):
		in.ScreenSender = true // no account to say otherwise: screen (fail closed)
	default:
		return nil, nil, err
	}
	if t.Spec.Method == payoutv1.TransferV1 {
		if err := r.gatherDeposits(ctx, t, in); err != nil {
			return nil, nil, err
		}
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
	if t.Spec.Method == payoutv1.TransferV2 {
		if err := r.gatherBindings(ctx, t, in); err != nil {
			return nil, nil, err
		}
		if refs := transfer.CreditedLogs(t); len(refs) > 0 {
			c := &payoutv1.Claim{}
			switch err := r.Get(ctx, client.ObjectKey{Name: payoutv1.ClaimName(payoutv1.ClaimDeposit, transfer.DepositClaimKey(refs[0]))}, c); {
			case err == nil:
				in.DepositHolder = c.Spec.Holder.Namespace + "/" + c.Spec.Holder.Name
			case !apierrors.IsNotFound(err):
				return nil, nil, err
			}
		}
	}
	rs, err := r.recipientState(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	in.Recipient = rs
	if err := r.gatherRefunds(ctx, t, in); err != nil {
		return nil, nil, err
	}
	if moves, why := moneyMoves(ctx, r.Gate); !moves {
		in.Paused = why
	}
	if !transfer.AskProvider(t, in.Now) {
		return in, nil, nil
	}
	asked, err := r.askPayout(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	return in, asked, nil
}

// gatherDeposits reads a v1 transfer's Deposit objects (on every network its address is
// watched on) and, once it is past its expiry on the clock, how far its network's watcher has
// scanned. When that scan has passed the expiry the deposits are read again from the API
// server: the watcher records a block's deposits before it moves its cursor past the block, but
// the cache may hold the cursor before the deposits, and an expiry decided on a stale list
// would fail a transfer whose deposit arrived in time.
func (r *TransferReconciler) gatherDeposits(ctx context.Context, t *payoutv1.Transfer, in *transfer.Input) error {
	deps := &payoutv1.DepositList{}
	byTransfer := []client.ListOption{client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: t.Name}}
	if err := r.List(ctx, deps, byTransfer...); err != nil {
		return err
	}
	in.Deposits = deps.Items
	st := &t.Status
	if t.Spec.ExpiresAt == nil || in.Now.Before(t.Spec.ExpiresAt.Time) || st.Deposit != nil || st.Failure != nil {
		return nil
	}
	cur := &payoutv1.ChainCursor{}
	switch err := r.Get(ctx, client.ObjectKey{Name: string(t.Spec.SourceNetwork)}, cur); {
	case apierrors.IsNotFound(err):
		return nil // never scanned: the transfer waits
	case err != nil:
		return err
	}
	in.Cursor = transfer.ChainProgress{Known: true, Block: cur.Status.Block}
	if cur.Status.BlockTime != nil {
		in.Cursor.BlockTime = cur.Status.BlockTime.Time
	}
	if !in.Cursor.Passed(t.Spec.ExpiresAt.Time) || r.APIReader == nil {
		return nil
	}
	fresh := &payoutv1.DepositList{}
	if err := r.APIReader.List(ctx, fresh, byTransfer...); err != nil {
		return err
	}
	in.Deposits = fresh.Items
	return nil
}

// gatherBindings reads which accounts the senders of a v2 transfer's transaction, and of its
// deposit, are bound to (PayoutAccount bindWallets), and, for an account that binds wallets,
// whether the deposit's sender was proven for it.
func (r *TransferReconciler) gatherBindings(ctx context.Context, t *payoutv1.Transfer, in *transfer.Input) error {
	var senders []string
	if in.Tx != nil {
		for _, tt := range in.Tx.Transfers {
			senders = append(senders, tt.From)
		}
	}
	if dep := t.Status.Deposit; dep != nil {
		senders = append(senders, dep.From)
	}
	for _, s := range senders {
		key := chain.SenderKey(s)
		if _, seen := in.WalletBindings[key]; seen || key == "" {
			continue
		}
		c := &payoutv1.Claim{}
		err := r.Get(ctx, client.ObjectKey{Name: payoutv1.ClaimName(payoutv1.ClaimWalletBinding, payoutv1.NormalizeClaimKey(payoutv1.ClaimWalletBinding, key))}, c)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if in.WalletBindings == nil {
			in.WalletBindings = map[string]string{}
		}
		in.WalletBindings[key] = c.Spec.Holder.Namespace
	}
	if dep := t.Status.Deposit; dep != nil && in.BindWallets {
		proven, err := r.provenFor(ctx, t.Namespace, dep.From)
		if err != nil {
			return err
		}
		in.ProvenWallets = map[string]bool{chain.SenderKey(dep.From): proven}
	}
	return nil
}

// provenFor reports whether the owner of wallet proved control for the account of namespace on
// the wallet verification site: its Wallet record there holds a proof signed by the wallet.
func (r *TransferReconciler) provenFor(ctx context.Context, namespace, wallet string) (bool, error) {
	w := &payoutv1.Wallet{}
	switch err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: payoutv1.WalletName(wallet)}, w); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	p := w.Spec.Proof
	return p != nil && w.Spec.Address == payoutv1.NormalizeWallet(wallet) && payoutv1.NormalizeWallet(p.Signer) == w.Spec.Address, nil
}

// gatherRefunds reads the refund requests of the transfer: the one of its deposit, named after
// it, and those of its stray deposits, labelled with it.
func (r *TransferReconciler) gatherRefunds(ctx context.Context, t *payoutv1.Transfer, in *transfer.Input) error {
	rf := &payoutv1.Refund{}
	switch err := r.Get(ctx, client.ObjectKeyFromObject(t), rf); {
	case err == nil:
		in.Refund = rf
	case !apierrors.IsNotFound(err):
		return err
	}
	list := &payoutv1.RefundList{}
	if err := r.List(ctx, list, client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.RefundTransferLabel: t.Name}); err != nil {
		return err
	}
	for _, item := range list.Items {
		if item.Spec.Deposit != nil {
			in.StrayRefunds = append(in.StrayRefunds, item)
		}
	}
	return nil
}

// screen asks the risk service about the wallet that paid. Fail closed: an error is an answer
// of Unavailable, on which nothing is paid. A Tron sender is asked about under both its spellings.
func (r *TransferReconciler) screen(ctx context.Context, payer string) *transfer.Screening {
	sc := &transfer.Screening{Address: payer, Result: payoutv1.ScreeningCleared}
	if r.Screener == nil {
		sc.Result, sc.Message = payoutv1.ScreeningUnavailable, "no wallet-screening service is configured"
		return sc
	}
	for _, addr := range screenedForms(payer) {
		blocked, err := r.Screener.Blocked(ctx, addr)
		switch {
		case err != nil:
			sc.Result, sc.Message = payoutv1.ScreeningUnavailable, err.Error()
			return sc
		case blocked:
			sc.Result, sc.Message = payoutv1.ScreeningBlocked, "the wallet failed compliance screening"
			return sc
		}
	}
	return sc
}

// screenedForms are the spellings an address is screened under: as it is, and as its account
// key (a Tron sender's EVM-format body) when that differs.
func screenedForms(addr string) []string {
	forms := []string{addr}
	if k := chain.SenderKey(addr); !strings.EqualFold(k, addr) {
		forms = append(forms, k)
	}
	return forms
}

// releaseHash deletes the claim on t's v2 hash while t holds it, unless a refund of t was
// requested (the refund controller then holds the hash for the refund, read past the cache so
// that a refund just made is seen). The UID precondition deletes only the claim that was read.
func (r *TransferReconciler) releaseHash(ctx context.Context, t *payoutv1.Transfer) error {
	key := payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, t.Spec.TxHash)
	c := &payoutv1.Claim{}
	if err := r.Get(ctx, client.ObjectKey{Name: payoutv1.ClaimName(payoutv1.ClaimTxHash, key)}, c); err != nil {
		return client.IgnoreNotFound(err)
	}
	if c.Spec.Holder != (payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name}) {
		return nil
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	switch err := reader.Get(ctx, client.ObjectKeyFromObject(t), &payoutv1.Refund{}); {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}
	uid := c.UID
	err := r.Delete(ctx, c, client.Preconditions{UID: &uid})
	if apierrors.IsConflict(err) {
		return nil // another claim of the hash now: not ours to delete
	}
	return client.IgnoreNotFound(err)
}

// bindWallet binds the sender of a completed v2 transfer to its account, the wallet's owner
// having proved control for it (the decision's rule); when two accounts it was proven for both
// bind, the first binding made holds it (the API server's atomic create decides).
func (r *TransferReconciler) bindWallet(ctx context.Context, t *payoutv1.Transfer, wallet string) error {
	key := payoutv1.NormalizeClaimKey(payoutv1.ClaimWalletBinding, chain.SenderKey(wallet))
	c := &payoutv1.Claim{
		ObjectMeta: metav1.ObjectMeta{Name: payoutv1.ClaimName(payoutv1.ClaimWalletBinding, key),
			Finalizers: []string{payoutv1.ClaimBindingFinalizer}},
		Spec: payoutv1.ClaimSpec{Kind: payoutv1.ClaimWalletBinding, Key: key,
			Holder: payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Spec.Account}},
	}
	if err := r.Create(ctx, c); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// bindDeposit claims a v2 deposit log for t (the API server's atomic create), or reads which
// transfer holds it, past the cache; it returns the holder as "namespace/name".
func (r *TransferReconciler) bindDeposit(ctx context.Context, t *payoutv1.Transfer, ref payoutv1.DepositRef) (string, error) {
	key := transfer.DepositClaimKey(ref)
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	held, err := takeClaim(ctx, r.Client, reader, payoutv1.NewClaim(payoutv1.ClaimDeposit, key, payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name}))
	if err != nil {
		return "", fmt.Errorf("binding deposit %s to transfer %s: %w", key, t.Name, err)
	}
	return held.Namespace + "/" + held.Name, nil
}

// takeClaim creates c (the API server's atomic create takes its key) or, when the key is taken,
// reads who holds it past the cache (reader), and returns the holder.
func takeClaim(ctx context.Context, w client.Writer, reader client.Reader, c *payoutv1.Claim) (payoutv1.ObjectRef, error) {
	err := w.Create(ctx, c)
	if apierrors.IsAlreadyExists(err) {
		err = reader.Get(ctx, client.ObjectKeyFromObject(c), c)
	}
	return c.Spec.Holder, err
}

// askProvider asks the provider for a payout under t's reference before t may fail without a
// payout intent: the provider, not a status that a restore may have taken back, says whether the
// money already went out.
func (r *TransferReconciler) askProvider(ctx context.Context, t *payoutv1.Transfer) (*transfer.ProviderPayout, error) {
	p, err := r.Provider.Find(ctx, t.Name, t.CreationTimestamp.Time)
	if err != nil {
		return nil, fmt.Errorf("asking the provider about payout %s before failing the transfer: %w", t.Name, err)
	}
	if p == nil {
		return &transfer.ProviderPayout{Found: false}, nil
	}
	return providerView(p), nil
}

// askPayout reads what the provider holds under t's stored payout intent: by the id it gave the
// payout once it gave one (a lookup by reference may cost a search of every payout since the
// transfer's creation), by reference before, and by reference once more when it no longer knows
// the id. It changes nothing at the provider, and asks nothing about an intent that names
// another provider (PayoutStep refuses it).
func (r *TransferReconciler) askPayout(ctx context.Context, t *payoutv1.Transfer) (*transfer.PayoutAnswer, error) {
	stored := t.Status.Payout
	ans := &transfer.PayoutAnswer{Provider: r.Provider.Name(), ReturnWindow: r.Provider.ReturnWindow()}
	if stored.Provider != "" && stored.Provider != ans.Provider {
		return ans, nil
	}
	var p *fiat.Payout
	var err error
	if stored.ProviderID != "" {
		p, err = r.Provider.Get(ctx, stored.ProviderID)
	}
	if stored.ProviderID == "" || fiat.KindOf(err) == fiat.Inconsistent {
		// no id yet, or one the provider does not know (any more): ask by reference
		p, err = r.Provider.Find(ctx, stored.Reference, t.CreationTimestamp.Time)
	}
	if err != nil {
		return nil, fmt.Errorf("asking the provider about payout %s: %w", stored.Reference, err)
	}
	heard(ans, p)
	return ans, nil
}

// pay does what transfer.PayoutStep says about t's stored payout intent and the provider's
// answer, and returns the provider's word for Decide. It makes the one call of the controller
// that moves money, Provider.Create: only for an intent read back from the API server, under its
// reference (idempotent at the provider, so a crash after it is recovered by the next pass
// finding the payout), with a request rebuilt from the stored transfer alone. Create's answer
// goes through PayoutStep again; a payout the provider accepted is never created again.
func (r *TransferReconciler) pay(ctx context.Context, t *payoutv1.Transfer, ans transfer.PayoutAnswer, moneyMoves bool) (*transfer.ProviderPayout, error) {
	stored := t.Status.Payout
	step := transfer.PayoutStep(stored, ans, moneyMoves)
	if step.Kind == transfer.PayCreate {
		req, err := payoutRequest(t)
		if err != nil {
			return nil, reconcile.TerminalError(err)
		}
		p, err := r.Provider.Create(ctx, req)
		created := transfer.PayoutAnswer{Provider: ans.Provider, ReturnWindow: ans.ReturnWindow, Created: true}
		switch {
		case fiat.IsPermanent(err):
			// The provider refused the request itself: no payout exists or ever will.
			created.Refused, created.RefusedWhy = true, fiat.MessageOf(err)
		case err != nil:
			return nil, fmt.Errorf("creating payout %s at the provider: %w", stored.Reference, err)
		default:
			heard(&created, p)
		}
		step = transfer.PayoutStep(stored, created, moneyMoves)
	}
	if step.Kind == transfer.PayRefuse {
		return nil, reconcile.TerminalError(errors.New(step.Refuse))
	}
	return step.Provider, nil
}

// heard records in ans the payout p the provider answered with (nil: it holds none).
func heard(ans *transfer.PayoutAnswer, p *fiat.Payout) {
	if p != nil {
		ans.Payout, ans.Reference, ans.Unfunded = providerView(p), p.Reference, p.State == fiat.StatePending
	}
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
		TargetAmount: target, Rate: rate, SourceOfFunds: transfer.SourceOfFunds(t),
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
	next.Spec.Deletion = &payoutv1.RecipientDeletion{AfterTransfer: transferID}
	return r.Patch(ctx, next, client.MergeFromWithOptions(rc, client.MergeFromWithOptimisticLock{}))
}

// mail sends the outcomes stored as pending in t's status and records each as sent (or refused
// for good); it returns how long to wait before trying again when the mail server could not
// take one (the transfer never waits for mail). The pending records are read past the cache
// first, so that a mail already recorded as sent is not sent again from a stale copy; a resend
// after a crash between the send and its record carries the same Message-ID.
func (r *TransferReconciler) mail(ctx context.Context, t *payoutv1.Transfer, kinds []payoutv1.NotificationKind) (time.Duration, error) {
	cur := t
	if r.APIReader != nil {
		cur = &payoutv1.Transfer{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(t), cur); err != nil {
			return 0, client.IgnoreNotFound(err)
		}
	}
	next := cur.DeepCopy()
	var retry time.Duration
	for _, kind := range kinds {
		if !pendingMail(&next.Status, kind) {
			continue
		}
		id, err := r.Notifier.Notify(ctx, kind, next)
		switch {
		case err == nil:
			transfer.RecordNotification(&next.Status, kind, id, "", r.Clock.Now())
		case r.Notifier.Permanent(err):
			transfer.RecordNotification(&next.Status, kind, id, err.Error(), r.Clock.Now())
			r.Recorder.Eventf(t, nil, corev1.EventTypeWarning, "MailRefused", "Notify", "the %s e-mail to %s was refused for good: %v", kind, t.Spec.CustomerEmail, err)
		default:
			r.Recorder.Eventf(t, nil, corev1.EventTypeWarning, "MailDelayed", "Notify", "the %s e-mail to %s could not be sent yet: %v", kind, t.Spec.CustomerEmail, err)
			retry = r.MailRetry
		}
	}
	if err := patchStatus(ctx, r.Client, cur, next); err != nil {
		if apierrors.IsConflict(err) {
			return time.Millisecond, nil // recorded again on the next pass; the resend has the same Message-ID
		}
		return 0, err
	}
	return retry, nil
}

func pendingMail(st *payoutv1.TransferStatus, kind payoutv1.NotificationKind) bool {
	for _, n := range st.Notifications {
		if n.Kind == kind && n.State == payoutv1.NotificationPending {
			return true
		}
	}
	return false
}

// setNeedsAttention records the NeedsAttention condition that t's payout facts call for
// (transfer.Attention): a payout the provider lost, or one the recipient's bank returned.
func setNeedsAttention(t *payoutv1.Transfer) {
	if c, ok := transfer.Attention(t); ok {
		c.ObservedGeneration = t.Generation
		apimeta.SetStatusCondition(&t.Status.Conditions, c)
	}
}

// shortest is the shorter of two waits, 0 standing for none.
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
	if r.Screener == nil {
		return errors.New("transfer controller: a wallet screener is required (the payer is screened before every payout)")
	}
	byLabel := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if id := o.GetLabels()[payoutv1.DepositTransferLabel]; id != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: id}}}
		}
		return nil
	})
	// A refund names its transfer in spec.transfer (the refund of its deposit also by its name,
	// those of its stray deposits by StrayRefundName).
	ofRefund := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		rf, ok := o.(*payoutv1.Refund)
		if !ok || rf.Spec.Transfer == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: rf.Namespace, Name: rf.Spec.Transfer}}}
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
		Watches(&payoutv1.Refund{}, ofRefund).
		Watches(&payoutv1.Recipient{}, lineage).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)}).
		Named("transfer").
		Complete(r)
}
