package config

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// Flags are the command-line form of the configuration: a file, and settings that override or
// add to it. Bind them with BindFlags, parse, then call Config.
type Flags struct {
	File          string
	rpc           assignments
	chainID       assignments
	tokens        assignments
	platform      assignments
	codeHash      assignments
	confirmations assignments
	startBlock    assignments
	commitment    assignments
	genesis       assignments
	pollInterval  time.Duration
	stallAfter    time.Duration
	refundKeyFile string
	refundKeyEnv  string
	xpubFile      string
	xprvFile      string
}

// BindFlags registers the chain flags on fs.
func (f *Flags) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.File, "chains-config", "", "chain configuration file, YAML or JSON (format: config/samples/chains.yaml); the --chain-* flags override it")
	fs.Var(&f.rpc, "chain-rpc", "NETWORK=URL[,URL...]: RPC endpoints of a network, in failover order (repeatable)")
	fs.Var(&f.chainID, "chain-id", "NETWORK=ID: the chain id a network's endpoints must report (repeatable)")
	fs.Var(&f.tokens, "chain-token", "NETWORK.TOKEN=ADDRESS: a token contract, e.g. base.usdc=0x... (repeatable)")
	fs.Var(&f.platform, "chain-platform-address", "NETWORK.TOKEN=ADDRESS: the fixed v2 deposit address of a token (repeatable)")
	fs.Var(&f.codeHash, "chain-token-code-hash", "NETWORK.TOKEN=HASH: the keccak256 of a token contract's runtime code, checked before anything is credited (repeatable; default: not checked, decimals() always is)")
	fs.Var(&f.confirmations, "chain-confirmations", "DEPTH or NETWORK=DEPTH: confirmation depth, a number of confirmations or finalized (the node's finalized block), of every configured EVM and Tron network or of one (repeatable; default per network: docs/chains.md; solana's depth is --chain-commitment)")
	fs.Var(&f.commitment, "chain-commitment", "solana=confirmed|finalized: the commitment a Solana v2 transaction must reach (default finalized)")
	fs.Var(&f.genesis, "chain-genesis-hash", "solana=HASH: the genesis hash every Solana endpoint must report (getGenesisHash)")
	fs.Var(&f.startBlock, "chain-start-block", "NETWORK=N: where a cursor of the network that starts afresh begins at the latest (default: the block of the oldest watched transfer, else the head)")
	fs.DurationVar(&f.pollInterval, "chain-poll-interval", 0, "head poll interval of every network (default: the file's, else 2s)")
	fs.DurationVar(&f.stallAfter, "chain-stall-after", 0, "how long a node's head may stay still before another endpoint's head is read and the node failed over when that one is ahead, on every network (default: the file's, else the longer of 30s and 15 poll intervals)")
	fs.StringVar(&f.refundKeyFile, "refund-key-file", "", "file holding the hex private key of the Base refund wallet")
	fs.StringVar(&f.refundKeyEnv, "refund-key-env", "", "environment variable holding the hex private key of the Base refund wallet")
	fs.StringVar(&f.xpubFile, "deposit-xpub-file", "", "file holding the extended public key v1 deposit addresses are derived from")
	fs.StringVar(&f.xprvFile, "deposit-xprv-file", "", "file holding the extended private key (sweeper side only)")
}

