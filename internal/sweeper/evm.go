package sweeper

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/chain/evm/sweep"
)

// EVM is the Mover of EVM networks: EIP-7702 batches (internal/chain/evm/sweep), one type-4
// transaction per batch from the gas wallet, carrying one authorization per deposit key that
// delegates the deposit address to the treasury's SweepDelegate. It holds the deposit master
// key and the gas wallet's key, and never prints either.
type EVM struct {
	chains   map[payoutv1.Network]*evm.Chain
	wallets  map[payoutv1.Network]*evm.Wallet
	gasKey   *ecdsa.PrivateKey
	deposits *depositkey.Private
}

// NewEVM is the mover of chains with the gas wallet of hexKey and the deposit key deposits.
func NewEVM(chains map[payoutv1.Network]*evm.Chain, hexKey string, deposits *depositkey.Private) (*EVM, error) {
	key, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(hexKey), "0x"))
	if err != nil {
		// the parse error could quote the key: say only that it is not one
		return nil, errors.New("the sweeper's gas key is not a hex secp256k1 private key")
	}
	m := &EVM{chains: chains, wallets: map[payoutv1.Network]*evm.Wallet{}, gasKey: key, deposits: deposits}
	for network, ch := range chains {
		// an evm.Wallet of the gas key gives its nonce, broadcast and receipts; its token is
		// only what it would send by SignTransfer, which the sweeper never calls
		for token := range ch.Config.Tokens {
			w, err := evm.NewWallet(ch, token, hexKey)
			if err != nil {
				return nil, err
			}
			m.wallets[network] = w
			break
		}
	}
	return m, nil
}

// GasWallet is the gas wallet's address on network.
func (m *EVM) GasWallet(network payoutv1.Network) (string, bool) {
	w, ok := m.wallets[network]
	if !ok {
		return "", false
	}
	return w.Address(), true
}

// PendingNonce is the gas wallet's next nonce on network, counting the node's pool.
func (m *EVM) PendingNonce(ctx context.Context, network payoutv1.Network) (uint64, error) {
	w, ok := m.wallets[network]
	if !ok {
		return 0, fmt.Errorf("%s is not configured", network)
	}
	return w.PendingNonce(ctx)
}

// Broadcast sends raw; a node that has the transaction already answers success.
func (m *EVM) Broadcast(ctx context.Context, network payoutv1.Network, raw []byte) error {
	w, ok := m.wallets[network]
	if !ok {
		return fmt.Errorf("%s is not configured", network)
	}
	return w.Broadcast(ctx, raw)
}

// Receipt is what network says of the transaction, with its depth and its token transfers.
func (m *EVM) Receipt(ctx context.Context, network payoutv1.Network, hash string) (*chain.TxObservation, error) {
	w, ok := m.wallets[network]
	if !ok {
		return nil, fmt.Errorf("%s is not configured", network)
	}
	return w.Receipt(ctx, hash)
}

// MaxItems: a batch transaction takes as many addresses as the policy allows.
func (m *EVM) MaxItems(payoutv1.Network) int { return 0 }

// Finish: an EIP-7702 batch leaves nothing to undo.
func (m *EVM) Finish(context.Context, payoutv1.Network, []Item) error { return nil }

// Prepare reports whether the treasury's SweepDelegate is deployed on network, and when it is
// not, sends its deployment (unless a transaction of the gas wallet is still pending, as that
// deployment may be). The sweeper calls it only while no batch of the network is open, so the
// deployment's nonce is never one a persisted batch transaction holds; deploying twice is
// harmless (the second creation fails).
func (m *EVM) Prepare(ctx context.Context, network payoutv1.Network, treasury string) (bool, error) {
	ch, ok := m.chains[network]
	if !ok {
		return false, fmt.Errorf("%s is not configured", network)
	}
	r := reader{ch.Client}
	at := common.HexToAddress(treasury)
	// The nonces first, the code after: a deployment mined between a code check and the nonce
	// reads would look absent with no transaction pending, and a second deployment would take
	// the next nonce (seen on a loaded machine: the batch then held nonce 2, not 1). Read in
	// this order, a deployment mined before the nonce reads has its code by the check, and one
	// not mined by then is pending.
	mined, err := r.NonceAt(ctx, crypto.PubkeyToAddress(m.gasKey.PublicKey), nil)
	if err != nil {
		return false, err
	}
	nonce, err := m.PendingNonce(ctx, network)
	if err != nil || mined < nonce {
		return false, err
	}
	if ok, err := sweep.Deployed(ctx, r, at); err != nil || ok {
		return ok, err
	}
	fees, err := m.fees(ctx, ch, sweep.DeployGas)
	if err != nil {
		return false, err
	}
	s, err := sweep.SignDeploy(ch.Config.ChainIDBig(), at, m.gasKey, nonce, fees)
	if err != nil {
		return false, err
	}
	if err := m.Broadcast(ctx, network, s.Raw); err != nil {
		return false, fmt.Errorf("deploying the sweep delegate of %s: %w", treasury, err)
	}
	return false, nil
}

