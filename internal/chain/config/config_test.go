package config

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

func sampleFile(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "samples", "chains.yaml")
}

func TestSampleIsValid(t *testing.T) {
	c, err := Load(sampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("the documented sample does not validate: %v", err)
	}
	base, ok := c.Network(payoutv1.NetworkBase)
	if !ok {
		t.Fatal("base is configured in the sample")
	}
	if base.Confirmations != Finalized || base.PollInterval.Duration != time.Second || base.StallAfter.Duration != 30*time.Second ||
		base.MaxBlockRange != 1000 || base.Kind != KindEVM {
		t.Errorf("base settings: %+v", base)
	}
	if _, ok := c.Network(payoutv1.NetworkPolygon); ok {
		t.Error("polygon is not configured in the sample")
	}
	eth, _ := c.Network(payoutv1.NetworkEthereum)
	if eth.PollInterval.Duration != DefaultPollInterval || eth.HeartbeatInterval.Duration != DefaultHeartbeatInterval ||
		eth.Confirmations != Finalized || eth.StallAfter.Duration != 30*time.Second {
		t.Errorf("defaults not applied: %+v", eth)
	}
	if a, ok := c.PlatformAddress(payoutv1.NetworkBase, payoutv1.TokenUSDC); !ok || a != "0x2b5ad5c4795c026514f8317c7a215e218dccd6cf" {
		t.Errorf("PlatformAddress(base, usdc) = %s, %v", a, ok)
	}
	if _, ok := c.PlatformAddress(payoutv1.NetworkEthereum, payoutv1.TokenUSDT); ok {
		t.Error("usdt on ethereum has no v2 address in the sample")
	}
	r, ok := c.RefundSettings()
	if !ok || r.Network != payoutv1.NetworkBase || r.Token != payoutv1.TokenUSDC || r.Key.File == "" {
		t.Errorf("refund: %+v", r)
	}
}

