// Package devchain runs the dev EVM chains of `make run` and of the Go tests: one anvil node per
// EVM network on a free loopback port, each with its own dev chain id and a block every second
// also without transactions, carrying 6-decimal USDC (all five networks) and USDT (ethereum) at
// fixed addresses, and two funded wallets (CONTRACT.md).
//
//	set, err := devchain.Start(ctx, devchain.Options{Anvil: "bin/anvil", Dir: ".dev/chains"})
//	defer set.Stop()
//	base := set.Chains[devchain.Base]
//	r, err := base.Transfer(ctx, set.FundedKey, devchain.USDC, to, big.NewInt(25_000_000)) // 25.00
//
// In a Go test, StartForTest starts the chains in a temp dir and stops them in tb.Cleanup; it
// finds anvil through $PAYOUT_ANVIL (set by make) or the checkout's bin/anvil (`make anvil`), and
// skips the test under -short (`make test-unit`).
//
// # Chains
//
// Every network gets a dev chain id of its own: 31337 (anvil's and Hardhat's local chain id)
// times 1,000,000 plus the network's mainnet chain id, e.g. 31337008453 for base. They are not
// the mainnet ids, so a transaction signed for a dev chain can never be replayed on a real
// chain (EIP-155 binds a signature to its chain id); they are distinct from each other and from
// the public test networks, and none was listed in ethereum-lists/chains when they were chosen.
// The mainnet id stays readable in the last six digits.
//
// # Accounts and tokens
//
// anvil's default mnemonic makes ten well-known accounts with 10,000 ETH each. Account 0
// deploys the tokens (nonce 0: USDC, nonce 1: USDT on ethereum), so their addresses are the same
// on every machine and on every run: USDC at 0x5FbDB2315678afecb367f032d93F642f64180aa3 on all
// five chains, USDT at 0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512 on ethereum. Account 1 is the
// funded key (PAYOUT_EVM_FUNDED_KEY): it holds at least MinBalance of every dev token on every
// chain. Account 2 is the refund wallet, from which the service sends refunds: gas and at least
// MinBalance of every token on every chain. Start mints MintAmount to a holder whose balance is
// below MinBalance, so a long-lived chain is topped up on the next start.
//
// # Helpers
//
// A Chain carries its ethclient and RPC client and, through the typed bindings of package
// token: BalanceOf, Decimals, Transfer (send an ERC-20 transfer and wait for its receipt),
// SendTransfer, NewTransfer (signed, not sent), WaitMined and TransferEvents. For reorg and
// confirmation tests: Mine (anvil_mine), Reorg (anvil_reorg: replace the last n blocks, placing
// signed transactions into the new ones), ReorgFrom (replace a given block and all after it),
// Snapshot and Revert (evm_snapshot, evm_revert).
//
// # Processes
//
// Each anvil runs in its own process group, so a terminal's Ctrl-C reaches only the parent,
// which stops the chains in order; it gets SIGTERM when the parent dies without stopping it.
// Set.PIDs lists the running nodes for a caller that records them to reap after a kill.
//
// # State and resume
//
// With Options.Dir set, each chain keeps its log and saved state in Dir/<network>/: anvil is run
// with --state, so it dumps its chain on a clean stop (SIGTERM, also when the parent dies) and
// the next Start resumes it. anvil 1.7.1 dumps the blocks, transactions and receipts with the
// state, so a resumed chain keeps its genesis hash, the hashes of its blocks, its receipts and
// its logs, and continues on top of its last block: the chain a deposit watcher saw is the one
// it sees after a restart. Two things need help: anvil adds a new genesis block to the saved
// ones at every load, and from the second resume on eth_getBlockByNumber(0) can answer one that
// is not block 1's parent, so Start drops the extra genesis blocks from the saved state before
// loading it (repairState) and resumes only when block 0 is block 1's parent afterwards. And
// historical state is not kept: eth_call or eth_getBalance at a block before the restart
// answers "BlockOutOfRangeError". Measured with a 34 MB state (20,000 blocks): saving it on
// stop 0.2 s, resuming 1.6-1.8 s, repairing it 2.6 s more.
//
// anvil's genesis hash depends only on the genesis timestamp, not on the chain id: the chains of
// one Start share it. Start gives a fresh chain a genesis second later than that of the last
// fresh chain of the same network in the process (waiting up to a second), so a chain started
// from scratch never has the genesis hash of the one it replaces; key a chain by network and
// genesis hash.
//
// Start begins a fresh chain (with a new genesis hash) instead when there is no saved state,
// when anvil cannot load it, when it was made for another chain id or token bytecode, or when it
// has grown past MaxStateBytes (anvil's dump grows by about 1.7 KB per block: 64 MiB is about
// ten hours of blocks at one a second); leftovers never make Start fail. Deployment and funding
// are idempotent: a token whose code is at its address is not deployed again.
package devchain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/go-logr/logr"
)

