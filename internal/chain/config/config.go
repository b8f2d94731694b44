// Package config is the chain side's configuration: per network, the RPC endpoints, chain id,
// token contracts and v2 platform addresses, confirmation depth and polling; the Base refund
// wallet; and where the deposit key material lives. It is read from a YAML or JSON file
// (config/samples/chains.yaml documents the format) and/or command-line flags.
//
// A network that is not configured is not watched: its deposit options read unavailable.
//
// # Kinds
//
// Each network has a kind, its node interface, fixed by its name: evm (arbitrum, avalanche,
// base, ethereum, polygon), solana and tron. The kind can be left out. The settings mean the same
// on every kind, with these differences:
//
//   - tron: Tron's Ethereum-compatible JSON-RPC (java-tron's /jsonrpc). chainID is what
//     eth_chainId answers there, the last 4 bytes of the genesis block id (mainnet 0x2b6653dc =
//     728126428, Nile 0xcd8690dc = 3448148188, Shasta 0x94a9059e = 2494104990). Token contracts
//     and platform addresses are Base58Check Tron addresses (T...). Confirmations default to
//     20: java-tron solidifies a block (makes it irreversible) once 19 of the 27 super
//     representatives have built on it; confirmations finalized follows java-tron's latest
//     solidified block instead. A tron treasury (Base58Check) also needs httpAPI, java-tron's
//     HTTP API, where the sweeper builds and sends its transactions; energyWallet optionally
//     pins the sweeper's key there (docs/operations/sweeper.md, "On Tron").
//   - solana: JSON-RPC of a Solana (agave) node. A token's contract is its mint and its
//     platformAddress the owner (wallet) address the fixed v2 deposits go to, both base58.
//     There is no chain id; genesisHash (optional) pins the cluster, as chainID does on EVM
//     chains (mainnet-beta 5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d). Depth is a
//     commitment, not a block count: commitment finalized (default) or confirmed, and
//     confirmations is derived from it (see SolanaFinalizedConfirmations); startBlock and
//     maxBlockRange do not apply.
//
// # Depth
//
// Each network's confirmations default to what its finality justifies (DefaultDepth, argued with
// sources in docs/chains.md): the node's finalized block on ethereum, polygon, arbitrum and base,
// one confirmation on avalanche, 20 on tron. The setting (or --chain-confirmations) overrides it
// with a count or the word finalized; the dev chains of `make run` and the tests set theirs.
//
// # Endpoints
//
// RPC URLs are https or wss; plain http and ws only to a loopback node (127.0.0.0/8, ::1,
// localhost), as a node's answers decide which deposits count and must not cross a network in
// clear. A node whose head stops advancing (stallAfter) while another endpoint's moves is failed
// over, as is one that lags a stall window behind another (package rpcfailover). With two or
// more endpoints, what credits money is asked again of a second one (package evm, crosscheck.go);
// an endpoint is listed once.
//
// # Tokens
//
// On EVM networks and Tron every token contract must answer decimals() with 6, and, when the
// optional codeHash is given, have that runtime code (keccak256 of eth_getCode): checked once
// before anything is credited or refunded on the network (evm.Chain.CheckTokens).
//
// For example:
//
//	networks:
//	  solana:
//	    rpc: [https://api.mainnet-beta.solana.com]
//	    genesisHash: 5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d
//	    commitment: finalized
//	    tokens:
//	      usdc: {contract: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v, platformAddress: <owner>}
//	  tron:
//	    rpc: [https://api.trongrid.io/jsonrpc]
//	    httpAPI: https://api.trongrid.io
//	    chainID: 728126428
//	    treasury: <Base58Check address>
//	    tokens:
//	      usdt: {contract: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t}
package config

import (
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
)

// Kind is the family of a network's node interface; every network has one, fixed by its name.
type Kind string

const (
	KindEVM    Kind = "evm"
	KindSolana Kind = "solana"
	KindTron   Kind = "tron"
)

