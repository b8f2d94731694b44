package apiserver

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// claim reserves a globally unique key for holder: the API server's atomic create of a
// cluster-scoped object named after the key is the uniqueness check, on every replica at once.
// An AlreadyExists error means the key is taken.
func (s *Server) claim(ctx context.Context, kind payoutv1.ClaimKind, key string, holder payoutv1.ObjectRef) (*payoutv1.Claim, error) {
	c := payoutv1.NewClaim(kind, key, holder)
	return c, s.cfg.Client.Create(ctx, c)
}

// createOwned creates an object in the caller's account namespace. An account created a moment
// ago may not have its namespace yet (the account controller makes it); the facade then makes
// it itself, exactly as the controller would, rather than fail the caller's first request.
func (s *Server) createOwned(ctx context.Context, c *Caller, obj client.Object) error {
	err := s.cfg.Client.Create(ctx, obj)
	if !apierrors.IsNotFound(err) {
		return err
	}
	if err := tenancy.EnsureNamespace(ctx, s.cfg.Client, c.Account); err != nil {
		return err
	}
	return s.cfg.Client.Create(ctx, obj)
}

// createOutcome is what is known of a create that answered an error.
type createOutcome int

const (
	// createStored: the object is stored, as the create made it; only the answer was lost (a
	// timeout after etcd committed, or client-go's retry of such an answer meeting AlreadyExists).
	createStored createOutcome = iota
	// createTaken: another object holds the name, so this create never stored anything, nor will.
	createTaken
	// createRefused: the API server refused the create (a 4xx) and nothing holds the name.
	createRefused
	// createOpen: nothing is stored yet, but the create may still be: its answer (a timeout, a 5xx,
	// a lost connection) does not say that it was not carried out, and a request the API server
	// is still working on can commit after the read.
	createOpen
)

// settleCreate finds out what a create of obj that answered err did, by reading obj's key past
// the cache into got; ours tells whether got is the object this create made (a field that only
// the holder of the create's claim can have written). Only createRefused and createTaken let
// the caller give back what it claimed for the object: releasing a claim on an open or
// successful create would let its key be used twice.
func (s *Server) settleCreate(ctx context.Context, obj, got client.Object, err error, ours func() bool) createOutcome {
	// the request's context may be what ended the create
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	switch rerr := s.cfg.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), got); {
	case rerr == nil && ours():
		return createStored
	case rerr == nil:
		return createTaken
	case apierrors.IsNotFound(rerr) && refused(err):
		return createRefused
	default:
		if !apierrors.IsNotFound(rerr) {
			s.cfg.Log.Error(rerr, "reading back an object whose create failed", "object", client.ObjectKeyFromObject(obj).String(), "create error", err.Error())
		}
		return createOpen
	}
}

// refused reports whether the API server answered a write with a refusal, a 4xx status, which
// it gives before anything is stored. A timeout (504), another 5xx or a transport error leaves
// the outcome open.
func refused(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout
}

// release gives a claim back after its holder could not be created. Best effort: the claim
// controller releases claims whose holder never appears.
func (s *Server) release(ctx context.Context, c *payoutv1.Claim) {
	uid := c.UID
	if err := s.cfg.Client.Delete(ctx, c, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		s.cfg.Log.Error(err, "releasing a claim", "claim", c.Name)
	}
}

// awaitCached waits (briefly) until the informer cache holds obj as written or newer, so that a
// caller reading right after a write sees it: every read of the facade comes from the cache.
func (s *Server) awaitCached(ctx context.Context, obj client.Object) {
	want, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	s.awaitCache(ctx, obj, "catch up with a write", func(probe client.Object, err error) bool {
		// etcd resource versions increase; the watch cache relies on that too.
		got, perr := strconv.ParseUint(probe.GetResourceVersion(), 10, 64)
		return err == nil && perr == nil && got >= want
	})
}

// awaitGone waits (briefly) until the informer cache no longer holds obj, so that a caller
// listing right after a withdrawal does not see it.
func (s *Server) awaitGone(ctx context.Context, obj client.Object) {
	s.awaitCache(ctx, obj, "drop a deleted object", func(_ client.Object, err error) bool { return apierrors.IsNotFound(err) })
}

