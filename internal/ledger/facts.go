package ledger

import (
	"math/big"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Facts are everything the ledger counts, whatever stored it (a live object or the archive).
type Facts struct {
	Deposits []Deposit
	Credits  []Credit
	Refunds  []Refund
	Sweeps   []Sweep
	Payouts  []Payout
	// Balances are the chain's token balances of deposit addresses, read at the report's Until;
	// nil when not read (the chain check is then skipped). An address the ledger expects to hold
	// tokens and Balances lacks reads as zero, unless its network is not in ChainNetworks.
	Balances map[Address]*big.Int
	// ChainNetworks are the networks whose balances were read (nil: every network).
	ChainNetworks map[string]bool
}

// Addresses are the deposit addresses the facts name (received or swept), sorted: those whose
// balances the chain check reads.
func (f Facts) Addresses() []Address {
	seen := map[Address]*held{}
	for _, d := range f.Deposits {
		if !d.Direct {
			seen[AddressKey(d.Network, d.Token, d.Address)] = nil
		}
	}
	for _, s := range f.Sweeps {
		seen[AddressKey(s.Network, s.Token, s.Address)] = nil
	}
	return sortedAddrs(seen)
}

// Flow is what one deposit address received and had swept, in base units, by every fact.
type Flow struct{ In, Out *big.Int }

// Flows are the Flow of each deposit address the facts name (those of Addresses).
func (f Facts) Flows() map[Address]Flow {
	out := map[Address]Flow{}
	at := func(a Address) Flow {
		if _, ok := out[a]; !ok {
			out[a] = Flow{In: new(big.Int), Out: new(big.Int)}
		}
		return out[a]
	}
	for _, d := range f.Deposits {
		if !d.Direct && d.Units != nil {
			fl := at(AddressKey(d.Network, d.Token, d.Address))
			fl.In.Add(fl.In, d.Units)
		}
	}
	for _, s := range f.Sweeps {
		if s.Units != nil {
			fl := at(AddressKey(s.Network, s.Token, s.Address))
			fl.Out.Add(fl.Out, s.Units)
		}
	}
	return out
}

// ToRead are the addresses of flows (Flows now) whose balances a chain check reads, sorted:
// those the ledger says hold tokens, and those with a deposit or a sweep since the previous
// check (before: its flows; nil, as for the first check after a start, reads every address).
// An address that held nothing by the ledger at the previous check, and has had no deposit or
// sweep since, holds nothing the ledger knows of: reading it again costs a call per address
// ever issued and checks nothing a fact changed. The ledger counts what it does not read as
// zero, which is what it says such an address holds (Build).
func ToRead(flows, before map[Address]Flow) []Address {
	read := map[Address]*held{}
	for a, fl := range flows {
		was, seen := before[a]
		if before == nil || !seen || fl.In.Cmp(fl.Out) != 0 || fl.In.Cmp(was.In) != 0 || fl.Out.Cmp(was.Out) != 0 {
			read[a] = nil
		}
	}
	return sortedAddrs(read)
}

// Address is a deposit address of one token on one network.
type Address struct {
	Network, Token string
	// Address as the chain writes it; EVM addresses are compared in lower case (AddressKey).
	Address string
}

// AddressKey is the address as the ledger compares it: an EVM (0x) address in lower case, any
// other (Tron's base58, Solana's) as it is, since their case is significant.
func AddressKey(network, token, address string) Address {
	if strings.HasPrefix(address, "0x") || strings.HasPrefix(address, "0X") {
		address = strings.ToLower(address)
	}
	return Address{Network: network, Token: token, Address: address}
}

// Log names one token transfer on chain.
type Log struct {
	Network string
	TxHash  string
	Index   int64
}

// LogOf is a log as the ledger compares it (hashes in lower case).
func LogOf(network, txHash string, index int64) Log {
	return Log{Network: network, TxHash: strings.ToLower(txHash), Index: index}
}

// Deposit is one token transfer that arrived at a deposit address (a Deposit object), or a v2
// transfer's confirmed deposit to the platform address (Direct).
type Deposit struct {
	Log
	Token string
	// Address received it; Transfer is the transfer the address (or the v2 hash) belongs to.
	Address  string
	Transfer string
	Units    *big.Int
	// At is the block's time.
	At time.Time
	// Direct: sent to the platform address (v2), never held at a deposit address.
	Direct bool
}

// Credit is what a transfer counted toward its amount from one log (its status.deposit): the
// whole log, or for the log that reached the amount only part of it (the rest is overpaid).
type Credit struct {
	Log
	Transfer string
	Units    *big.Int
	// At is when the deposit was confirmed: a credit is checked in the period it falls in.
	At time.Time
}

// Refund is money sent back to a sender and confirmed at depth, by the refund wallet.
type Refund struct {
	// Name of the Refund (the transfer id, or StrayRefundName): one per refunded deposit.
	Name     string
	Transfer string
	// Deposit is the stray deposit refunded; nil for the transfer's credited deposit.
	Deposit *Log
	// Network and Token it was sent in (a stray's own, or USDC on Base).
	Network, Token string
	Units          *big.Int
	TxHash         string
	ConfirmedAt    time.Time
}

// Sweep is tokens moved from a deposit address to the network's treasury, confirmed at depth
// (the sweeper's record of one deposit).
type Sweep struct {
	Network, Token string
	// Address swept (the deposit address).
	Address     string
	Units       *big.Int
	TxHash      string
	ConfirmedAt time.Time
}

// Payout is a transfer's fiat payout.
type Payout struct {
	Transfer string
	Currency string
	// State is where it stands at the provider, as its answer says.
	State payoutv1.PayoutState
	// Returned: the recipient's bank sent a completed payout back.
	Returned bool
	// AmountUSD is the amount the customer was asked to send; FeesUSD the fees the quote
	// charged out of it.
	AmountUSD, FeesUSD decimal.Decimal
	// Quoted is what the quote promised for AmountUSD (pricing.PayoutTarget); Paid what the
	// provider answered it pays (zero until it answers).
	Quoted, Paid decimal.Decimal
	// At is when the payout's intent was recorded.
	At time.Time
}

// Answered reports whether the provider took the payout (money went out, unless returned).
func (p Payout) Answered() bool {
	return p.State == payoutv1.PayoutAccepted || p.State == payoutv1.PayoutCompleted
}
