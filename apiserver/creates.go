package apiserver

import (
	"context"
	"errors"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
)

// claim reserves a globally unique key for holder: the API server's atomic create of a
// cluster-scoped object named after the key is the uniqueness check, on every replica at once.
// An AlreadyExists error means the key is taken. The claim counts against the caller's account's
// cap on claims (a 403 past it).
func (s *Server) claim(ctx context.Context, c *Caller, kind payoutv1.ClaimKind, key string, holder payoutv1.ObjectRef) (*payoutv1.Claim, error) {
	free, err := s.reserve(ctx, c.Account, quotaClaims)
	if err != nil {
		return nil, err
	}
	// freed at once: the claim reaches the cache within the watch's delay, and until then a
	// create on this replica could take one place too many (docs/api.md, "Quotas")
	defer free()
	cl := payoutv1.NewClaim(kind, key, holder)
	return cl, s.cfg.Client.Create(ctx, cl)
}

// namespaceWait bounds how long a create waits for its account's namespace.
const namespaceWait = 5 * time.Second

// createOwned creates an object in the caller's account namespace. An account created a moment
// ago may not have its namespace yet: the account controller (or kubectl payout account
// create) makes it, never the facade, whose role creates no namespace (a compromised facade
// could otherwise make any). The create is tried again for s.namespaceWait, then answers 503.
// The wait bounds the pauses between tries, not a create under way: that runs on the request's
// context, as every create does, so that a slow API server's answer is not cut off here.
func (s *Server) createOwned(ctx context.Context, c *Caller, obj client.Object) error {
	deadline := time.Now().Add(s.namespaceWait)
	notYet := apierror.Errorf(apierror.Unavailable, "account %s is being set up (its namespace %s is not made yet): try again in a few seconds", c.Account.Name, c.Namespace())
	pause := 50 * time.Millisecond
	for {
		err := s.cfg.Client.Create(ctx, obj)
		if !apierrors.IsNotFound(err) {
			return err
		}
		// the namespace is not there, so nothing was stored: a 503 leaves nothing behind
		if time.Now().Add(pause).After(deadline) {
			return notYet
		}
		select {
		case <-ctx.Done():
			return notYet
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
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

// release asks for a claim back after its holder could not be created or does not take the key:
// the facade may not delete claims, so it sets the claim's status.releaseRequested and the claim
// controller deletes the claim once it has read that its holder does not hold the key. The key
// is free a moment later, not at once. The patch carries the claim's resourceVersion, so that it
// never marks another claim of the same key made after this one was gone. Best effort: the claim
// controller releases claims whose holder never appears.
func (s *Server) release(ctx context.Context, c *payoutv1.Claim) {
	marked := c.DeepCopy()
	marked.Status.ReleaseRequested = true
	err := s.cfg.Client.Status().Patch(ctx, marked, client.MergeFromWithOptions(c, client.MergeFromWithOptimisticLock{}))
	if client.IgnoreNotFound(err) != nil {
		s.cfg.Log.Error(err, "asking for the release of a claim", "claim", c.Name)
	}
}
