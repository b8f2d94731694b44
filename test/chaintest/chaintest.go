// Package chaintest holds helpers shared by the chain side's tests against the dev chains
// (package devchain): the configuration of a dev chain and block-by-block mining control.
package chaintest

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	ethtypes "github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"k8s.io/apimachinery/pkg/types"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
)

// T is the part of testing.TB the helpers use (Ginkgo's GinkgoT() has it too).
type T interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// PlatformAddress is the v2 platform deposit address the tests configure (anvil account 5).
var PlatformAddress = common.HexToAddress("0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc")

// Network is the configuration of a dev chain with the given depth: its RPC URL, chain id,
// tokens (PlatformAddress as every token's v2 address), a short poll interval and heartbeat.
func Network(c *devchain.Chain, confirmations int64) config.Network {
	n := config.Network{
		RPC:           []string{c.RPCURL},
		ChainID:       int64(c.ChainID),
		Tokens:        map[payoutv1.Token]*config.Token{},
		Confirmations: config.Depth(confirmations),
		MaxBlockRange: 1000,
	}
	n.PollInterval.Duration = 100 * time.Millisecond
	n.HeartbeatInterval.Duration = time.Second
	for name, addr := range c.Tokens {
		n.Tokens[payoutv1.Token(name)] = &config.Token{Contract: addr.Hex(), PlatformAddress: PlatformAddress.Hex()}
	}
	return n.WithDefaults()
}

// ManualMining stops c's interval mining and automining: blocks are then made only by
// c.Mine, so a test controls depth block by block. Pending transactions go into the next
// mined block.
func ManualMining(tb T, c *devchain.Chain) {
	tb.Helper()
	ctx := context.Background()
	if err := c.RPC.CallContext(ctx, nil, "evm_setIntervalMining", 0); err != nil {
		tb.Fatal(err)
	}
	if err := c.RPC.CallContext(ctx, nil, "evm_setAutomine", false); err != nil {
		tb.Fatal(err)
	}
}

// Head is c's head block number.
func Head(tb T, c *devchain.Chain) int64 {
	tb.Helper()
	n, err := c.Client.BlockNumber(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return int64(n)
}

// Mine mines n blocks on c.
func Mine(tb T, c *devchain.Chain, n int) {
	tb.Helper()
	if err := c.Mine(context.Background(), n); err != nil {
		tb.Fatal(err)
	}
}

// Send sends amount base units of token from key to `to` and mines it into one new block
// (under ManualMining); it returns the transaction and the block number.
func Send(tb T, c *devchain.Chain, key *ecdsa.PrivateKey, token string, to common.Address, amount int64) (*ethtypes.Transaction, int64) {
	tb.Helper()
	ctx := context.Background()
	tx, err := c.SendTransfer(ctx, key, token, to, big.NewInt(amount))
	if err != nil {
		tb.Fatal(err)
	}
	Mine(tb, c, 1)
	r, err := c.WaitMined(ctx, tx.Hash())
	if err != nil {
		tb.Fatal(err)
	}
	if r.Status != ethtypes.ReceiptStatusSuccessful {
		tb.Fatalf("transfer %s reverted", tx.Hash())
	}
	return tx, r.BlockNumber.Int64()
}

// EmptyKey is a key with gas on every dev chain and no tokens (anvil account 3).
var EmptyKey, _ = crypto.HexToECDSA("7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6")

// Book is an in-memory chain.AddressBook for tests and benchmarks.
type Book struct {
	mu sync.RWMutex
	m  map[string]types.NamespacedName
}

// Add makes address (any case) the deposit address of transfer ns/name on network.
func (b *Book) Add(network payoutv1.Network, address string, tr types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]types.NamespacedName{}
	}
	b.m[string(network)+"/"+payoutv1.NormalizeWallet(address)] = tr
}

// TransferFor implements chain.AddressBook.
func (b *Book) TransferFor(network payoutv1.Network, address string) (types.NamespacedName, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	tr, ok := b.m[string(network)+"/"+payoutv1.NormalizeWallet(address)]
	return tr, ok
}
