package sweeper

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/chain/tron"
	"github.com/stablepay/payout-operator/internal/chain/tron/trontx"
)

// Tron is the Mover of a Tron network (docs/architecture.md, "Sweeping on Tron"). A deposit's
// key signs the TRC-20 transfer of its address's balance to the treasury itself, one
// transaction per deposit address (Tron has no way for another account to pay for it); the
// sweeper's energy wallet, which stakes TRX (Stake 2.0), first activates the address when it
// is not yet an account and delegates it the energy (and, when its free bandwidth is spent, the
// bandwidth) the transfer uses, and takes the delegation back once the sweep is at depth. So the
// transfer burns no TRX and the deposit address never holds any. Every transaction a node
// builds is decoded and checked before it is signed (tron.Check).
type Tron struct {
	network  payoutv1.Network
	node     *tron.Node
	tokens   map[payoutv1.Token][20]byte
	treasury [20]byte
	energy   *ecdsa.PrivateKey
	deposits *depositkey.Private
	depth    int64
	now      func() time.Time
}

var _ Mover = (*Tron)(nil)

// Tron's costs the sweeper plans with.
const (
	// TronTransferBytes bounds the bandwidth of a TRC-20 transfer (about 345 bytes signed).
	TronTransferBytes = 350
	// TronFeeLimit caps the TRX a sweep's transfer may burn (sun): with the energy delegated it
	// burns none, and the deposit address holds none to burn.
	TronFeeLimit = 30_000_000
	// tronEnergyMargin is added to the node's estimate of the transfer's energy (per cent).
	tronEnergyMargin = 10
)

// NewTron is the mover of a Tron network: node is its HTTP API, tokens its TRC-20 contracts
// (Base58Check), treasury the network's treasury, hexKey the energy wallet's key and depth the
// confirmations a sweep waits for.
func NewTron(network payoutv1.Network, node *tron.Node, tokens map[payoutv1.Token]string, treasury, hexKey string, deposits *depositkey.Private, depth int64) (*Tron, error) {
	key, err := crypto.HexToECDSA(strings.TrimPrefix(strings.TrimSpace(hexKey), "0x"))
	if err != nil {
		return nil, errors.New("the sweeper's gas key is not a hex secp256k1 private key")
	}
	to, err := chain.TronAddressBytes(treasury)
	if err != nil {
		return nil, fmt.Errorf("treasury %q: %w", treasury, err)
	}
	m := &Tron{network: network, node: node, tokens: map[payoutv1.Token][20]byte{}, treasury: to, energy: key, deposits: deposits, depth: depth, now: time.Now}
	for token, c := range tokens {
		if m.tokens[token], err = chain.TronAddressBytes(c); err != nil {
			return nil, fmt.Errorf("token %s %q: %w", token, c, err)
		}
	}
	return m, nil
}

// EnergyWallet is the energy wallet's account id.
func (m *Tron) EnergyWallet() [20]byte { return crypto.PubkeyToAddress(m.energy.PublicKey) }

// GasWallet is the energy wallet's address (Base58Check).
func (m *Tron) GasWallet(network payoutv1.Network) (string, bool) {
	return chain.TronAddress(m.EnergyWallet()), network == m.network
}

// MaxItems: a Tron transaction moves one deposit address's balance.
func (m *Tron) MaxItems(payoutv1.Network) int { return 1 }

// Prepare: nothing is deployed on Tron.
func (m *Tron) Prepare(_ context.Context, network payoutv1.Network, to string) (bool, error) {
	if network != m.network || !strings.EqualFold(to, chain.TronAddress(m.treasury)) {
		return false, fmt.Errorf("the Tron mover sweeps %s to %s, not %s to %s", m.network, chain.TronAddress(m.treasury), network, to)
	}
	return true, nil
}

// PendingNonce: Tron has no nonces; a transaction is unique by its reference block and
// expiration, and void after its expiration.
func (m *Tron) PendingNonce(context.Context, payoutv1.Network) (uint64, error) { return 0, nil }

