package transfer

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
)

// Ledger is a v1 transfer's deposits sorted into what pays it and what does not. Who paid is a
// fact of the chain, never the caller's word: only a deposit of the transfer's token, on its
// network, sent from its wallet_address (spec 4.10: "sends exactly amount from wallet_address")
// and mined before it expired counts toward its amount; the wallet's deposits add up, in chain
// order, until they reach the amount. Everything else is a stray deposit: never paid out,
// refundable once. A zero-value transfer log moves nothing and is ignored.
//
// Once the transfer's deposit is judged (complete, or stored as short at the end), the credited
// logs are the stored ones (status.deposit and its parts) and every other deposit is a stray:
// a deposit the controller sees late, even from an earlier block, never changes what was paid.
type Ledger struct {
	// Credited are the logs counted toward the amount, in chain order, with the units each
	// contributes; CreditedUnits is their sum, at most the transfer's amount.
	Credited      []Credit
	CreditedUnits decimal.Decimal
	// Complete: the credited logs reached the transfer's amount.
	Complete bool
	// Strays are the deposits that do not pay the transfer, with why.
	Strays []Stray
}

// Credit is a log counted toward a transfer's amount.
type Credit struct {
	Deposit *payoutv1.Deposit
	// Units credited: the whole log, but for the log that reached the amount.
	Units decimal.Decimal
}

// Stray is a deposit (or the excess of one) that does not pay the transfer.
type Stray struct {
	Ref    payoutv1.DepositRef
	Token  payoutv1.Token
	From   string
	Record string
	// Units of the stray: the whole log, or the excess above the amount of the log that
	// reached it.
	Units  decimal.Decimal
	Reason string
}

// StrayFacts is how a stray deposit is listed in the transfer's status.
func (s Stray) StrayFacts(t *payoutv1.Transfer) payoutv1.StrayDeposit {
	sd := payoutv1.StrayDeposit{TxHash: s.Ref.TxHash, LogIndex: s.Ref.LogIndex, Token: s.Token,
		Amount: s.Units.String(), From: s.From, Reason: truncate(s.Reason, 256)}
	if s.Ref.Network != t.Spec.SourceNetwork {
		sd.Network = s.Ref.Network
	}
	return sd
}

// SortDeposits sorts t's deposits into its ledger (see Ledger). It is pure and depends only on
// t's spec, the credited logs stored in its status and deps, so the controller, the refund
// tool and the archiver agree on what is owed.
func SortDeposits(t *payoutv1.Transfer, deps []payoutv1.Deposit) Ledger {
	l := Ledger{CreditedUnits: decimal.Zero}
	if t.Spec.Method != payoutv1.TransferV1 {
		return l
	}
	sorted := make([]*payoutv1.Deposit, 0, len(deps))
	seen := map[payoutv1.DepositRef]bool{}
	for i := range deps {
		// a log is recorded once (Deposit objects are named by it); a copy counts once here too
		if ref := refOf(&deps[i]); baseUnits(deps[i].Spec.Amount).IsPositive() && !seen[ref] {
			seen[ref] = true
			sorted = append(sorted, &deps[i])
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := &sorted[i].Spec, &sorted[j].Spec
		if a.BlockNumber != b.BlockNumber {
			return a.BlockNumber < b.BlockNumber
		}
		if a.LogIndex != b.LogIndex {
			return a.LogIndex < b.LogIndex
		}
		return a.Network < b.Network
	})
	expected := expectedUnits(t)
	stored := storedCredits(t)
	judged := stored != nil
	reached := judged && !sum(stored).LessThan(expected)
	ended := t.Status.Failure != nil
	for _, dep := range sorted {
		ref := refOf(dep)
		if judged {
			if units, ok := stored[ref]; ok {
				l.Credited = append(l.Credited, Credit{Deposit: dep, Units: units})
				l.CreditedUnits = l.CreditedUnits.Add(units)
				l.addExcess(dep, units)
				continue
			}
		}
		if why := strayReason(t, dep); why != "" {
			l.add(dep, baseUnits(dep.Spec.Amount), why)
			continue
		}
		switch {
		case reached || l.Complete:
			l.add(dep, baseUnits(dep.Spec.Amount), "it arrived after the transfer's amount was reached")
		case judged || ended:
			l.add(dep, baseUnits(dep.Spec.Amount), "it arrived after the transfer failed")
		default:
			units := decimal.Min(baseUnits(dep.Spec.Amount), expected.Sub(l.CreditedUnits))
			l.Credited = append(l.Credited, Credit{Deposit: dep, Units: units})
			l.CreditedUnits = l.CreditedUnits.Add(units)
			l.addExcess(dep, units)
			l.Complete = !l.CreditedUnits.LessThan(expected)
		}
	}
	if judged {
		l.Complete = reached
	}
	return l
}