// awaitCache reads obj's key from the informer cache, backing off from 2 ms to 50 ms, until done
// accepts the read or 2 s have passed (then it logs that the cache did not do what).
func (s *Server) awaitCache(ctx context.Context, obj client.Object, what string, done func(probe client.Object, err error) bool) {
	probe := obj.DeepCopyObject().(client.Object)
	key := client.ObjectKeyFromObject(obj)
	pause := 2 * time.Millisecond
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if done(probe, s.cfg.Client.Get(ctx, key, probe)) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
	s.cfg.Log.Info("cache did not "+what+" within 2s", "object", key.String())
}

// checkWallet applies the KYC wallet rule (spec 4.5 rule 1): when the account requires KYC the
// wallet must be given, well-formed and verified for this account; a verification service
// that cannot answer fails closed. Without KYC a given wallet must still be well-formed.
func (s *Server) checkWallet(ctx context.Context, c *Caller, field, wallet string, given bool) error {
	if given && wallet != "" && !chain.IsEVMAddress(wallet) && !chain.IsSolanaAddress(wallet) {
		if errors.Is(chain.CheckEVMAddress(wallet), chain.ErrEVMChecksum) {
			return apierror.FieldErrorf(field, "%s", chain.ErrEVMChecksum)
		}
		return apierror.FieldErrorf(field, "must be an EVM address (0x and 40 hex digits) or a Solana address (base58, 32 to 44 characters)")
	}
	if !c.Account.Spec.KYCRequired {
		return nil
	}
	if wallet == "" {
		return apierror.FieldErrorf(field, "is required: this account requires a KYC-verified wallet")
	}
	ok, err := s.cfg.KYC.Verified(ctx, c.Account.Name, wallet)
	if err != nil {
		return err
	}
	if !ok {
		return apierror.Errorf(apierror.Forbidden, "%s: the wallet is not KYC-verified for this account", field)
	}
	return nil
}

// cancelOpenTransfers asks every transfer of rc's lineage that is still in progress to stop
// (spec 3.2: DELETE recipient) and counts the requests recorded. The transfers are listed past
// the cache, after the recipient's deactivation, so a transfer created a moment ago is found.
// Each request is written under the resourceVersion just read: when the transfer controller
// recorded the payout intent meanwhile, the write conflicts, the transfer is read again, and
// it is left to complete. The facade never writes a transfer's status.
func (s *Server) cancelOpenTransfers(ctx context.Context, rc *payoutv1.Recipient, message string) (int, error) {
	list := &payoutv1.TransferList{}
	if err := s.cfg.APIReader.List(ctx, list, client.InNamespace(rc.Namespace),
		client.MatchingLabels{payoutv1.RecipientLineageLabel: rc.Lineage()}); err != nil {
		return 0, err
	}
	cancelled := 0
	for i := range list.Items {
		ok, err := s.cancelTransfer(ctx, &list.Items[i], payoutv1.FailureRecipientDeleted, message)
		if err != nil {
			return cancelled, err
		}
		if ok {
			cancelled++
		}
	}
	return cancelled, nil
}

// cancelTransfer records a cancellation request on t unless it can no longer be stopped (its
// payout intent is recorded, it failed or completed, or it was cancelled before). It reports
// whether this call recorded the request.
func (s *Server) cancelTransfer(ctx context.Context, t *payoutv1.Transfer, reason payoutv1.FailureReason, message string) (bool, error) {
	cur := t.DeepCopy()
	recorded := false
	err := retryConflict(ctx, func() error {
		if !transfer.Cancellable(cur) {
			recorded = false
			return nil
		}
		next := cur.DeepCopy()
		next.Spec.Cancellation = &payoutv1.TransferCancellation{Reason: reason, Message: message, RequestedAt: metav1.NewTime(s.cfg.Clock.Now())}
		err := s.cfg.Client.Patch(ctx, next, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			if gerr := s.cfg.APIReader.Get(ctx, client.ObjectKeyFromObject(t), cur); gerr != nil {
				return gerr
			}
			return err
		}
		if err != nil {
			return err
		}
		recorded = true
		return nil
	})
	return recorded, err
}

// retryConflict runs fn again while it fails with a conflict, a bounded number of times with
// growing, jittered pauses: a hot object must not spin a request for ever.
func retryConflict(ctx context.Context, fn func() error) error {
	backoff := wait.Backoff{Steps: 6, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.5}
	err := retry.OnError(backoff, apierrors.IsConflict, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn()
	})
	if apierrors.IsConflict(err) {
		return apierror.Errorf(apierror.Unavailable, "the object is being changed by another request; retry shortly")
	}
	return err
}