// Sign readies the one item's address (activation, energy, bandwidth: each a transaction of the
// energy wallet, after which it answers ErrNotYet for a later pass to sign) and then has its key
// sign the transfer of the address's token balance to the treasury.
func (m *Tron) Sign(ctx context.Context, network payoutv1.Network, token payoutv1.Token, to string, items []Item, _ uint64) ([]byte, string, error) {
	contract, ok := m.tokens[token]
	switch {
	case network != m.network:
		return nil, "", fmt.Errorf("%s is not configured", network)
	case !ok:
		return nil, "", fmt.Errorf("token %s is not configured on %s", token, network)
	case !strings.EqualFold(to, chain.TronAddress(m.treasury)):
		return nil, "", fmt.Errorf("%s is not the treasury of %s", to, network)
	case len(items) != 1:
		return nil, "", fmt.Errorf("a Tron sweep moves one deposit address, not %d", len(items))
	}
	key, err := m.deposits.Key(items[0].Path)
	if err != nil {
		return nil, "", err
	}
	owner := crypto.PubkeyToAddress(key.PublicKey)
	if !strings.EqualFold(chain.TronAddress(owner), items[0].Address) {
		return nil, "", fmt.Errorf("the deposit key at %s is not the key of %s: not signed", items[0].Path, items[0].Address)
	}
	units, err := m.node.TokenBalance(ctx, contract, owner)
	if err != nil {
		return nil, "", err
	}
	if units.Sign() == 0 {
		return nil, "", fmt.Errorf("%s holds no %s: nothing to sign", items[0].Address, token)
	}
	if err := m.ready(ctx, owner, contract, units); err != nil {
		return nil, "", err
	}
	u, err := m.node.TriggerTransfer(ctx, owner, contract, m.treasury, units, TronFeeLimit)
	if err != nil {
		return nil, "", err
	}
	raw, err := u.Raw()
	if err != nil {
		return nil, "", err
	}
	if _, err := trontx.Check(raw, trontx.Expect{Type: trontx.TriggerSmartContract, Owner: owner, Contract: contract,
		Data: trontx.TransferData(m.treasury, units), MaxFeeLimit: TronFeeLimit}, m.now()); err != nil {
		return nil, "", fmt.Errorf("refused the node's transaction: %w", err)
	}
	return trontx.Sign(raw, key)
}

// ready makes sure owner can send the transfer without TRX: it is an account, and has the
// energy and bandwidth the transfer uses. Each missing one costs the energy wallet a
// transaction; the answer is then ErrNotYet, and a later pass reads the chain again (so a
// crash between the two sends at most a second delegation, which Finish takes back).
func (m *Tron) ready(ctx context.Context, owner, contract [20]byte, units *big.Int) error {
	acct, err := m.node.Account(ctx, owner)
	if err != nil {
		return err
	}
	if !acct.Exists {
		if err := m.send(ctx, trontx.Expect{Type: trontx.AccountCreateContract, Account: owner}); err != nil {
			return err
		}
		return fmt.Errorf("%w: activating %s", ErrNotYet, chain.TronAddress(owner))
	}
	need, err := m.node.EstimateTransfer(ctx, owner, contract, m.treasury, units)
	if err != nil {
		return err
	}
	need += need * tronEnergyMargin / 100
	res, err := m.node.Resources(ctx, owner)
	if err != nil {
		return err
	}
	var waiting []string
	if res.Energy() < need {
		if err := m.delegate(ctx, owner, trontx.Energy, need-res.Energy(), res); err != nil {
			return err
		}
		waiting = append(waiting, fmt.Sprintf("%d energy", need-res.Energy()))
	}
	if res.Bandwidth() < TronTransferBytes {
		if err := m.delegate(ctx, owner, trontx.Bandwidth, TronTransferBytes-max(res.NetLimit-res.NetUsed, 0), res); err != nil {
			return err
		}
		waiting = append(waiting, "bandwidth")
	}
	if len(waiting) > 0 {
		return fmt.Errorf("%w: delegated %s to %s", ErrNotYet, strings.Join(waiting, " and "), chain.TronAddress(owner))
	}
	return nil
}

func (m *Tron) delegate(ctx context.Context, to [20]byte, resource int, units int64, res tron.Resources) error {
	sun, err := res.StakeFor(resource, units)
	if err != nil {
		return err
	}
	return m.send(ctx, trontx.Expect{Type: trontx.DelegateResourceContract, Account: to, Resource: resource, Balance: sun})
}

// send has the node build the energy wallet's transaction e, checks it, signs and broadcasts it.
func (m *Tron) send(ctx context.Context, e trontx.Expect) error {
	e.Owner = m.EnergyWallet()
	var u tron.Unsigned
	var err error
	switch e.Type {
	case trontx.AccountCreateContract:
		u, err = m.node.CreateAccount(ctx, e.Owner, e.Account)
	default:
		u, err = m.node.Delegate(ctx, e.Type == trontx.UnDelegateResourceContract, e.Owner, e.Account, e.Resource, e.Balance)
	}
	if err != nil {
		return err
	}
	raw, err := u.Raw()
	if err != nil {
		return err
	}
	if _, err := trontx.Check(raw, e, m.now()); err != nil {
		return fmt.Errorf("refused the node's transaction: %w", err)
	}
	tx, _, err := trontx.Sign(raw, m.energy)
	if err != nil {
		return err
	}
	return m.node.Broadcast(ctx, tx)
}

// Finish takes back what the energy wallet delegated to the batch's addresses; it answers
// ErrNotYet until the chain shows nothing delegated there.
func (m *Tron) Finish(ctx context.Context, network payoutv1.Network, items []Item) error {
	sent := false
	for _, it := range items {
		key, err := m.deposits.Key(it.Path)
		if err != nil {
			return err
		}
		at := crypto.PubkeyToAddress(key.PublicKey)
		d, err := m.node.Delegated(ctx, m.EnergyWallet(), at)
		if err != nil {
			return err
		}
		for _, r := range []int{trontx.Energy, trontx.Bandwidth} {
			if d[r] <= 0 {
				continue
			}
			if err := m.send(ctx, trontx.Expect{Type: trontx.UnDelegateResourceContract, Account: at, Resource: r, Balance: d[r]}); err != nil {
				return err
			}
			sent = true
		}
	}
	if sent {
		return fmt.Errorf("%w: undelegating the resources of %d deposit address(es)", ErrNotYet, len(items))
	}
	return nil
}