func sum(m map[payoutv1.DepositRef]decimal.Decimal) decimal.Decimal {
	total := decimal.Zero
	for _, v := range m {
		total = total.Add(v)
	}
	return total
}

// strayReason says why a deposit can never pay t, or "" when it is the wallet's own payment.
func strayReason(t *payoutv1.Transfer, dep *payoutv1.Deposit) string {
	s := &dep.Spec
	switch {
	case s.Network != t.Spec.SourceNetwork:
		return fmt.Sprintf("it was sent on %s; the transfer takes %s on %s", s.Network, t.Spec.SourceToken, t.Spec.SourceNetwork)
	case s.Token != t.Spec.SourceToken:
		return fmt.Sprintf("it is %s; the transfer takes %s", s.Token, t.Spec.SourceToken)
	case !chain.SameSender(s.From, t.Spec.WalletAddress):
		return fmt.Sprintf("it was sent from %s, not from the transfer's wallet %s", s.From, t.Spec.WalletAddress)
	case t.Spec.ExpiresAt != nil && s.BlockTime.After(t.Spec.ExpiresAt.Time):
		return fmt.Sprintf("it was mined at %s, after the transfer expired at %s",
			s.BlockTime.UTC().Format(time.RFC3339), t.Spec.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return ""
}

func (l *Ledger) add(dep *payoutv1.Deposit, units decimal.Decimal, reason string) {
	l.Strays = append(l.Strays, Stray{Ref: refOf(dep), Token: dep.Spec.Token, From: dep.Spec.From, Record: dep.Name, Units: units, Reason: reason})
}

// addExcess records as a stray what a credited log moved beyond the units it was credited.
func (l *Ledger) addExcess(dep *payoutv1.Deposit, credited decimal.Decimal) {
	if excess := baseUnits(dep.Spec.Amount).Sub(credited); excess.IsPositive() {
		l.add(dep, excess, "overpayment above the transfer amount")
	}
}

// storedCredits are the logs a judged deposit credited, by log, with their units; nil while the
// deposit is not judged.
func storedCredits(t *payoutv1.Transfer) map[payoutv1.DepositRef]decimal.Decimal {
	dep := t.Status.Deposit
	if dep == nil || dep.ConfirmedAt == nil {
		return nil
	}
	out := map[payoutv1.DepositRef]decimal.Decimal{}
	if len(dep.Parts) == 0 {
		out[payoutv1.DepositRef{Network: dep.Network, TxHash: strings.ToLower(dep.TxHash), LogIndex: dep.LogIndex}] = baseUnits(dep.Amount)
		return out
	}
	for _, p := range dep.Parts {
		out[payoutv1.DepositRef{Network: dep.Network, TxHash: strings.ToLower(p.TxHash), LogIndex: p.LogIndex}] = baseUnits(p.Amount)
	}
	return out
}

func refOf(dep *payoutv1.Deposit) payoutv1.DepositRef {
	return payoutv1.DepositRef{Network: dep.Spec.Network, TxHash: strings.ToLower(dep.Spec.TxHash), LogIndex: dep.Spec.LogIndex}
}

// DepositFacts is the judged deposit of the credited logs: the first log's facts, with amount
// their sum and every log listed as a part when there are several.
func (l *Ledger) DepositFacts(now time.Time) *payoutv1.DepositFacts {
	if len(l.Credited) == 0 {
		return nil
	}
	first := l.Credited[0].Deposit
	f := factsOf(first, now)
	f.Amount = l.CreditedUnits.String()
	if len(l.Credited) > 1 {
		for _, c := range l.Credited {
			s := &c.Deposit.Spec
			f.Parts = append(f.Parts, payoutv1.DepositPart{TxHash: s.TxHash, LogIndex: s.LogIndex, Amount: c.Units.String(),
				BlockNumber: s.BlockNumber, Record: c.Deposit.Name})
		}
	}
	last := l.Credited[len(l.Credited)-1].Deposit.Spec
	if last.BlockNumber > f.BlockNumber {
		// the deposit was made when its last part was: that block is the one judged
		f.BlockNumber, f.BlockHash, f.Confirmations = last.BlockNumber, last.BlockHash, last.Confirmations
		bt := last.BlockTime
		f.BlockTime = &bt
	}
	return f
}

// Received is what has arrived toward a v1 transfer's amount so far, in token base units, and
// what it must reach (describe shows it while the transfer waits).
func Received(t *payoutv1.Transfer, deps []payoutv1.Deposit) (credited, expected decimal.Decimal) {
	l := SortDeposits(t, deps)
	return l.CreditedUnits, expectedUnits(t)
}
