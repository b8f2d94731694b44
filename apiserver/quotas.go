package apiserver

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
)

// quota is one of an account's caps (payoutv1.Quotas).
type quota int

const (
	quotaOpenV1Transfers quota = iota
	quotaOpenV2Transfers
	quotaActiveRecipients
	quotaClaims
)

// quotaOfMethod is the cap on a method's open transfers.
func quotaOfMethod(m payoutv1.TransferMethod) quota {
	if m == payoutv1.TransferV2 {
		return quotaOpenV2Transfers
	}
	return quotaOpenV1Transfers
}

// what names a cap as its refusal does: the objects, and the setting that caps them.
func (q quota) what() (objects, setting string) {
	switch q {
	case quotaOpenV1Transfers:
		return "open v1 transfers", "maxOpenV1Transfers"
	case quotaOpenV2Transfers:
		return "open v2 transfers", "maxOpenV2Transfers"
	case quotaActiveRecipients:
		return "active recipients", "maxActiveRecipients"
	default:
		return "claims (customer_uuids, recipient ids and transaction hashes of its transfers and recipients not yet archived)", "maxClaims"
	}
}

func (q quota) limit(acct *payoutv1.PayoutAccount) int {
	l := acct.Spec.Quotas.Limits()
	switch q {
	case quotaOpenV1Transfers:
		return int(l.MaxOpenV1Transfers)
	case quotaOpenV2Transfers:
		return int(l.MaxOpenV2Transfers)
	case quotaActiveRecipients:
		return int(l.MaxActiveRecipients)
	default:
		return int(l.MaxClaims)
	}
}

// quotaRefusal is the answer to a create that would take an account holding held objects past
// its cap, nil below it. 403, not 429: the spec's 429 is a rate limit, retried after a pause
// with jitter, while a cap frees only when the account's objects end or are deleted, or an
// operator raises it; 403 is the spec's "not permitted" by the account's settings, as a
// transfer method the account is not provisioned for.
func quotaRefusal(q quota, held, limit int) error {
	if held < limit {
		return nil
	}
	objects, setting := q.what()
	return apierror.Errorf(apierror.Forbidden,
		"the account holds %d %s, its cap (quotas.%s is %d); end or delete some, or ask the operator to raise the cap",
		held, objects, setting, limit)
}

// quotaSlots counts, per account and cap, the creates this replica is making and its count
// (quotaTally) does not include yet. A create reserves a slot before it writes and frees it once
// the count includes its object (freeWhenCounted), so that two requests on one replica cannot
// both take an account's last place. Replicas do not see each other's slots: creates that run at the same moment on
// different replicas, within the cache's delay (milliseconds), can each take the last place, so
// an account can exceed a cap by at most the creates in flight on the other replicas at that
// moment (docs/api.md, "Quotas").
type quotaSlots struct {
	mu       sync.Mutex
	inFlight map[quotaSlot]int
}

type quotaSlot struct {
	namespace string
	q         quota
}

// reserve takes a place under cap q of the account for one create, counting what the informers
// have counted (quotaTally) and this replica's creates in flight; free gives it back.
func (s *Server) reserve(ctx context.Context, acct *payoutv1.PayoutAccount, q quota) (free func(), err error) {
	if err := s.stores.awaitSynced(ctx); err != nil {
		return nil, err
	}
	slots := &s.quotas
	key := quotaSlot{payoutv1.AccountNamespace(acct.Name), q}
	slots.mu.Lock()
	defer slots.mu.Unlock()
	if err := quotaRefusal(q, s.stores.held.count(key)+slots.inFlight[key], q.limit(acct)); err != nil {
		return nil, err
	}
	if slots.inFlight == nil {
		slots.inFlight = map[quotaSlot]int{}
	}
	slots.inFlight[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			slots.mu.Lock()
			defer slots.mu.Unlock()
			if slots.inFlight[key]--; slots.inFlight[key] <= 0 {
				delete(slots.inFlight, key)
			}
		})
	}, nil
}

// freeWhenCounted gives a create's place under its cap back (free) once the informers' count
// includes obj, the object the create made, or after awaitBook's bound: the count follows the
// cache a moment behind, and a place given back before it counts the object would let another
// create of the replica take it too.
func (s *Server) freeWhenCounted(ctx context.Context, obj client.Object, free func()) {
	s.stores.held.await(ctx, obj, false)
	free()
}

// reserveOpenTransfer reserves a place for one open transfer of method.
func (s *Server) reserveOpenTransfer(ctx context.Context, c *Caller, m payoutv1.TransferMethod) (func(), error) {
	return s.reserve(ctx, c.Account, quotaOfMethod(m))
}

// reserveActiveRecipient reserves a place for one active recipient.
func (s *Server) reserveActiveRecipient(ctx context.Context, c *Caller) (func(), error) {
	return s.reserve(ctx, c.Account, quotaActiveRecipients)
}