// Sign signs one sweep transaction for items, checking first that each item's key derives its
// address (a deposit whose path does not lead to its address is never authorized) and that the
// gas wallet can pay the transaction at its fee cap.
func (m *EVM) Sign(ctx context.Context, network payoutv1.Network, token payoutv1.Token, to string, items []Item, nonce uint64) ([]byte, string, error) {
	ch, ok := m.chains[network]
	if !ok {
		return nil, "", fmt.Errorf("%s is not configured", network)
	}
	t := ch.Config.Tokens[token]
	if t == nil {
		return nil, "", fmt.Errorf("token %s is not configured on %s", token, network)
	}
	if err := ch.CheckTokens(ctx); err != nil {
		return nil, "", err
	}
	deps := make([]sweep.Deposit, len(items))
	addrs := make([]common.Address, len(items))
	for i, it := range items {
		key, err := m.deposits.Key(it.Path)
		if err != nil {
			return nil, "", err
		}
		addrs[i] = crypto.PubkeyToAddress(key.PublicKey)
		if !strings.EqualFold(addrs[i].Hex(), it.Address) {
			return nil, "", fmt.Errorf("the deposit key at %s is not the key of %s: not signed", it.Path, it.Address)
		}
		deps[i].Key = key
	}
	nonces, err := sweep.Nonces(ctx, reader{ch.Client}, addrs)
	if err != nil {
		return nil, "", err
	}
	for i := range deps {
		deps[i].Nonce = nonces[i]
	}
	gas := sweep.GasLimit(len(items))
	fees, err := m.fees(ctx, ch, gas)
	if err != nil {
		return nil, "", err
	}
	s, err := sweep.Sign(sweep.Batch{ChainID: ch.Config.ChainIDBig(), Token: common.HexToAddress(t.Contract), Treasury: common.HexToAddress(to),
		Deposits: deps, GasKey: m.gasKey, GasNonce: nonce, Fees: fees, Gas: gas})
	if err != nil {
		return nil, "", err
	}
	return s.Raw, strings.ToLower(s.Hash.Hex()), nil
}

// fees are the tip the node suggests and a fee cap of twice the latest base fee plus the tip
// (as refunds pay); the gas wallet must hold gas at that cap.
func (m *EVM) fees(ctx context.Context, ch *evm.Chain, gas uint64) (sweep.Fees, error) {
	f, bal, err := m.quote(ctx, ch)
	if err != nil {
		return sweep.Fees{}, err
	}
	if need := new(big.Int).Mul(f.FeeCap, new(big.Int).SetUint64(gas)); bal.Cmp(need) < 0 {
		return sweep.Fees{}, fmt.Errorf("%w: the sweeper's gas wallet %s holds %s wei, the transaction may need %s",
			evm.ErrInsufficientFunds, evm.Hex(crypto.PubkeyToAddress(m.gasKey.PublicKey)), bal, need)
	}
	return f, nil
}

// quote is the fees a transaction pays now and the gas wallet's balance.
func (m *EVM) quote(ctx context.Context, ch *evm.Chain) (sweep.Fees, *big.Int, error) {
	var tip, bal hexutil.Big
	var latest *evm.Header
	calls := []rpc.BatchElem{
		{Method: "eth_maxPriorityFeePerGas", Result: &tip},
		{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: &latest},
		{Method: "eth_getBalance", Args: []any{crypto.PubkeyToAddress(m.gasKey.PublicKey), "latest"}, Result: &bal},
	}
	if err := ch.Client.Batch(ctx, calls); err != nil {
		return sweep.Fees{}, nil, err
	}
	for _, c := range calls {
		if c.Error != nil {
			return sweep.Fees{}, nil, fmt.Errorf("%s: %w", c.Method, c.Error)
		}
	}
	if latest == nil || latest.BaseFee == nil {
		return sweep.Fees{}, nil, errors.New("the latest block has no base fee: only EIP-1559 chains are supported")
	}
	f := sweep.Fees{TipCap: tip.ToInt(), FeeCap: new(big.Int).Add(new(big.Int).Mul(latest.BaseFee.ToInt(), big.NewInt(2)), tip.ToInt())}
	return f, bal.ToInt(), nil
}

// Balances reads network's treasury balance of each configured token, the gas wallet's
// balance, and how many batches of maxItems addresses it pays at the current fee cap.
func (m *EVM) Balances(ctx context.Context, network payoutv1.Network, treasury string, maxItems int) (map[payoutv1.Token]*big.Int, *big.Int, float64, error) {
	ch, ok := m.chains[network]
	if !ok {
		return nil, nil, 0, fmt.Errorf("%s is not configured", network)
	}
	f, gas, err := m.quote(ctx, ch)
	if err != nil {
		return nil, nil, 0, err
	}
	out := map[payoutv1.Token]*big.Int{}
	for token := range ch.Config.Tokens {
		units, err := ch.TokenBalances(ctx, token, []string{treasury})
		if err != nil {
			return nil, nil, 0, err
		}
		out[token] = units[0]
	}
	batch := new(big.Int).Mul(f.FeeCap, new(big.Int).SetUint64(sweep.GasLimit(maxItems)))
	left, _ := new(big.Rat).SetFrac(gas, batch).Float64()
	return out, gas, left, nil
}

// reader reads code and nonces through the network's failover client (sweep.Reader).
type reader struct{ c *evm.Client }

func (r reader) CodeAt(ctx context.Context, a common.Address, _ *big.Int) ([]byte, error) {
	var code hexutil.Bytes
	if err := r.c.Call(ctx, &code, "eth_getCode", a, "latest"); err != nil {
		return nil, fmt.Errorf("eth_getCode: %w", err)
	}
	return code, nil
}

func (r reader) NonceAt(ctx context.Context, a common.Address, _ *big.Int) (uint64, error) {
	var n hexutil.Uint64
	if err := r.c.Call(ctx, &n, "eth_getTransactionCount", a, "latest"); err != nil {
		return 0, fmt.Errorf("eth_getTransactionCount: %w", err)
	}
	return uint64(n), nil
}