// Config loads the file (if any), applies the flags and validates the result.
func (f *Flags) Config() (*Config, error) {
	c := &Config{}
	if f.File != "" {
		var err error
		if c, err = Load(f.File); err != nil {
			return nil, fmt.Errorf("--chains-config %s: %w", f.File, err)
		}
	}
	if err := f.apply(c); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (f *Flags) apply(c *Config) error {
	net := func(name string) *Network {
		if c.Networks == nil {
			c.Networks = map[payoutv1.Network]*Network{}
		}
		n := c.Networks[payoutv1.Network(name)]
		if n == nil {
			n = &Network{}
			c.Networks[payoutv1.Network(name)] = n
		}
		return n
	}
	for _, a := range f.rpc {
		if a.key == "" {
			return fmt.Errorf("--chain-rpc %s: want NETWORK=URL[,URL...]", a)
		}
		net(a.key).RPC = strings.Split(a.value, ",")
	}
	for _, a := range f.chainID {
		id, err := strconv.ParseInt(a.value, 10, 64)
		if err != nil || a.key == "" {
			return fmt.Errorf("--chain-id %s: want NETWORK=ID", a)
		}
		net(a.key).ChainID = id
	}
	for _, set := range []struct {
		flag, value string
		list        assignments
		put         func(*Token, string)
	}{
		{"--chain-token", "ADDRESS", f.tokens, func(t *Token, v string) { t.Contract = v }},
		{"--chain-platform-address", "ADDRESS", f.platform, func(t *Token, v string) { t.PlatformAddress = v }},
		{"--chain-token-code-hash", "HASH", f.codeHash, func(t *Token, v string) { t.CodeHash = v }},
	} {
		for _, a := range set.list {
			network, token, ok := strings.Cut(a.key, ".")
			if !ok || network == "" || token == "" {
				return fmt.Errorf("%s %s: want NETWORK.TOKEN=%s", set.flag, a.key, set.value)
			}
			n := net(network)
			if n.Tokens == nil {
				n.Tokens = map[payoutv1.Token]*Token{}
			}
			t := n.Tokens[payoutv1.Token(token)]
			if t == nil {
				t = &Token{}
				n.Tokens[payoutv1.Token(token)] = t
			}
			set.put(t, a.value)
		}
	}
	for _, a := range f.confirmations {
		depth, err := ParseDepth(a.value)
		if err != nil {
			return fmt.Errorf("--chain-confirmations %s: %w", a, err)
		}
		if a.key == "" {
			for name, n := range c.Networks {
				if n != nil && n.Kind != KindSolana && (n.Kind != "" || KindOf(name) != KindSolana) {
					n.Confirmations = depth
				}
			}
			continue
		}
		net(a.key).Confirmations = depth
	}
	for _, set := range []struct {
		flag string
		list assignments
		put  func(*Network, string)
	}{
		{"--chain-commitment", f.commitment, func(n *Network, v string) { n.Commitment = v }},
		{"--chain-genesis-hash", f.genesis, func(n *Network, v string) { n.GenesisHash = v }},
	} {
		for _, a := range set.list {
			if a.key == "" {
				return fmt.Errorf("%s %s: want NETWORK=VALUE", set.flag, a)
			}
			set.put(net(a.key), a.value)
		}
	}
	for _, a := range f.startBlock {
		b, err := strconv.ParseInt(a.value, 10, 64)
		if err != nil || a.key == "" {
			return fmt.Errorf("--chain-start-block %s: want NETWORK=BLOCK", a)
		}
		net(a.key).StartBlock = &b
	}
	for _, set := range []struct {
		value time.Duration
		put   func(*Network, time.Duration)
	}{
		{f.pollInterval, func(n *Network, d time.Duration) { n.PollInterval.Duration = d }},
		{f.stallAfter, func(n *Network, d time.Duration) { n.StallAfter.Duration = d }},
	} {
		if set.value == 0 {
			continue
		}
		for _, n := range c.Networks {
			if n != nil {
				set.put(n, set.value)
			}
		}
	}
	if f.refundKeyFile != "" || f.refundKeyEnv != "" {
		if f.refundKeyFile != "" && f.refundKeyEnv != "" {
			return errors.New("--refund-key-file and --refund-key-env exclude each other")
		}
		if c.Refund == nil {
			c.Refund = &Refund{}
		}
		c.Refund.Key = KeySource{File: f.refundKeyFile, Env: f.refundKeyEnv}
	}
	if f.xpubFile != "" {
		if c.DepositKey == nil {
			c.DepositKey = &DepositKey{}
		}
		c.DepositKey.XPub = KeySource{File: f.xpubFile}
	}
	if f.xprvFile != "" {
		if c.DepositKey == nil {
			c.DepositKey = &DepositKey{}
		}
		c.DepositKey.XPrv = &KeySource{File: f.xprvFile}
	}
	return nil
}

// assignment is KEY=VALUE, or a bare VALUE (key empty).
type assignment struct{ key, value string }

func (a assignment) String() string {
	if a.key == "" {
		return a.value
	}
	return a.key + "=" + a.value
}

// assignments is a repeatable flag of assignments, applied in order.
type assignments []assignment

func (s *assignments) String() string {
	parts := make([]string, len(*s))
	for i, a := range *s {
		parts[i] = a.String()
	}
	return strings.Join(parts, " ")
}

func (s *assignments) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok {
		*s = append(*s, assignment{value: strings.TrimSpace(v)})
		return nil
	}
	*s = append(*s, assignment{key: strings.TrimSpace(k), value: strings.TrimSpace(val)})
	return nil
}