// Defaults of a network's optional settings.
const (
	DefaultPollInterval      = 2 * time.Second
	DefaultMaxBlockRange     = 1000
	DefaultHeartbeatInterval = 5 * time.Second
	// DefaultTronConfirmations: one block past java-tron's solidification (19 of the 27 super
	// representatives on top of a block make it irreversible).
	DefaultTronConfirmations = 20
	// DefaultStallAfter is the shortest default stall window; the default is the longer of it and
	// StallPolls poll intervals.
	DefaultStallAfter = 30 * time.Second
	StallPolls        = 15
)

// Solana commitments a deposit can be required to reach (Solana's "Configuring State
// Commitment"; processed is not offered: a processed block can still be skipped).
const (
	CommitmentFinalized = "finalized"
	CommitmentConfirmed = "confirmed"
)

// Solana depth in confirmations, the unit of chain.TxObservation. A transaction's
// confirmations are the number of confirmed blocks on top of its block plus one, as
// getSignatureStatuses counts them; a finalized (rooted) one has at least
// SolanaFinalizedConfirmations, since a block is rooted once 31 confirmed blocks are built on it
// (Solana's tower lockout, MAX_LOCKOUT_HISTORY). So commitment finalized requires
// SolanaFinalizedConfirmations, commitment confirmed requires one.
const SolanaFinalizedConfirmations = 32

// Config is the whole chain configuration.
type Config struct {
	// Networks to watch, by name (base, ethereum, ...). Absent networks are not watched.
	Networks map[payoutv1.Network]*Network `json:"networks,omitempty"`
	// Refund is the wallet refunds are sent from (on Base, in USDC). Optional: without it Refund
	// objects wait with a message saying so.
	Refund *Refund `json:"refund,omitempty"`
	// DepositKey locates the extended keys v1 deposit addresses are derived from.
	DepositKey *DepositKey `json:"depositKey,omitempty"`
}

// Network is one chain's settings.
type Network struct {
	// Kind of node interface; default evm.
	Kind Kind `json:"kind,omitempty"`
	// RPC endpoints, tried in order: the next one is used while the current one fails.
	RPC []string `json:"rpc"`
	// ChainID the endpoints must report (eth_chainId); checked against each node before use.
	ChainID int64 `json:"chainID"`
	// Tokens accepted on this network, by token (usdc, usdt).
	Tokens map[payoutv1.Token]*Token `json:"tokens"`
	// Confirmations is the depth at which a deposit counts: a number of confirmations (a block
	// has one when it is the head, two when one block is on top of it, and so on), or finalized
	// (the node's finalized block). Default: DefaultDepth of the network.
	Confirmations Depth `json:"confirmations,omitempty"`
	// PollInterval between polls of the head. Default 2s.
	PollInterval metav1.Duration `json:"pollInterval,omitempty"`
	// StallAfter is how long the head may stay still before the node counts as stalled: another
	// endpoint's head is then read, and the node is failed over when that one is ahead. Default
	// the longer of 30s and 15 poll intervals.
	StallAfter metav1.Duration `json:"stallAfter,omitempty"`
	// HeartbeatInterval bounds how often the watcher writes its cursor when nothing else
	// changed. Default 5s.
	HeartbeatInterval metav1.Duration `json:"heartbeatInterval,omitempty"`
	// StartBlock is where a cursor that starts afresh (new, deleted, or taken on another chain)
	// begins at the latest: the watcher starts at the earlier of it and the block of the oldest
	// transfer it watches; with neither (no transfer yet), at the head.
	StartBlock *int64 `json:"startBlock,omitempty"`
	// MaxBlockRange is the largest block range of one log query. Default 1000.
	MaxBlockRange int64 `json:"maxBlockRange,omitempty"`
	// Commitment (solana only) a v2 transaction must reach to count: finalized (default) or
	// confirmed. It sets Confirmations.
	Commitment string `json:"commitment,omitempty"`
	// GenesisHash (solana only), when set, is the genesis hash every endpoint must report
	// (getGenesisHash) before it is used.
	GenesisHash string `json:"genesisHash,omitempty"`
	// Treasury (evm and tron) is the address the sweeper moves this network's v1 deposits to
	// (docs/operations/sweeper.md): 0x hex on EVM networks, Base58Check on tron. Without it the
	// network's deposits stay at their addresses.
	Treasury string `json:"treasury,omitempty"`
	// HTTPAPI (tron only) is the root URL of java-tron's HTTP API (a FullNode's port 8090, without
	// /wallet), where the sweeper builds, broadcasts and follows its transactions: the
	// Ethereum-compatible JSON-RPC sends none. Required with a treasury on tron.
	HTTPAPI string `json:"httpAPI,omitempty"`
	// EnergyWallet (tron only, optional) is the Base58Check address of the sweeper's gas key
	// (--sweeper-gas-key-file) on Tron: the account that stakes TRX for energy (Stake 2.0) and
	// delegates it to the deposit addresses it sweeps. When set, the sweeper refuses to start
	// with a key of another address.
	EnergyWallet string `json:"energyWallet,omitempty"`
}

