package depositkey

import (
	"context"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
)

// The BIP-39 seed of "abandon abandon ... about" (no passphrase), whose first Ethereum account
// m/44'/60'/0'/0/0 every wallet derives as 0x9858EfFD232B4033E47d90003D41EC34EcaEda94.
const abandonSeed = "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4"

func TestKnownWalletVector(t *testing.T) {
	seed, _ := hex.DecodeString(abandonSeed)
	xprv, xpub, err := FromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(xprv, "xprv") || !strings.HasPrefix(xpub, "xpub") {
		t.Fatalf("xprv %q… xpub %q…", xprv[:4], xpub[:4])
	}
	pub, err := NewPublic(xpub)
	if err != nil {
		t.Fatal(err)
	}
	k, err := derive(pub.key, []uint32{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	ec, _ := k.ECPubKey()
	got := crypto.PubkeyToAddress(*ec.ToECDSA()).Hex()
	if got != "0x9858EfFD232B4033E47d90003D41EC34EcaEda94" {
		t.Fatalf("m/44'/60'/0'/0/0 = %s", got)
	}
}

func TestPath(t *testing.T) {
	p, err := Path("0123456789abcdef01234567")
	if err != nil {
		t.Fatal(err)
	}
	if p != "74565/6785451/13496065/2311527" { // 0x012345, 0x6789ab, 0xcdef01, 0x234567
		t.Fatalf("Path = %s", p)
	}
	max, _ := Path("ffffffffffffffffffffffff")
	if max != "16777215/16777215/16777215/16777215" || len(max) > 64 {
		t.Fatalf("Path = %s", max)
	}
	levels, err := ParsePath(p)
	if err != nil || len(levels) != 4 || levels[0] != 0x012345 || levels[3] != 0x234567 {
		t.Fatalf("ParsePath = %v, %v", levels, err)
	}
	for _, bad := range []string{"0123456789ABCDEF01234567", "0123", "0123456789abcdef0123456z", ""} {
		if _, err := Path(bad); err == nil {
			t.Errorf("Path(%q) accepted", bad)
		}
	}
	if _, err := ParsePath("1/2147483648"); err == nil {
		t.Error("a hardened level is not a deposit path")
	}
}

func TestPrivateChildMatchesPublicDerivation(t *testing.T) {
	xprv, xpub, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublic(xpub)
	if err != nil {
		t.Fatal(err)
	}
	prv, err := NewPrivate(xprv)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, id := range []string{"000000000000000000000000", "0123456789abcdef01234567", "ffffffffffffffffffffffff", "6a1f00000000000000000001", "6a1f00000000000000000002"} {
		addr, path, err := pub.DepositAddress(payoutv1.NetworkBase, id)
		if err != nil {
			t.Fatal(err)
		}
		if addr != strings.ToLower(addr) || len(addr) != 42 {
			t.Errorf("address %s is not lower-case 0x hex", addr)
		}
		if seen[addr] {
			t.Errorf("%s issued twice", addr)
		}
		seen[addr] = true
		key, err := prv.Key(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ToLower(crypto.PubkeyToAddress(key.PublicKey).Hex()); got != addr {
			t.Errorf("%s: private child %s, public derivation %s", id, got, addr)
		}
		byID, _ := prv.KeyForTransfer(id)
		if !byID.Equal(key) {
			t.Errorf("%s: KeyForTransfer differs from Key(path)", id)
		}
		again, _, _ := pub.DepositAddress(payoutv1.NetworkPolygon, id)
		if again != addr {
			t.Errorf("%s: the address differs between EVM networks", id)
		}
		// Tron: the same key's 20 bytes in Base58Check, at the same path
		tron, tronPath, err := pub.DepositAddress(payoutv1.NetworkTron, id)
		if err != nil || tronPath != path || !chain.IsTronAddress(tron) {
			t.Fatalf("%s: tron address %s at %s: %v", id, tron, tronPath, err)
		}
		if hex, _ := chain.TronAddressToHex(tron); hex != addr {
			t.Errorf("%s: tron address %s is %s, not the EVM address %s", id, tron, hex, addr)
		}
	}
	// an xprv given to NewPublic is neutered: it cannot sign
	fromPrv, err := NewPublic(xprv)
	if err != nil || fromPrv.key.IsPrivate() {
		t.Fatalf("NewPublic(xprv) keeps a private key (err %v)", err)
	}
	if _, err := NewPrivate(xpub); err == nil {
		t.Error("NewPrivate accepted an xpub")
	}
	if _, _, err := pub.DepositAddress(payoutv1.NetworkSolana, "0123456789abcdef01234567"); err == nil {
		t.Error("Solana addresses are not EVM-derived")
	}
	platform, err := pub.AddressAt("0")
	if err != nil || seen[platform] {
		t.Fatalf("AddressAt(0) = %s, %v", platform, err)
	}
	if k, _ := prv.Key("0"); strings.ToLower(crypto.PubkeyToAddress(k.PublicKey).Hex()) != platform {
		t.Error("the platform address's key does not match")
	}
	p2, _ := prv.Public()
	a1, _, _ := p2.DepositAddress(payoutv1.NetworkBase, "0123456789abcdef01234567")
	a2, _, _ := pub.DepositAddress(payoutv1.NetworkBase, "0123456789abcdef01234567")
	if a1 != a2 {
		t.Error("Private.Public derives other addresses")
	}
}

func TestEnsureDevKeyIsStable(t *testing.T) {
	dir := t.TempDir()
	prvFile, pubFile, err := EnsureDevKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(pubFile)
	if _, _, err := EnsureDevKey(dir); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(pubFile)
	if string(first) != string(second) {
		t.Fatal("a second run made a new key")
	}
	if fi, _ := os.Stat(prvFile); fi.Mode().Perm() != 0o600 {
		t.Errorf("xprv file mode %v", fi.Mode().Perm())
	}
	k := &config.DepositKey{XPub: config.KeySource{File: pubFile}, XPrv: &config.KeySource{File: prvFile}}
	pub, err := LoadPublic(context.Background(), nil, k)
	if err != nil {
		t.Fatal(err)
	}
	prv, err := LoadPrivate(context.Background(), nil, k)
	if err != nil {
		t.Fatal(err)
	}
	addr, path, _ := pub.DepositAddress(payoutv1.NetworkBase, "0123456789abcdef01234567")
	key, _ := prv.Key(path)
	if strings.ToLower(crypto.PubkeyToAddress(key.PublicKey).Hex()) != addr {
		t.Error("the dev key pair does not match")
	}
}

func BenchmarkDepositAddress(b *testing.B) {
	_, xpub, _ := Generate()
	pub, _ := NewPublic(xpub)
	for i := 0; i < b.N; i++ {
		if _, _, err := pub.DepositAddress(payoutv1.NetworkBase, "0123456789abcdef01234567"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAddressesV1OnTron: a v1 transfer on tron is issued the deposit key's address in Tron's
// Base58Check spelling, the same key as on the EVM networks; solana, and a network that is not
// configured, take no v1 deposits.
func TestAddressesV1OnTron(t *testing.T) {
	_, xpub, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublic(xpub)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(`networks:
  base: {rpc: [http://127.0.0.1:1], chainID: 8453, tokens: {usdc: {contract: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"}}}
  tron: {rpc: [http://127.0.0.1:1], chainID: 728126428, tokens: {usdt: {contract: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t}}}
  solana: {rpc: [http://127.0.0.1:1], tokens: {usdc: {contract: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := Addresses{Public: pub, Config: cfg}
	const id = "0123456789abcdef01234567"
	tron, path, err := a.V1Address(payoutv1.NetworkTron, id)
	if err != nil || !chain.IsTronAddress(tron) {
		t.Fatalf("V1Address(tron) = %s, %s, %v", tron, path, err)
	}
	evm, evmPath, err := a.V1Address(payoutv1.NetworkBase, id)
	if err != nil || evmPath != path {
		t.Fatalf("V1Address(base) = %s, %s, %v", evm, evmPath, err)
	}
	if body, _ := chain.TronAddressToHex(tron); body != evm {
		t.Errorf("the tron deposit address %s is %s, not the key's EVM address %s", tron, body, evm)
	}
	for _, n := range []payoutv1.Network{payoutv1.NetworkSolana, payoutv1.NetworkPolygon} {
		if addr, _, err := a.V1Address(n, id); err == nil {
			t.Errorf("V1Address(%s) = %s: issued", n, addr)
		}
	}
}
