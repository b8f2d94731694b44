package chain

import (
	"context"
	"math/big"
	"time"

	"k8s.io/apimachinery/pkg/types"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The chain side of the service talks to the rest through the types of this file: a watcher
// reports deposits to v1 deposit addresses (DepositObserved, through a DepositSink), and the
// transfer controller asks for a v2 transaction by its hash (TxLookup). Amounts are integers in
// the token's base units (6 decimals for USDC and USDT): no float touches them.

// DepositObserved is a token transfer to a watched deposit address, at confirmation depth.
type DepositObserved struct {
	Network  payoutv1.Network
	Token    payoutv1.Token
	Contract string
	// To is the deposit address, From the sender, each in the network's canonical spelling
	// (EVM: lower-case 0x hex; Solana and Tron: base58).
	To, From string
	Amount   *big.Int
	TxHash   string
	LogIndex int64
	// BlockNumber, BlockHash and BlockTime locate the block that holds the transaction.
	BlockNumber int64
	BlockHash   string
	BlockTime   time.Time
	// Confirmations the block had when observed; the including block counts as one.
	Confirmations int64
	// Transfer is the transfer whose deposit address To is.
	Transfer types.NamespacedName
}

// DepositSink records observed deposits. It returns nil only when every deposit is stored
// durably (or was stored before: recording is idempotent per network, tx hash and log index);
// a watcher advances its persisted cursor past a block only after that.
type DepositSink interface {
	RecordDeposits(ctx context.Context, deposits []DepositObserved) error
}

// AddressBook answers which transfer a deposit address belongs to. Watchers consult it for every
// token transfer they see, so it is an in-memory lookup.
type AddressBook interface {
	TransferFor(network payoutv1.Network, address string) (types.NamespacedName, bool)
}

// TokenTransfer is one transfer of a watched token inside a transaction.
type TokenTransfer struct {
	Token    payoutv1.Token
	Contract string
	From, To string
	Amount   *big.Int
	LogIndex int64
}

// TxObservation is what the chain says about a transaction hash.
type TxObservation struct {
	Network payoutv1.Network
	TxHash  string
	// Found is false while the node knows no receipt for the hash (not mined yet, never sent,
	// or dropped by a reorg); the other fields are then empty.
	Found bool
	// Reverted transactions moved nothing.
	Reverted    bool
	BlockNumber int64
	BlockHash   string
	BlockTime   time.Time
	// Confirmations of the including block now; Required is the network's depth.
	Confirmations, Required int64
	// Transfers of watched tokens in the transaction, in log order.
	Transfers []TokenTransfer
}

// AtDepth reports whether the transaction is mined, successful and at confirmation depth.
func (o *TxObservation) AtDepth() bool {
	return o != nil && o.Found && !o.Reverted && o.Required > 0 && o.Confirmations >= o.Required
}

// TxLookup fetches a transaction by hash on a network (v2 confirm-transfer verification).
type TxLookup interface {
	LookupTx(ctx context.Context, network payoutv1.Network, txHash string) (*TxObservation, error)
}