// Token is one token contract on a network.
type Token struct {
	// Contract address of the token (6 decimals).
	Contract string `json:"contract"`
	// PlatformAddress is the fixed v2 deposit address for this token on this network; empty
	// when v2 transfers are not offered for it.
	PlatformAddress string `json:"platformAddress,omitempty"`
	// CodeHash, when set, is the keccak256 hash of the contract's runtime code (what eth_getCode
	// answers), 0x and 64 hex digits: checked before anything is credited, beside decimals(), so
	// that an address that is not the expected contract credits nothing. For a proxy (USDC's
	// FiatTokenProxy) it is the proxy's own code, which an upgrade of the implementation behind
	// it does not change. EVM and Tron only.
	CodeHash string `json:"codeHash,omitempty"`
}

// Refund is the platform wallet refunds are sent from.
type Refund struct {
	// Network refunds are sent on: base.
	Network payoutv1.Network `json:"network,omitempty"`
	// Token refunded: usdc.
	Token payoutv1.Token `json:"token,omitempty"`
	// Key is the hex private key of the wallet. It is read from a file or an environment
	// variable, never written in the configuration itself, and never logged.
	Key KeySource `json:"key"`
}

// DepositKey locates the BIP-32 extended keys of v1 deposit addresses: the public one (xpub)
// for whoever issues addresses, the private one (xprv) for the sweeper only.
type DepositKey struct {
	XPub KeySource  `json:"xpub"`
	XPrv *KeySource `json:"xprv,omitempty"`
}

// KeySource says where a secret is read from: exactly one of a file, an environment variable
// or a key of a Kubernetes Secret.
type KeySource struct {
	File   string     `json:"file,omitempty"`
	Env    string     `json:"env,omitempty"`
	Secret *SecretRef `json:"secret,omitempty"`
}

// SecretRef names a key of a Kubernetes Secret.
type SecretRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Key       string `json:"key"`
}

// String describes where the secret is, never the secret.
func (k KeySource) String() string {
	switch {
	case k.File != "":
		return "file " + k.File
	case k.Env != "":
		return "env " + k.Env
	case k.Secret != nil:
		return "secret " + k.Secret.Namespace + "/" + k.Secret.Name + "[" + k.Secret.Key + "]"
	}
	return "nowhere"
}

// ReadLocal reads a file or environment source; a Secret source needs a cluster client and is
// read by its user (depositkey.Load).
func (k KeySource) ReadLocal() (string, error) {
	switch {
	case k.File != "":
		b, err := os.ReadFile(k.File)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(b)), nil
	case k.Env != "":
		v, ok := os.LookupEnv(k.Env)
		if !ok || strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("environment variable %s is not set", k.Env)
		}
		return strings.TrimSpace(v), nil
	case k.Secret != nil:
		return "", errors.New("a Secret is read through the cluster, not locally")
	}
	return "", errors.New("no source configured")
}