func TestValidateNamesTheBadSetting(t *testing.T) {
	cases := []invalidCase{
		{"bad contract", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, tokens: {usdc: {contract: "0x12"}}}`,
			`networks.base.tokens.usdc.contract: "0x12" is not an EVM address`},
		{"zero treasury", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, treasury: "0x0000000000000000000000000000000000000000", tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.treasury: "0x0000000000000000000000000000000000000000" is not a non-zero EVM address`},
		{"tron treasury without the HTTP API", `
networks:
  tron: {rpc: [http://127.0.0.1:8545/jsonrpc], chainID: 728126428, treasury: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t, tokens: {usdt: {contract: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t}}}`,
			`networks.tron.httpAPI: a tron treasury needs java-tron's HTTP API (the sweeper's transactions go there)`},
		{"tron treasury in hex", `
networks:
  tron: {rpc: [http://127.0.0.1:8545/jsonrpc], httpAPI: "http://127.0.0.1:8090", chainID: 728126428, treasury: "0xa614f803b6fd780986a42c78ec9c7f77e6ded13c", tokens: {usdt: {contract: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t}}}`,
			`networks.tron.treasury: "0xa614f803b6fd780986a42c78ec9c7f77e6ded13c" is not a Tron address (Base58Check, 34 characters starting with T)`},
		{"solana treasury", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], treasury: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v, tokens: {usdc: {contract: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v}}}`,
			`networks.solana.treasury: solana deposits are v2 payments to the platform's address, which is the treasury: nothing is swept`},
		{"httpAPI on an EVM network", `
networks:
  base: {rpc: [http://127.0.0.1:8545], httpAPI: "http://127.0.0.1:8090", chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.httpAPI: only tron networks take httpAPI and energyWallet`},
		{"bad treasury", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, treasury: nope, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.treasury: "nope" is not a non-zero EVM address`},
		{"bad platform address", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", platformAddress: nope}}}`,
			`networks.base.tokens.usdc.platformAddress: "nope" is not an EVM address`},
		{"unknown network", `
networks:
  basse: {rpc: [http://127.0.0.1:8545], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.basse: unknown network`},
		{"no rpc", `
networks:
  base: {chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.rpc: at least one RPC endpoint is needed`},
		{"bad url hides its path", `
networks:
  base: {rpc: ["ftp://node.example.net/v2/SECRET"], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.rpc[0]: "ftp://node.example.net": the scheme must be http, https, ws or wss`},
		{"no chain id", `
networks:
  base: {rpc: [http://127.0.0.1:8545], tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.chainID: the chain id is required`},
		{"unknown token", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, tokens: {dai: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.tokens.dai: unknown token`},
		{"negative depth", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, confirmations: -1, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.confirmations: -1: must be at least 1, or finalized`},
		{"remote plain http", `
networks:
  base: {rpc: ["https://node.example.net", "http://node.example.net:8545/v2/SECRET"], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.rpc[1]: "http://node.example.net:8545": plain http is accepted only for a node on this machine (127.0.0.0/8, ::1, localhost); use https for a remote node`},
		{"remote plain ws", `
networks:
  base: {rpc: ["ws://10.0.0.7:8546"], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.rpc[0]: "ws://10.0.0.7:8546": plain ws is accepted only for a node on this machine (127.0.0.0/8, ::1, localhost); use wss for a remote node`},
		{"a name that only starts like loopback", `
networks:
  base: {rpc: ["http://127.0.0.1.example.net"], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.rpc[0]: "http://127.0.0.1.example.net": plain http is accepted only for a node on this machine`},
		{"stall window shorter than two polls", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, pollInterval: 2s, stallAfter: 3s, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.stallAfter: 3s: must be at least two poll intervals (4s)`},
		{"refund on another network", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}
refund: {network: polygon, key: {env: K}}`,
			`refund.network: "polygon": refunds are sent on base`},
		{"refund without base", `
refund: {key: {env: K}}`,
			`refund.network: network base is not configured`},
		{"refund key in a secret", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}
refund: {key: {secret: {namespace: a, name: b, key: c}}}`,
			`refund.key: a Secret is not supported here`},
		{"two xpub sources", `
depositKey: {xpub: {file: /x, env: X}}`,
			`depositKey.xpub: exactly one of file, env or secret is needed`},
		{"one endpoint twice", `
networks:
  base: {rpc: ["https://node.example.net/v2/KEY", "https://backup.example.net", "https://node.example.net/v2/KEY"], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.rpc[2]: the same endpoint as rpc[0]`},
		{"bad code hash", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", codeHash: "0x1234"}}}`,
			`networks.base.tokens.usdc.codeHash: "0x1234" is not a keccak256 hash (0x and 64 hex digits)`},
	}
	expectInvalid(t, cases)
}

// invalidCase is a configuration that parses and that Validate refuses with a message holding want.
type invalidCase struct{ name, yaml, want string }