// Broadcast sends the signed transaction. When the node refuses it and it can never be included
// (Expired), the answer is ErrExpired.
func (m *Tron) Broadcast(ctx context.Context, _ payoutv1.Network, tx []byte) error {
	err := m.node.Broadcast(ctx, tx)
	if err == nil {
		return nil
	}
	if gone, xerr := m.Expired(ctx, tx); xerr != nil {
		return errors.Join(err, xerr)
	} else if gone {
		return fmt.Errorf("%w: %w", ErrExpired, err)
	}
	return err
}

// Expired reports whether the signed transaction tx can never be included: its expiration is
// older than the latest solidified block, and the solidified chain does not have it. A block
// that could include it is no newer than its expiration, so it is solidified by then; nothing
// the full node's pool holds can change that.
func (m *Tron) Expired(ctx context.Context, tx []byte) (bool, error) {
	raw, _, err := trontx.RawOf(tx)
	if err != nil {
		return false, err
	}
	r, err := trontx.Decode(raw)
	if err != nil {
		return false, err
	}
	solid, err := m.node.NowBlock(ctx, true)
	if err != nil {
		return false, err
	}
	if !solid.Time.After(r.Expiration) {
		return false, nil
	}
	id := trontx.TxIDOf(raw)
	info, err := m.node.Info(ctx, common.Bytes2Hex(id[:]), true)
	if err != nil {
		return false, err
	}
	return info.ID == "", nil
}

// Receipt is what the node says of the transaction: its block, depth, result and the token
// transfers its log holds.
func (m *Tron) Receipt(ctx context.Context, network payoutv1.Network, hash string) (*chain.TxObservation, error) {
	info, err := m.node.Info(ctx, hash, false)
	if err != nil {
		return nil, err
	}
	obs := &chain.TxObservation{Network: network, TxHash: hash, Required: m.depth}
	if info.ID == "" || info.BlockNumber == 0 {
		return obs, nil
	}
	head, err := m.node.NowBlock(ctx, false)
	if err != nil {
		return nil, err
	}
	obs.Found, obs.Reverted, obs.BlockNumber = true, info.Failed(), info.BlockNumber
	obs.BlockTime = time.UnixMilli(info.BlockTimeStamp)
	obs.Confirmations = max(head.Number-info.BlockNumber+1, 0)
	if obs.Reverted {
		return obs, nil
	}
	byContract := map[[20]byte]payoutv1.Token{}
	for t, c := range m.tokens {
		byContract[c] = t
	}
	for _, l := range info.Log {
		var c [20]byte
		copy(c[:], common.FromHex(l.Address))
		token, ok := byContract[c]
		if !ok || len(l.Topics) != 3 || !strings.EqualFold(strings.TrimPrefix(l.Topics[0], "0x"), transferTopicHex) {
			continue
		}
		var from, to [20]byte
		copy(from[:], common.FromHex(l.Topics[1])[12:])
		copy(to[:], common.FromHex(l.Topics[2])[12:])
		obs.Transfers = append(obs.Transfers, chain.TokenTransfer{Token: token, From: chain.TronAddress(from), To: chain.TronAddress(to),
			Amount: new(big.Int).SetBytes(common.FromHex(l.Data))})
	}
	return obs, nil
}

var transferTopicHex = strings.TrimPrefix(crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)")).Hex(), "0x")

// Balances reads the treasury's balance of each token and the energy wallet's TRX; the third
// answer is how many sweeps the energy wallet's energy pays now.
func (m *Tron) Balances(ctx context.Context, network payoutv1.Network, _ string, _ int) (map[payoutv1.Token]*big.Int, *big.Int, float64, error) {
	if network != m.network {
		return nil, nil, 0, fmt.Errorf("%s is not configured", network)
	}
	out := map[payoutv1.Token]*big.Int{}
	for token, c := range m.tokens {
		b, err := m.node.TokenBalance(ctx, c, m.treasury)
		if err != nil {
			return nil, nil, 0, err
		}
		out[token] = b
	}
	acct, err := m.node.Account(ctx, m.EnergyWallet())
	if err != nil {
		return nil, nil, 0, err
	}
	res, err := m.node.Resources(ctx, m.EnergyWallet())
	if err != nil {
		return nil, nil, 0, err
	}
	// a sweep to an address that holds the token already uses about 65,000 energy, one to a
	// fresh address about twice that: count the dearer
	return out, big.NewInt(acct.Balance), float64(res.Energy()) / 130_000, nil
}