// Load reads a configuration file (YAML or JSON). Unknown fields are errors, so that a typo
// does not silently leave a setting at its default.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse reads a configuration from YAML or JSON text.
func Parse(b []byte) (*Config, error) {
	c := &Config{}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Marshal writes c as YAML in the format Load reads (for `make run`, which builds the
// configuration of its dev chains in Go and hands payoutd the file).
func (c *Config) Marshal() ([]byte, error) { return yaml.Marshal(c) }

// WithDefaultsOf returns a copy of n, the settings of network name, with its kind and depth
// taken from the name when unset (KindOf, DefaultDepth) and its other unset optional settings
// at their defaults.
func (n Network) WithDefaultsOf(name payoutv1.Network) Network {
	if n.Kind == "" {
		n.Kind = KindOf(name)
	}
	if n.Confirmations == 0 && n.Kind != KindSolana {
		n.Confirmations = DefaultDepth(name)
	}
	return n.WithDefaults()
}

// WithDefaults returns a copy of n with its unset optional settings at their defaults. A
// network of unset kind is taken as evm here, and an unset depth is its kind's (the node's
// finalized block on evm, 20 on tron); WithDefaultsOf knows both from the name.
func (n Network) WithDefaults() Network {
	if n.Kind == "" {
		n.Kind = KindEVM
	}
	switch {
	case n.Kind == KindSolana:
		if n.Commitment == "" {
			n.Commitment = CommitmentFinalized
		}
		n.Confirmations = SolanaFinalizedConfirmations
		if n.Commitment == CommitmentConfirmed {
			n.Confirmations = 1
		}
	case n.Confirmations == 0 && n.Kind == KindTron:
		n.Confirmations = DefaultTronConfirmations
	case n.Confirmations == 0:
		n.Confirmations = Finalized
	}
	if n.PollInterval.Duration == 0 {
		n.PollInterval.Duration = DefaultPollInterval
	}
	if n.HeartbeatInterval.Duration == 0 {
		n.HeartbeatInterval.Duration = DefaultHeartbeatInterval
	}
	if n.StallAfter.Duration == 0 {
		n.StallAfter.Duration = max(DefaultStallAfter, StallPolls*n.PollInterval.Duration)
	}
	if n.MaxBlockRange == 0 && n.Kind != KindSolana {
		n.MaxBlockRange = DefaultMaxBlockRange
	}
	return n
}

// Network returns the settings of network with defaults applied (its kind from its name when
// unset), and whether it is configured.
func (c *Config) Network(name payoutv1.Network) (Network, bool) {
	if c == nil || c.Networks[name] == nil {
		return Network{}, false
	}
	return c.Networks[name].WithDefaultsOf(name), true
}

// KindOf is the kind of a known network (evm for unknown names).
func KindOf(name payoutv1.Network) Kind {
	if k, ok := knownNetworks[name]; ok {
		return k
	}
	return KindEVM
}

// Treasury is the treasury address of network in lower case (0x hex, or a Tron address's
// Base58Check lowered, as sweep batches record it: compare Tron addresses with EqualFold); ok is
// false when the network is not swept.
func (c *Config) Treasury(network payoutv1.Network) (string, bool) {
	n, ok := c.Networks[network]
	if !ok || n == nil || n.Treasury == "" {
		return "", false
	}
	return strings.ToLower(n.Treasury), true
}

// common0x reports whether a is the zero address (tokens sent there are burnt).
func common0x(a string) bool {
	return strings.Trim(strings.ToLower(strings.TrimPrefix(a, "0x")), "0") == ""
}

// PlatformAddress is the v2 fixed deposit address of token on network, lower-case 0x hex, and
// whether one is configured (the facade answers v2 creates with it; the transfer controller
// checks v2 transactions against it).
func (c *Config) PlatformAddress(network payoutv1.Network, token payoutv1.Token) (string, bool) {
	n, ok := c.Network(network)
	if !ok || n.Tokens[token] == nil || n.Tokens[token].PlatformAddress == "" {
		return "", false
	}
	return payoutv1.NormalizeWallet(n.Tokens[token].PlatformAddress), true
}

// NetworkNames lists the configured networks in name order.
func (c *Config) NetworkNames() []payoutv1.Network {
	if c == nil {
		return nil
	}
	out := make([]payoutv1.Network, 0, len(c.Networks))
	for n := range c.Networks {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// RefundSettings returns the refund wallet's settings with defaults (base, usdc), or false
// when no refund wallet is configured.
func (c *Config) RefundSettings() (Refund, bool) {
	if c == nil || c.Refund == nil {
		return Refund{}, false
	}
	r := *c.Refund
	if r.Network == "" {
		r.Network = payoutv1.NetworkBase
	}
	if r.Token == "" {
		r.Token = payoutv1.TokenUSDC
	}
	return r, true
}

var knownNetworks = map[payoutv1.Network]Kind{
	payoutv1.NetworkArbitrum:  KindEVM,
	payoutv1.NetworkAvalanche: KindEVM,
	payoutv1.NetworkBase:      KindEVM,
	payoutv1.NetworkEthereum:  KindEVM,
	payoutv1.NetworkPolygon:   KindEVM,
	payoutv1.NetworkSolana:    KindSolana,
	payoutv1.NetworkTron:      KindTron,
}

// Validate checks every setting and names the first bad ones by their path in the file
// (`networks.base.tokens.usdc.contract: "0x12" is not an EVM address`). All problems are
// reported together, one per line.
func (c *Config) Validate() error {
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
	}
	for _, name := range c.NetworkNames() {
		n := c.Networks[name]
		p := "networks." + string(name)
		want, known := knownNetworks[name]
		if !known {
			bad(p, "unknown network (known: arbitrum, avalanche, base, ethereum, polygon, solana, tron)")
			continue
		}
		if n == nil {
			bad(p, "empty network settings")
			continue
		}
		if n.Kind != "" && n.Kind != want {
			bad(p+".kind", "%q is not the kind of %s (%s)", n.Kind, name, want)
			continue
		}
		d, _ := c.Network(name)
		if len(n.RPC) == 0 {
			bad(p+".rpc", "at least one RPC endpoint is needed")
		}
		for i, u := range n.RPC {
			if err := checkURL(u); err != nil {
				bad(fmt.Sprintf("%s.rpc[%d]", p, i), "%s", err)
			}
			if j := slices.Index(n.RPC, u); j < i {
				// a second opinion must come from another endpoint (cross-checks, docs/chains.md)
				bad(fmt.Sprintf("%s.rpc[%d]", p, i), "the same endpoint as rpc[%d]", j)
			}
		}
		switch {
		case d.Kind == KindEVM && n.ChainID <= 0:
			bad(p+".chainID", "the chain id is required (a positive integer)")
		case d.Kind == KindTron && n.ChainID <= 0:
			bad(p+".chainID", "the chain id is required: what eth_chainId answers on the node (mainnet 728126428, i.e. 0x2b6653dc)")
		case d.Kind == KindSolana && n.ChainID != 0:
			bad(p+".chainID", "solana has no chain id; pin the cluster with genesisHash")
		}
		checkKindSettings(d.Kind, p, n, bad)
		if len(n.Tokens) == 0 {
			bad(p+".tokens", "at least one token (usdc, usdt) is needed")
		}
		for _, tok := range sortedTokens(n.Tokens) {
			t := n.Tokens[tok]
			tp := p + ".tokens." + string(tok)
			if tok != payoutv1.TokenUSDC && tok != payoutv1.TokenUSDT {
				bad(tp, "unknown token (known: usdc, usdt)")
				continue
			}
			if t == nil {
				bad(tp, "empty token settings")
				continue
			}
			check, what := addressCheck(d.Kind)
			if !check(t.Contract) {
				bad(tp+".contract", "%q is not %s", t.Contract, what)
			}
			if t.PlatformAddress != "" && !check(t.PlatformAddress) {
				bad(tp+".platformAddress", "%q is not %s", t.PlatformAddress, what)
			}
			switch {
			case t.CodeHash == "":
			case d.Kind == KindSolana:
				bad(tp+".codeHash", "solana mints have no code hash; only EVM and Tron contracts do")
			case !codeHash.MatchString(t.CodeHash):
				bad(tp+".codeHash", "%q is not a keccak256 hash (0x and 64 hex digits)", t.CodeHash)
			}
		}
		switch {
		case n.Treasury == "":
		case d.Kind == KindSolana:
			bad(p+".treasury", "solana deposits are v2 payments to the platform's address, which is the treasury: nothing is swept")
		case d.Kind == KindTron && !chain.IsTronAddress(n.Treasury):
			bad(p+".treasury", "%q is not a Tron address (Base58Check, 34 characters starting with T)", n.Treasury)
		case d.Kind == KindTron && n.HTTPAPI == "":
			bad(p+".httpAPI", "a tron treasury needs java-tron's HTTP API (the sweeper's transactions go there)")
		case d.Kind == KindEVM && (!chain.IsEVMAddress(n.Treasury) || common0x(n.Treasury)):
			bad(p+".treasury", "%q is not a non-zero EVM address", n.Treasury)
		}
		if n.HTTPAPI != "" || n.EnergyWallet != "" {
			switch {
			case d.Kind != KindTron:
				bad(p+".httpAPI", "only tron networks take httpAPI and energyWallet")
			case n.HTTPAPI != "" && checkURL(n.HTTPAPI) != nil:
				bad(p+".httpAPI", "%s", checkURL(n.HTTPAPI))
			case n.EnergyWallet != "" && !chain.IsTronAddress(n.EnergyWallet):
				bad(p+".energyWallet", "%q is not a Tron address (Base58Check, 34 characters starting with T)", n.EnergyWallet)
			}
		}
		if d.Kind != KindSolana && n.Confirmations < 0 && !n.Confirmations.IsFinalized() {
			bad(p+".confirmations", "%d: must be at least 1, or finalized", n.Confirmations)
		}
		if n.PollInterval.Duration < 0 || (n.PollInterval.Duration > 0 && n.PollInterval.Duration < 50*time.Millisecond) {
			bad(p+".pollInterval", "%s: must be at least 50ms", n.PollInterval.Duration)
		}
		if n.StallAfter.Duration < 0 || (n.StallAfter.Duration > 0 && n.StallAfter.Duration < 2*d.PollInterval.Duration) {
			bad(p+".stallAfter", "%s: must be at least two poll intervals (%s)", n.StallAfter.Duration, 2*d.PollInterval.Duration)
		}
		if n.HeartbeatInterval.Duration < 0 {
			bad(p+".heartbeatInterval", "%s: must be positive", n.HeartbeatInterval.Duration)
		}
		if d.Kind != KindSolana && n.StartBlock != nil && *n.StartBlock < 1 {
			bad(p+".startBlock", "%d: must be at least 1 (omit it to start at the oldest watched transfer's block, or the head)", *n.StartBlock)
		}
		if d.Kind != KindSolana && n.MaxBlockRange < 0 {
			bad(p+".maxBlockRange", "%d: must be at least 1", n.MaxBlockRange)
		}
	}
	if r, ok := c.RefundSettings(); ok {
		if r.Network != payoutv1.NetworkBase {
			bad("refund.network", "%q: refunds are sent on base", r.Network)
		} else if n, ok := c.Network(r.Network); !ok {
			bad("refund.network", "network %s is not configured", r.Network)
		} else if n.Tokens[r.Token] == nil {
			bad("refund.token", "token %s is not configured on %s", r.Token, r.Network)
		}
		if err := checkSource(c.Refund.Key, false); err != nil {
			bad("refund.key", "%s", err)
		}
	}
	if c.DepositKey != nil {
		if err := checkSource(c.DepositKey.XPub, true); err != nil {
			bad("depositKey.xpub", "%s", err)
		}
		if c.DepositKey.XPrv != nil {
			if err := checkSource(*c.DepositKey.XPrv, true); err != nil {
				bad("depositKey.xprv", "%s", err)
			}
		}
	}
	return errors.Join(errs...)
}

// codeHash is the form of a token's codeHash.
var codeHash = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)

// addressCheck is the address format of a kind's contracts and platform addresses, and its name
// for messages.
func addressCheck(k Kind) (func(string) bool, string) {
	switch k {
	case KindSolana:
		return chain.IsSolanaAddress, "a Solana address (base58 of 32 bytes)"
	case KindTron:
		return chain.IsTronAddress, "a Tron address (Base58Check, 34 characters starting with T)"
	}
	return chain.IsEVMAddress, "an EVM address"
}

// checkKindSettings refuses the settings a network's kind does not use: left in a file they
// would look as if they did something.
func checkKindSettings(k Kind, p string, n *Network, bad func(path, format string, args ...any)) {
	if k != KindSolana {
		if n.Commitment != "" {
			bad(p+".commitment", "only solana networks take a commitment; %s counts confirmations", k)
		}
		if n.GenesisHash != "" {
			bad(p+".genesisHash", "only solana networks take a genesis hash; %s is pinned by chainID", k)
		}
		return
	}
	switch n.Commitment {
	case "", CommitmentFinalized, CommitmentConfirmed:
	case "processed":
		bad(p+".commitment", "processed is not accepted: a processed block can still be skipped; use confirmed or finalized")
	default:
		bad(p+".commitment", "%q: must be confirmed or finalized", n.Commitment)
	}
	if n.GenesisHash != "" && !chain.IsSolanaAddress(n.GenesisHash) {
		bad(p+".genesisHash", "%q is not a base58 hash of 32 bytes", n.GenesisHash)
	}
	// confirmations follow from the commitment (WithDefaults writes them; a defaulted network
	// validates)
	sol := *n
	sol.Kind = KindSolana
	if d := sol.WithDefaults(); n.Confirmations != 0 && n.Confirmations != d.Confirmations {
		bad(p+".confirmations", "solana's depth is its commitment (confirmed or finalized), not a block count")
	}
	if n.StartBlock != nil {
		bad(p+".startBlock", "does not apply to solana: v2 transactions are looked up by signature")
	}
	if n.MaxBlockRange != 0 {
		bad(p+".maxBlockRange", "does not apply to solana: no log queries are made")
	}
}

func checkSource(k KeySource, secretAllowed bool) error {
	set := 0
	for _, ok := range []bool{k.File != "", k.Env != "", k.Secret != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		if secretAllowed {
			return errors.New("exactly one of file, env or secret is needed")
		}
		return errors.New("exactly one of file or env is needed")
	}
	if k.Secret != nil {
		if !secretAllowed {
			return errors.New("a Secret is not supported here; use file or env")
		}
		if k.Secret.Namespace == "" || k.Secret.Name == "" || k.Secret.Key == "" {
			return errors.New("secret needs namespace, name and key")
		}
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL", Redact(s))
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return fmt.Errorf("%q: the scheme must be http, https, ws or wss", Redact(s))
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", Redact(s))
	}
	if (u.Scheme == "http" || u.Scheme == "ws") && !IsLoopback(u.Hostname()) {
		// a node's answers decide which deposits are credited: in clear, anyone on the path
		// could invent one
		return fmt.Errorf("%q: plain %s is accepted only for a node on this machine (127.0.0.0/8, ::1, localhost); use %ss for a remote node",
			Redact(s), u.Scheme, u.Scheme)
	}
	return nil
}

// IsLoopback reports whether host (a URL's host name, without port or brackets) is this
// machine: localhost, or an address in 127.0.0.0/8 or ::1.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Redact shows an RPC URL without what may be a credential: user info, path and query are
// dropped (providers put API keys in the path), scheme and host stay.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}

func sortedTokens(m map[payoutv1.Token]*Token) []payoutv1.Token {
	out := make([]payoutv1.Token, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ChainIDBig is n's chain id as a big.Int.
func (n Network) ChainIDBig() *big.Int { return big.NewInt(n.ChainID) }