func expectInvalid(t *testing.T, cases []invalidCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			err = c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestMarshalRoundTrips(t *testing.T) {
	c, err := Load(sampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatalf("%v in\n%s", err, b)
	}
	if err := again.Validate(); err != nil {
		t.Fatal(err)
	}
	n1, _ := c.Network(payoutv1.NetworkBase)
	n2, _ := again.Network(payoutv1.NetworkBase)
	if n1.PollInterval != n2.PollInterval || n1.Tokens[payoutv1.TokenUSDC].PlatformAddress != n2.Tokens[payoutv1.TokenUSDC].PlatformAddress {
		t.Fatalf("%+v != %+v", n1, n2)
	}
}

func TestLoopbackHTTPAndRemoteTLSAreAccepted(t *testing.T) {
	for _, u := range []string{
		"http://127.0.0.1:8545", "http://127.3.2.1:8545", "http://[::1]:8545", "http://localhost:8545", "http://LOCALHOST/rpc",
		"ws://127.0.0.1:8546", "https://node.example.net/v2/KEY", "wss://node.example.net/ws", "https://10.0.0.7:8545",
	} {
		c := &Config{Networks: map[payoutv1.Network]*Network{payoutv1.NetworkBase: {
			RPC: []string{u}, ChainID: 8453, Tokens: map[payoutv1.Token]*Token{payoutv1.TokenUSDC: {Contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}},
		}}}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestDepthPerNetwork(t *testing.T) {
	const evmToken = `{usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}`
	c, err := Parse([]byte(`
networks:
  arbitrum: {rpc: [https://a.example.net], chainID: 42161, tokens: ` + evmToken + `}
  avalanche: {rpc: [https://a.example.net], chainID: 43114, tokens: ` + evmToken + `}
  base: {rpc: [https://a.example.net], chainID: 8453, tokens: ` + evmToken + `}
  ethereum: {rpc: [https://a.example.net], chainID: 1, tokens: ` + evmToken + `}
  polygon: {rpc: [https://a.example.net], chainID: 137, confirmations: 256, tokens: ` + evmToken + `}
  tron: {rpc: [https://a.example.net/jsonrpc], chainID: 728126428, confirmations: finalized, tokens: {usdt: {contract: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[payoutv1.Network]Depth{
		payoutv1.NetworkArbitrum: Finalized, payoutv1.NetworkAvalanche: 1, payoutv1.NetworkBase: Finalized,
		payoutv1.NetworkEthereum: Finalized, payoutv1.NetworkPolygon: 256, payoutv1.NetworkTron: Finalized,
	}
	for name, d := range want {
		if n, _ := c.Network(name); n.Confirmations != d {
			t.Errorf("%s: depth %s, want %s", name, n.Confirmations, d)
		}
	}
	if d := DefaultDepth(payoutv1.NetworkTron); d != 20 {
		t.Errorf("tron's default depth is %s, want 20", d)
	}
	if d := DefaultDepth(payoutv1.NetworkPolygon); !d.IsFinalized() || d.Blocks() != 0 || d.String() != "finalized" {
		t.Errorf("polygon's default depth is %s", d)
	}
	// the word survives a round trip through the file format (make run writes its configuration)
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if tron, _ := again.Network(payoutv1.NetworkTron); tron.Confirmations != Finalized || !strings.Contains(string(b), "confirmations: finalized") {
		t.Errorf("after a round trip tron's depth is %s:\n%s", tron.Confirmations, b)
	}
	if _, err := Parse([]byte("networks:\n  base: {confirmations: final}\n")); err == nil || !strings.Contains(err.Error(), `"final" is not a depth`) {
		t.Errorf("a misspelt depth: %v", err)
	}
}

func TestUnknownFieldIsAnError(t *testing.T) {
	if _, err := Parse([]byte("networks:\n  base:\n    confirmation: 3\n")); err == nil {
		t.Fatal("a misspelt setting must not be ignored")
	}
}

func TestFlagsOverrideTheFile(t *testing.T) {
	t.Setenv("TEST_REFUND_KEY", "00")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var f Flags
	f.BindFlags(fs)
	err := fs.Parse([]string{
		"--chains-config", sampleFile(t),
		"--chain-rpc", "base=http://127.0.0.1:1,http://127.0.0.1:2",
		"--chain-rpc", "polygon=http://127.0.0.1:3",
		"--chain-id", "polygon=31337",
		"--chain-token", "polygon.usdc=0x5FbDB2315678afecb367f032d93F642f64180aa3",
		"--chain-platform-address", "polygon.usdc=0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF",
		"--chain-token-code-hash", "polygon.usdc=0x" + strings.Repeat("Ab", 32),
		"--chain-confirmations", "3",
		"--chain-confirmations", "polygon=5",
		"--chain-confirmations", "ethereum=finalized",
		"--chain-start-block", "base=7",
		"--chain-poll-interval", "250ms",
		"--chain-stall-after", "5s",
		"--refund-key-env", "TEST_REFUND_KEY",
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := c.Network(payoutv1.NetworkBase)
	if strings.Join(base.RPC, " ") != "http://127.0.0.1:1 http://127.0.0.1:2" || base.Confirmations != 3 ||
		base.PollInterval.Duration != 250*time.Millisecond || *base.StartBlock != 7 || base.ChainID != 8453 || base.StallAfter.Duration != 5*time.Second {
		t.Errorf("base: %+v", base)
	}
	if eth, _ := c.Network(payoutv1.NetworkEthereum); eth.Confirmations != Finalized {
		t.Errorf("ethereum: depth %s, want finalized", eth.Confirmations)
	}
	poly, ok := c.Network(payoutv1.NetworkPolygon)
	if !ok || poly.Confirmations != 5 || poly.ChainID != 31337 || poly.Tokens[payoutv1.TokenUSDC].PlatformAddress == "" ||
		poly.Tokens[payoutv1.TokenUSDC].CodeHash != "0x"+strings.Repeat("Ab", 32) {
		t.Errorf("polygon: %+v", poly)
	}
	if c.Refund.Key.Env != "TEST_REFUND_KEY" || c.Refund.Key.File != "" {
		t.Errorf("refund key: %+v", c.Refund.Key)
	}
	if v, err := c.Refund.Key.ReadLocal(); err != nil || v != "00" {
		t.Errorf("ReadLocal = %q, %v", v, err)
	}
}

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--chain-rpc", "http://x"},
		{"--chain-token", "base=0x5FbDB2315678afecb367f032d93F642f64180aa3"},
		{"--chain-confirmations", "zero"},
		{"--chain-confirmations", "base=0"},
		{"--chain-rpc", "base=http://node.example.net:8545", "--chain-id", "base=8453", "--chain-token", "base.usdc=0x5FbDB2315678afecb367f032d93F642f64180aa3"},
		{"--chain-id", "base=x"},
		{"--chain-token-code-hash", "base=0x" + strings.Repeat("ab", 32)},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var f Flags
		f.BindFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Config(); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}

func TestKeySourceNeverShowsTheSecret(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "k")
	if err := os.WriteFile(p, []byte("  deadbeef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k := KeySource{File: p}
	if strings.Contains(k.String(), "deadbeef") {
		t.Error("String shows the key")
	}
	if v, err := k.ReadLocal(); err != nil || v != "deadbeef" {
		t.Errorf("ReadLocal = %q, %v", v, err)
	}
	if Redact("https://user:pw@node.example.net:8545/v2/KEY?x=1") != "https://node.example.net:8545" {
		t.Error(Redact("https://user:pw@node.example.net:8545/v2/KEY?x=1"))
	}
}

func TestSolanaAndTron(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "solana-tron.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	sol, ok := c.Network(payoutv1.NetworkSolana)
	if !ok || sol.Kind != KindSolana || sol.Commitment != CommitmentFinalized || sol.Confirmations != SolanaFinalizedConfirmations {
		t.Errorf("solana: %+v", sol)
	}
	if a, ok := c.PlatformAddress(payoutv1.NetworkSolana, payoutv1.TokenUSDC); !ok || a != "3fTPf5EUuB6C8RM9TQ4M6zR3SWxHWF7bJNyspSVhz6G7" {
		t.Errorf("PlatformAddress(solana, usdc) = %s, %v: base58 is case-sensitive and kept as written", a, ok)
	}
	tron, ok := c.Network(payoutv1.NetworkTron)
	if !ok || tron.Kind != KindTron || tron.Confirmations != DefaultTronConfirmations || tron.ChainID != 728126428 {
		t.Errorf("tron: %+v", tron)
	}
	c.Networks[payoutv1.NetworkSolana].Commitment = CommitmentConfirmed
	if sol, _ := c.Network(payoutv1.NetworkSolana); sol.Confirmations != 1 {
		t.Errorf("commitment confirmed requires one confirmation, not %d", sol.Confirmations)
	}
	// a network with its defaults written out (as make run writes its configuration) validates
	for _, name := range []payoutv1.Network{payoutv1.NetworkSolana, payoutv1.NetworkTron} {
		n, _ := c.Network(name)
		c.Networks[name] = &n
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults written out: %v", err)
	}
}

func TestSolanaAndTronValidation(t *testing.T) {
	const mint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	const usdt = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
	cases := []invalidCase{
		{"solana mint in EVM form", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.solana.tokens.usdc.contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" is not a Solana address`},
		{"solana platform address", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], tokens: {usdc: {contract: ` + mint + `, platformAddress: "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF"}}}`,
			`networks.solana.tokens.usdc.platformAddress: "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF" is not a Solana address`},
		{"solana processed", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], commitment: processed, tokens: {usdc: {contract: ` + mint + `}}}`,
			`networks.solana.commitment: processed is not accepted`},
		{"solana unknown commitment", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], commitment: rooted, tokens: {usdc: {contract: ` + mint + `}}}`,
			`networks.solana.commitment: "rooted": must be confirmed or finalized`},
		{"solana confirmations", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], confirmations: 5, tokens: {usdc: {contract: ` + mint + `}}}`,
			`networks.solana.confirmations: solana's depth is its commitment`},
		{"solana chain id", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], chainID: 101, tokens: {usdc: {contract: ` + mint + `}}}`,
			`networks.solana.chainID: solana has no chain id; pin the cluster with genesisHash`},
		{"solana genesis", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], genesisHash: mainnet, tokens: {usdc: {contract: ` + mint + `}}}`,
			`networks.solana.genesisHash: "mainnet" is not a base58 hash of 32 bytes`},
		{"solana start block", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], startBlock: 5, tokens: {usdc: {contract: ` + mint + `}}}`,
			`networks.solana.startBlock: does not apply to solana`},
		{"solana as evm", `
