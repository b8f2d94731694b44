// Package recovery checks, at every start of the controllers, that the cluster's objects agree
// with the ledgers of record: the provider's payouts and the chain's refund transactions. An etcd
// restore (or a hand-deleted object) takes the objects back to an older state while the provider
// and the chains run on: a payout made after the snapshot is unknown to its restored transfer, a
// v2 hash confirmed after it is gone with its claim, a refund sent after it reads as never sent.
// The check rebuilds what the ledgers say (the claim binding each paid deposit to its transfer, a
// v2 transfer's confirmed hash), lists the rest, and keeps money from moving until an operator
// has redone what no ledger can tell (revocations, blocks, settings) and acknowledged
// (`kubectl payout recover --resume`).
//
// Check is pure: the Checker (checker.go) reads the ledgers and the cluster, calls it, applies
// what it says and writes the Recovery object; the Gate answers the controllers whether money
// may move.
package recovery

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// Kinds of finding.
const (
	// LostTransfer: the provider paid a transfer that neither the cluster nor the archive knows
	// (it was created after the snapshot). Its customer_uuid is free again; the funds it was paid
	// from sit on its deposit address (v1) or the platform address (v2).
	LostTransfer = "LostTransfer"
	// PayoutUnrecorded: a transfer exists without the payout the provider made for it. The
	// transfer controller adopts the provider's payout before anything could fail or pay it.
	PayoutUnrecorded = "PayoutUnrecorded"
	// HashRestored: a v2 transfer restored without its confirmed hash, which the provider's
	// payout names: the hash is set again and claimed for it.
	HashRestored = "HashRestored"
	// DepositRebound: the claim binding a paid deposit log to its transfer was missing and is
	// made again from the provider's payout.
	DepositRebound = "DepositRebound"
	// RecordsStale: the Recovery object's heartbeat, which the leader writes every minute, is
	// older than the gap at a start: the cluster's records stop there (an etcd restore takes
	// them back to the snapshot), or payoutd stood still.
	RecordsStale = "RecordsStale"
	// DepositConflict: the provider's payout names a deposit log (or a v2 hash) that another
	// transfer holds.
	DepositConflict = "DepositConflict"
)

// Redo is what a restore takes back that no ledger tells: an operator redoes what was done after
// the cluster's newest record.
var Redo = []string{
	"API keys revoked after the newest record work again, and keys issued after it are gone: revoke again (kubectl payout apikey revoke), issue again",
	"wallets blocked (kubectl payout wallet block) or verified (kubectl payout wallet verify) after it are not: block or verify again",
	"accounts created or whose settings changed after it are as they were: create or change them again",
	"recipients deleted or updated through the API after it are back as they were: tell the integrators, who delete or update them again",
	"transfers created after it are gone (the provider's payouts of such transfers are listed as " + LostTransfer + "): their deposits are on their addresses, recoverable with the deposit key",
}

// Input is what the Checker read.
type Input struct {
	// Since is the start of the window of the provider's payouts read.
	Since time.Time
	// Payouts are the provider's payouts made since Since.
	Payouts []*fiat.Payout
	// Transfers are the cluster's transfers, by id.
	Transfers map[string]*payoutv1.Transfer
	// Archived are the ids of Payouts' references that the archive holds.
	Archived map[string]bool
	// Holders are the holders ("namespace/name") of the claims that exist, by claim name
	// (payoutv1.ClaimName): the deposit claims and the v2 hash claims.
	Holders map[string]string
}

// Binding is a claim to make: a deposit log or a v2 hash that a provider's payout shows paid.
// A lost transfer's claim (Holder.Namespace "") is kept for ever: nothing else may be paid from
// money that was paid out already.
type Binding struct {
	Kind   payoutv1.ClaimKind
	Key    string
	Holder payoutv1.ObjectRef
	// ProviderID is the provider's payout that shows the binding.
	ProviderID string
}

// Name is the claim's object name.
func (b Binding) Name() string { return payoutv1.ClaimName(b.Kind, b.Key) }

// Rehash is a v2 transfer's confirmed hash to set again.
type Rehash struct {
	Transfer types.NamespacedName
	TxHash   string
}

// Report is what Check found and what to do.
type Report struct {
	Findings []payoutv1.RecoveryFinding
	Bind     []Binding
	Rehash   []Rehash
}

// Required reports whether the cluster was behind the ledgers: money waits for an operator.
func (r Report) Required() bool { return len(r.Findings) > 0 }

