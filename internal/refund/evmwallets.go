package refund

import (
	"fmt"
	"slices"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/evm"
)

// EVMWallets are the refund key's wallets: one per token on every EVM network configured (Tron
// is read through an Ethereum-compatible interface, but its transactions are not Ethereum's, so
// the key does not send there). The refund of a failed transfer's deposit goes back on its
// network in its token, a stray deposit on its own network.
type EVMWallets struct {
	byNetwork map[payoutv1.Network]map[payoutv1.Token]*evm.Wallet
}

var _ Wallets = (*EVMWallets)(nil)

// NewEVMWallets reads the refund key of cfg's refund settings and opens its wallets on chains
// (the watchers' clients, by network). It returns nil and no error when no refund key is
// configured: refunds then wait, saying so.
func NewEVMWallets(cfg *config.Config, chains map[payoutv1.Network]*evm.Chain) (*EVMWallets, error) {
	r, ok := cfg.RefundSettings()
	if !ok {
		return nil, nil
	}
	if chains[r.Network] == nil {
		return nil, fmt.Errorf("refund: network %s is not configured", r.Network)
	}
	key, err := r.Key.ReadLocal()
	if err != nil {
		return nil, fmt.Errorf("refund key from %s: %w", r.Key, err)
	}
	out := &EVMWallets{byNetwork: map[payoutv1.Network]map[payoutv1.Token]*evm.Wallet{}}
	for name, ch := range chains {
		if n, ok := cfg.Network(name); !ok || n.Kind != config.KindEVM {
			continue
		}
		for token := range ch.Config.Tokens {
			w, err := evm.NewWallet(ch, token, key)
			if err != nil {
				return nil, err
			}
			if out.byNetwork[name] == nil {
				out.byNetwork[name] = map[payoutv1.Token]*evm.Wallet{}
			}
			out.byNetwork[name][token] = w
		}
	}
	return out, nil
}

// For implements Wallets.
func (r *EVMWallets) For(network payoutv1.Network, token payoutv1.Token) (Wallet, bool) {
	if r == nil {
		return nil, false
	}
	w, ok := r.byNetwork[network][token]
	if !ok {
		return nil, false
	}
	return w, true
}

// Networks lists the networks the refund key sends on.
func (r *EVMWallets) Networks() []payoutv1.Network {
	out := make([]payoutv1.Network, 0, len(r.byNetwork))
	for n := range r.byNetwork {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Address is the refund key's address (the same on every EVM network).
func (r *EVMWallets) Address() string {
	for _, tokens := range r.byNetwork {
		for _, w := range tokens {
			return w.Address()
		}
	}
	return ""
}