// The EVM networks of CONTRACT.md.
const (
	Base      = "base"
	Ethereum  = "ethereum"
	Polygon   = "polygon"
	Arbitrum  = "arbitrum"
	Avalanche = "avalanche"
)

// Networks lists every EVM network, the default of Options.Networks.
var Networks = []string{Base, Ethereum, Polygon, Arbitrum, Avalanche}

// The dev tokens, keys of Chain.Tokens.
const (
	USDC = "usdc"
	USDT = "usdt"
)

// Decimals of every dev token.
const Decimals = 6

var (
	// MinBalance is the least a funded holder has of each of its tokens after Start: 1,000,000
	// tokens in base units.
	MinBalance = new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(1_000_000))
	// MintAmount is what Start mints to a holder below MinBalance: 1,000,000,000 tokens.
	MintAmount = new(big.Int).Mul(big.NewInt(1_000_000_000), big.NewInt(1_000_000))
)

// Confirmations is the confirmation depth the service waits for on the dev chains
// (PAYOUT_EVM_CONFIRMATIONS): 3 blocks, about 3 s at the default block time.
const Confirmations = 3

// MaxStateBytes bounds the saved state a chain resumes from; beyond it the chain starts fresh.
const MaxStateBytes = 64 << 20

// chainIDs are the dev chain ids: 31337 × 10⁶ + the network's mainnet chain id.
var chainIDs = map[string]uint64{
	Base:      31337_008453,
	Ethereum:  31337_000001,
	Polygon:   31337_000137,
	Arbitrum:  31337_042161,
	Avalanche: 31337_043114,
}

// ChainID returns the dev chain id of network, 0 for an unknown network.
func ChainID(network string) uint64 { return chainIDs[network] }

// tokensOf lists the tokens of a network in deployment order (the deployer's nonce order).
func tokensOf(network string) []string {
	if network == Ethereum {
		return []string{USDC, USDT}
	}
	return []string{USDC}
}

var tokenInfo = map[string]struct{ name, symbol string }{
	USDC: {"USD Coin", "USDC"},
	USDT: {"Tether USD", "USDT"},
}

