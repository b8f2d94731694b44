package sweeper

import (
	"context"
	"fmt"
	"math/big"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
)

// ByNetwork is a Mover per network (the EVM mover for the EVM networks, a Tron mover for Tron):
// each call goes to its network's.
type ByNetwork map[payoutv1.Network]Mover

var _ Mover = ByNetwork(nil)

func (b ByNetwork) of(network payoutv1.Network) (Mover, error) {
	m, ok := b[network]
	if !ok {
		return nil, fmt.Errorf("%s is not configured", network)
	}
	return m, nil
}

func (b ByNetwork) Prepare(ctx context.Context, network payoutv1.Network, to string) (bool, error) {
	m, err := b.of(network)
	if err != nil {
		return false, err
	}
	return m.Prepare(ctx, network, to)
}

func (b ByNetwork) GasWallet(network payoutv1.Network) (string, bool) {
	m, err := b.of(network)
	if err != nil {
		return "", false
	}
	return m.GasWallet(network)
}

func (b ByNetwork) PendingNonce(ctx context.Context, network payoutv1.Network) (uint64, error) {
	m, err := b.of(network)
	if err != nil {
		return 0, err
	}
	return m.PendingNonce(ctx, network)
}

func (b ByNetwork) Sign(ctx context.Context, network payoutv1.Network, token payoutv1.Token, to string, items []Item, nonce uint64) ([]byte, string, error) {
	m, err := b.of(network)
	if err != nil {
		return nil, "", err
	}
	return m.Sign(ctx, network, token, to, items, nonce)
}

func (b ByNetwork) Broadcast(ctx context.Context, network payoutv1.Network, raw []byte) error {
	m, err := b.of(network)
	if err != nil {
		return err
	}
	return m.Broadcast(ctx, network, raw)
}

func (b ByNetwork) Balances(ctx context.Context, network payoutv1.Network, to string, maxItems int) (map[payoutv1.Token]*big.Int, *big.Int, float64, error) {
	m, err := b.of(network)
	if err != nil {
		return nil, nil, 0, err
	}
	return m.Balances(ctx, network, to, maxItems)
}

func (b ByNetwork) Receipt(ctx context.Context, network payoutv1.Network, hash string) (*chain.TxObservation, error) {
	m, err := b.of(network)
	if err != nil {
		return nil, err
	}
	return m.Receipt(ctx, network, hash)
}

func (b ByNetwork) MaxItems(network payoutv1.Network) int {
	m, err := b.of(network)
	if err != nil {
		return 0
	}
	return m.MaxItems(network)
}

func (b ByNetwork) Finish(ctx context.Context, network payoutv1.Network, items []Item) error {
	m, err := b.of(network)
	if err != nil {
		return err
	}
	return m.Finish(ctx, network, items)
}
