package depositkey

import (
	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/chain/config"
)

// Addresses issues the deposit addresses of transfers: a v1 transfer's own, derived from the
// deployment's xpub, and the fixed v2 platform addresses of the chain configuration.
type Addresses struct {
	// Public derives v1 addresses; nil when no deposit key is configured (v1 transfers are then
	// refused with 503).
	Public *Public
	// Config holds the networks and their platform addresses.
	Config *config.Config
}

// V1Address is the deposit address of v1 transfer id on network and its derivation path: on an
// EVM network its 0x address, on tron the same key's Base58Check address (Public.DepositAddress).
// Solana takes no v1 transfers: its keys are not derived from the deposit key.
func (a Addresses) V1Address(network payoutv1.Network, id string) (string, string, error) {
	if a.Public == nil {
		return "", "", apierror.Errorf(apierror.Unavailable, "v1 deposit addresses cannot be issued: no deposit key is configured")
	}
	if n, ok := a.Config.Network(network); !ok || (n.Kind != config.KindEVM && n.Kind != config.KindTron) {
		return "", "", apierror.FieldErrorf("source_network", "v1 deposits are not taken on %s", network)
	}
	return a.Public.DepositAddress(network, id)
}

// V2Address is the fixed v2 deposit address of token on network, lower-case 0x hex.
func (a Addresses) V2Address(network payoutv1.Network, token payoutv1.Token) (string, bool) {
	if a.Config == nil {
		return "", false
	}
	n, ok := a.Config.Network(network)
	if !ok || n.Tokens[token] == nil || n.Tokens[token].PlatformAddress == "" {
		return "", false
	}
	return payoutv1.NormalizeWallet(n.Tokens[token].PlatformAddress), true
}