networks:
  solana: {kind: evm, rpc: [http://127.0.0.1:8899], tokens: {usdc: {contract: ` + mint + `}}}`,
			`networks.solana.kind: "evm" is not the kind of solana (solana)`},
		{"tron contract in hex", `
networks:
  tron: {rpc: [http://127.0.0.1:8545], chainID: 728126428, tokens: {usdt: {contract: "0xa614f803b6fd780986a42c78ec9c7f77e6ded13c"}}}`,
			`networks.tron.tokens.usdt.contract: "0xa614f803b6fd780986a42c78ec9c7f77e6ded13c" is not a Tron address`},
		{"tron contract mistyped", `
networks:
  tron: {rpc: [http://127.0.0.1:8545], chainID: 728126428, tokens: {usdt: {contract: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6T}}}`,
			`networks.tron.tokens.usdt.contract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6T" is not a Tron address`},
		{"tron without chain id", `
networks:
  tron: {rpc: [http://127.0.0.1:8545], tokens: {usdt: {contract: ` + usdt + `}}}`,
			`networks.tron.chainID: the chain id is required: what eth_chainId answers on the node (mainnet 728126428`},
		{"tron commitment", `
networks:
  tron: {rpc: [http://127.0.0.1:8545], chainID: 728126428, commitment: finalized, tokens: {usdt: {contract: ` + usdt + `}}}`,
			`networks.tron.commitment: only solana networks take a commitment`},
		{"solana code hash", `
networks:
  solana: {rpc: [http://127.0.0.1:8899], tokens: {usdc: {contract: ` + mint + `, codeHash: "0x` + strings.Repeat("ab", 32) + `"}}}`,
			`networks.solana.tokens.usdc.codeHash: solana mints have no code hash`},
		{"evm genesis", `
networks:
  base: {rpc: [http://127.0.0.1:8545], chainID: 8453, genesisHash: 5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d, tokens: {usdc: {contract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}}}`,
			`networks.base.genesisHash: only solana networks take a genesis hash`},
	}
	expectInvalid(t, cases)
}

func TestSolanaAndTronFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var f Flags
	f.BindFlags(fs)
	err := fs.Parse([]string{
		"--chain-rpc", "solana=http://127.0.0.1:8899",
		"--chain-token", "solana.usdc=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
		"--chain-platform-address", "solana.usdc=3fTPf5EUuB6C8RM9TQ4M6zR3SWxHWF7bJNyspSVhz6G7",
		"--chain-commitment", "solana=confirmed",
		"--chain-genesis-hash", "solana=5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
		"--chain-rpc", "tron=http://127.0.0.1:8545/jsonrpc",
		"--chain-id", "tron=728126428",
		"--chain-token", "tron.usdt=TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
		"--chain-confirmations", "3", // every network that counts blocks: not solana
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	sol, _ := c.Network(payoutv1.NetworkSolana)
	if sol.Commitment != CommitmentConfirmed || sol.Confirmations != 1 || sol.GenesisHash == "" {
		t.Errorf("solana: %+v", sol)
	}
	if tron, _ := c.Network(payoutv1.NetworkTron); tron.Confirmations != 3 {
		t.Errorf("tron: %+v", tron)
	}
}