// Check compares the cluster with the ledgers.
func Check(in Input) Report {
	var r Report
	payouts := append([]*fiat.Payout(nil), in.Payouts...)
	sort.SliceStable(payouts, func(i, j int) bool { return payouts[i].Reference < payouts[j].Reference })
	for _, p := range payouts {
		if p.State == fiat.StateRejected {
			continue // no money went out
		}
		logs, _ := transfer.ParseSourceOfFunds(p.SourceOfFunds)
		t := in.Transfers[p.Reference]
		if t == nil {
			if in.Archived[p.Reference] {
				continue // finished and archived: the archive holds its hash
			}
			r.add(LostTransfer, p.Reference, "the provider made payout %s (%s %s) for transfer %s, which this cluster and its archive do not know: it was created after the newest record",
				p.ProviderID, p.TargetAmount, p.TargetCurrency, p.Reference)
			// its v2 deposit (the platform address is shared) must pay no other transfer
			r.bind(in, logs, payoutv1.ObjectRef{Name: p.Reference}, p, true)
			continue
		}
		if t.Status.Payout == nil {
			r.add(PayoutUnrecorded, t.Name, "the provider made payout %s (%s %s) for transfer %s, whose status does not record it: the transfer controller adopts it and never fails or pays it again",
				p.ProviderID, p.TargetAmount, p.TargetCurrency, t.Name)
		}
		if t.Spec.Method != payoutv1.TransferV2 {
			continue // a v1 deposit address is its transfer's alone
		}
		holder := payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name}
		if t.Spec.TxHash == "" && len(logs) > 0 {
			r.Rehash = append(r.Rehash, Rehash{Transfer: types.NamespacedName{Namespace: t.Namespace, Name: t.Name}, TxHash: logs[0].TxHash})
			r.add(HashRestored, t.Name, "v2 transfer %s lost its confirmed hash; the provider's payout %s names %s: it is set again", t.Name, p.ProviderID, logs[0].TxHash)
		}
		r.bind(in, logs, holder, p, true)
	}
	return r
}

// bind makes the claims of the deposit logs a payout names, and of their hash, for holder,
// unless they exist; a claim another transfer holds is a conflict.
func (r *Report) bind(in Input, logs []payoutv1.DepositRef, holder payoutv1.ObjectRef, p *fiat.Payout, hash bool) {
	var want []Binding
	for _, l := range logs {
		want = append(want, Binding{Kind: payoutv1.ClaimDeposit, Key: transfer.DepositClaimKey(l), Holder: holder, ProviderID: p.ProviderID})
	}
	if hash && len(logs) > 0 {
		key := payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, logs[0].TxHash)
		want = append(want, Binding{Kind: payoutv1.ClaimTxHash, Key: key, Holder: holder, ProviderID: p.ProviderID})
	}
	self := holder.Namespace + "/" + holder.Name
	for _, b := range want {
		switch h := in.Holders[b.Name()]; h {
		case self:
		case "":
			r.Bind = append(r.Bind, b)
			if b.Kind == payoutv1.ClaimDeposit {
				r.add(DepositRebound, holder.Name, "deposit %s paid transfer %s (payout %s): its claim is made again, so it pays no other transfer", b.Key, holder.Name, p.ProviderID)
			}
		default:
			r.add(DepositConflict, holder.Name, "%s %s paid transfer %s (payout %s), but %s holds it: look at both", b.Kind, b.Key, holder.Name, p.ProviderID, h)
		}
	}
}

func (r *Report) add(kind, subject, format string, args ...any) {
	r.Findings = append(r.Findings, payoutv1.RecoveryFinding{Kind: kind, Subject: truncate(subject, 128), Message: truncate(fmt.Sprintf(format, args...), 512)})
}

// Newest is the newest time the cluster's transfers hold: their creations and last status
// changes. After a restore it is about the snapshot's time.
func Newest(transfers map[string]*payoutv1.Transfer) time.Time {
	var newest time.Time
	for _, t := range transfers {
		for _, at := range []time.Time{t.CreationTimestamp.Time, updatedAt(t)} {
			if at.After(newest) {
				newest = at
			}
		}
	}
	return newest
}

func updatedAt(t *payoutv1.Transfer) time.Time {
	if t.Status.UpdatedAt != nil {
		return t.Status.UpdatedAt.Time
	}
	return time.Time{}
}