// Private keys of anvil's default accounts 0, 1 and 2 (mnemonic "test test test test test test
// test test test test test junk"): public dev keys, never to be used on a real chain.
var (
	deployerKey = mustKey("ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
	fundedKey   = mustKey("59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d")
	refundKey   = mustKey("5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a")
)

func mustKey(h string) *ecdsa.PrivateKey {
	k, err := crypto.HexToECDSA(h)
	if err != nil {
		panic(err)
	}
	return k
}

// Options configure Start.
type Options struct {
	// Anvil is the path of the anvil binary.
	Anvil string
	// Dir holds each chain's log and saved state (Dir/<network>/); a chain resumes from what it
	// saved there. Empty: a temp dir that Stop removes, so nothing is resumed.
	Dir string
	// BlockTime is the interval at which each chain mines a block, with or without
	// transactions. Default 1 s.
	BlockTime time.Duration
	// Networks to start. Default: all of Networks.
	Networks []string
	// Log reports progress (start, resume or fresh start, deployments).
	Log logr.Logger
}

// Set is a running set of dev chains.
type Set struct {
	// Chains by network.
	Chains map[string]*Chain
	// FundedKey holds gas and at least MinBalance of every dev token on every chain.
	FundedKey *ecdsa.PrivateKey
	// RefundKey is the refund wallet: gas and at least MinBalance of every token on every chain.
	RefundKey *ecdsa.PrivateKey
	// Confirmations the service waits for on these chains.
	Confirmations int
	// BlockTime of every chain.
	BlockTime time.Duration

	tempDir  string
	stopOnce sync.Once
	stopErr  error
}

// Start starts the chains of o.Networks in parallel, deploys and funds the tokens where a chain
// lacks them, and returns once every chain answers. On error it stops what it started.
func Start(ctx context.Context, o Options) (*Set, error) {
	if o.Anvil == "" {
		return nil, errors.New("devchain: no anvil binary given (`make anvil` installs bin/anvil)")
	}
	if _, err := os.Stat(o.Anvil); err != nil {
		return nil, fmt.Errorf("devchain: anvil: %w (`make anvil` installs it)", err)
	}
	if o.BlockTime <= 0 {
		o.BlockTime = time.Second
	}
	if len(o.Networks) == 0 {
		o.Networks = Networks
	}
	s := &Set{
		Chains:        map[string]*Chain{},
		FundedKey:     fundedKey,
		RefundKey:     refundKey,
		Confirmations: Confirmations,
		BlockTime:     o.BlockTime,
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "devchain-")
		if err != nil {
			return nil, err
		}
		s.tempDir, o.Dir = dir, dir
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	o.Dir = dir
	for _, n := range o.Networks {
		if chainIDs[n] == 0 {
			s.Stop()
			return nil, fmt.Errorf("devchain: unknown network %q (known: %s)", n, strings.Join(Networks, ", "))
		}
		if s.Chains[n] != nil {
			s.Stop()
			return nil, fmt.Errorf("devchain: network %q given twice", n)
		}
		s.Chains[n] = &Chain{Network: n, ChainID: chainIDs[n], Tokens: map[string]common.Address{}}
	}

	var wg sync.WaitGroup
	errs := make([]error, len(o.Networks))
	for i, n := range o.Networks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Chains[n].start(ctx, o); err != nil {
				errs[i] = fmt.Errorf("devchain %s: %w", n, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop stops every chain (anvil saves its state on the way out) and waits for the processes
// to exit. It is safe to call more than once.
func (s *Set) Stop() error {
	s.stopOnce.Do(func() {
		var wg sync.WaitGroup
		errs := make([]error, 0, len(s.Chains))
		var mu sync.Mutex
		for _, c := range s.Chains {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.stop(); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("devchain %s: %w", c.Network, err))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if s.tempDir != "" {
			errs = append(errs, os.RemoveAll(s.tempDir))
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// PIDs returns the process ids of the running anvil nodes.
func (s *Set) PIDs() []int {
	var pids []int
	for _, n := range s.networks() {
		if pid := s.Chains[n].pid(); pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Env returns the PAYOUT_EVM_* variables of CONTRACT.md for these chains as NAME=value pairs:
// PAYOUT_EVM_RPC_<NETWORK>, PAYOUT_EVM_TOKEN_<NETWORK>_<TOKEN>, PAYOUT_EVM_FUNDED_KEY and
// PAYOUT_EVM_CONFIRMATIONS.
func (s *Set) Env() []string {
	var env []string
	for _, n := range s.networks() {
		c := s.Chains[n]
		env = append(env, "PAYOUT_EVM_RPC_"+strings.ToUpper(n)+"="+c.RPCURL)
		for _, t := range tokensOf(n) {
			env = append(env, "PAYOUT_EVM_TOKEN_"+strings.ToUpper(n)+"_"+strings.ToUpper(t)+"="+c.Tokens[t].Hex())
		}
	}
	return append(env,
		"PAYOUT_EVM_FUNDED_KEY="+hexutil.Encode(crypto.FromECDSA(s.FundedKey)),
		"PAYOUT_EVM_CONFIRMATIONS="+strconv.Itoa(s.Confirmations),
	)
}

// networks returns the set's networks in the order of Networks.
func (s *Set) networks() []string {
	var ns []string
	for n := range s.Chains {
		ns = append(ns, n)
	}
	order := map[string]int{}
	for i, n := range Networks {
		order[n] = i
	}
	sort.Slice(ns, func(i, j int) bool { return order[ns[i]] < order[ns[j]] })
	return ns
}

// chainDir is where a chain keeps its log and state.
func chainDir(dir, network string) string { return filepath.Join(dir, network) }
