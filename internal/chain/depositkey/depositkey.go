// Package depositkey derives v1 deposit addresses from a BIP-32 extended key.
//
// One address per transfer, derived deterministically, so that nothing has to be stored to find
// an address's key again and the issuer of addresses (the REST facade) holds only an extended
// public key (xpub). The extended private key (xprv) of the same node is held by the
// controllers' Secret only, for the sweeper.
//
// # Path
//
// The deployment's deposit key is one BIP-32 node (conventionally m/44'/60'/0', the EVM account
// node; its xpub is what the facade gets). Below it, the 24-hex-digit transfer id (96 bits) is
// split into four 24-bit numbers, most significant first, each a non-hardened level:
//
//	id 0123456789abcdef01234567 → a/b/c/d with a = 0x012345, b = 0x6789ab, c = 0xcdef01, d = 0x234567
//
// Each level is below 2^31, so every step is a public (non-hardened) derivation and the xpub
// alone derives the address. The path is recorded on the transfer (spec.depositPath, "a/b/c/d",
// relative to the deposit key) so the sweeper need not recompute it. The EVM address of a node
// is the last 20 bytes of keccak-256 of its uncompressed public key (without the 0x04 prefix);
// the same address is valid on every EVM network.
package depositkey

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
)

// Deriver gives the deposit address of a transfer on a network, and its path below the key.
type Deriver interface {
	DepositAddress(network payoutv1.Network, transferID string) (address, path string, err error)
}

var transferID = regexp.MustCompile(`^[0-9a-f]{24}$`)

// Path is the derivation path of a transfer's deposit address below the deposit key, "a/b/c/d".
func Path(id string) (string, error) {
	levels, err := pathLevels(id)
	if err != nil {
		return "", err
	}
	parts := make([]string, len(levels))
	for i, l := range levels {
		parts[i] = strconv.FormatUint(uint64(l), 10)
	}
	return strings.Join(parts, "/"), nil
}

func pathLevels(id string) ([4]uint32, error) {
	var out [4]uint32
	if !transferID.MatchString(id) {
		return out, fmt.Errorf("transfer id %q is not 24 lower-case hex digits", id)
	}
	for i := range out {
		v, _ := strconv.ParseUint(id[i*6:i*6+6], 16, 32)
		out[i] = uint32(v)
	}
	return out, nil
}

// ParsePath reads a path written by Path.
func ParsePath(p string) ([]uint32, error) {
	parts := strings.Split(p, "/")
	out := make([]uint32, len(parts))
	for i, s := range parts {
		v, err := strconv.ParseUint(s, 10, 32)
		if err != nil || v >= hdkeychain.HardenedKeyStart {
			return nil, fmt.Errorf("deposit path %q: level %q is not a non-hardened index", p, s)
		}
		out[i] = uint32(v)
	}
	return out, nil
}

// Public derives deposit addresses from an extended public (or private) key. It is safe for
// concurrent use.
type Public struct {
	key *hdkeychain.ExtendedKey
}

// NewPublic parses an extended key; a private one is neutered, so a Public never holds a
// private key.
func NewPublic(extended string) (*Public, error) {
	k, err := hdkeychain.NewKeyFromString(strings.TrimSpace(extended))
	if err != nil {
		return nil, fmt.Errorf("deposit key: not a BIP-32 extended key: %w", err)
	}
	if k.IsPrivate() {
		if k, err = k.Neuter(); err != nil {
			return nil, err
		}
	}
	return &Public{key: k}, nil
}

// DepositAddress is the deposit address of transfer id on network and its path. Every EVM
// network gets the same address, in lower-case 0x hex. Tron gets the same key's address too:
// a Tron account id is derived from a secp256k1 key exactly as an EVM address is, so the 20
// bytes are the same, written in Tron's Base58Check form (T...), and the sweeper signs for it
// with the same private key. Solana keys are ed25519: no Solana address is derived here.
func (p *Public) DepositAddress(network payoutv1.Network, id string) (string, string, error) {
	tron := false
	switch network {
	case payoutv1.NetworkArbitrum, payoutv1.NetworkAvalanche, payoutv1.NetworkBase, payoutv1.NetworkEthereum, payoutv1.NetworkPolygon:
	case payoutv1.NetworkTron:
		tron = true
	default:
		return "", "", fmt.Errorf("deposit addresses on %s are not derived from the deposit key", network)
	}
	path, err := Path(id)
	if err != nil {
		return "", "", err
	}
	addr, err := p.AddressAt(path)
	if err != nil || !tron {
		return addr, path, err
	}
	addr, err = chain.TronAddressFromHex(addr)
	return addr, path, err
}

// AddressAt is the EVM address of the node at path below the deposit key ("a/b/...",
// non-hardened levels). A path of another depth than a transfer's four levels never meets a
// deposit address: e.g. "0" can serve as a deployment's v2 platform address, swept like the
// others.
func (p *Public) AddressAt(path string) (string, error) {
	levels, err := ParsePath(path)
	if err != nil {
		return "", err
	}
	k, err := derive(p.key, levels)
	if err != nil {
		return "", err
	}
	pub, err := k.ECPubKey()
	if err != nil {
		return "", err
	}
	return strings.ToLower(common.BytesToAddress(crypto.Keccak256(pub.SerializeUncompressed()[1:])[12:]).Hex()), nil
}

// Private derives the private keys of deposit addresses (the sweeper's side).
type Private struct {
	key *hdkeychain.ExtendedKey
}

// NewPrivate parses an extended private key.
func NewPrivate(xprv string) (*Private, error) {
	k, err := hdkeychain.NewKeyFromString(strings.TrimSpace(xprv))
	if err != nil {
		return nil, fmt.Errorf("deposit key: not a BIP-32 extended key: %w", err)
	}
	if !k.IsPrivate() {
		return nil, errors.New("deposit key: an extended public key cannot sign; the sweeper needs the xprv")
	}
	return &Private{key: k}, nil
}

// Public is the address-issuing side of the same key.
func (p *Private) Public() (*Public, error) {
	k, err := p.key.Neuter()
	if err != nil {
		return nil, err
	}
	return &Public{key: k}, nil
}

// Key is the private key of the deposit address at path ("a/b/c/d", as Path writes it).
func (p *Private) Key(path string) (*ecdsa.PrivateKey, error) {
	levels, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	k, err := derive(p.key, levels)
	if err != nil {
		return nil, err
	}
	priv, err := k.ECPrivKey()
	if err != nil {
		return nil, err
	}
	return crypto.ToECDSA(priv.Serialize())
}

// KeyForTransfer is the private key of transfer id's deposit address.
func (p *Private) KeyForTransfer(id string) (*ecdsa.PrivateKey, error) {
	path, err := Path(id)
	if err != nil {
		return nil, err
	}
	return p.Key(path)
}

func derive(k *hdkeychain.ExtendedKey, levels []uint32) (*hdkeychain.ExtendedKey, error) {
	var err error
	for _, l := range levels {
		// Derive is BIP-32 as written (hdkeychain's DeriveNonStandard keeps an old bug).
		if k, err = k.Derive(l); err != nil {
			return nil, fmt.Errorf("deriving level %d: %w", l, err)
		}
	}
	return k, nil
}

// AccountPath is the conventional node of the deposit key below a seed: m/44'/60'/0'.
var AccountPath = []uint32{hdkeychain.HardenedKeyStart + 44, hdkeychain.HardenedKeyStart + 60, hdkeychain.HardenedKeyStart + 0}

// FromSeed derives the deposit key (at AccountPath) of a BIP-32 seed and returns its xprv and
// xpub.
func FromSeed(seed []byte) (xprv, xpub string, err error) {
	master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		return "", "", err
	}
	account, err := derive(master, AccountPath)
	if err != nil {
		return "", "", err
	}
	pub, err := account.Neuter()
	if err != nil {
		return "", "", err
	}
	return account.String(), pub.String(), nil
}

// Generate makes a deposit key from a fresh random seed.
func Generate() (xprv, xpub string, err error) {
	seed, err := hdkeychain.GenerateSeed(hdkeychain.RecommendedSeedLen)
	if err != nil {
		return "", "", err
	}
	return FromSeed(seed)
}

// EnsureDevKey is for `make run`: it returns the files deposit.xprv and deposit.xpub of dir,
// creating them (mode 0600) from a fresh random seed when they do not exist yet, so that a
// second run keeps issuing the same addresses.
func EnsureDevKey(dir string) (xprvFile, xpubFile string, err error) {
	xprvFile, xpubFile = filepath.Join(dir, "deposit.xprv"), filepath.Join(dir, "deposit.xpub")
	_, errPrv := os.Stat(xprvFile)
	_, errPub := os.Stat(xpubFile)
	if errPrv == nil && errPub == nil {
		return xprvFile, xpubFile, nil
	}
	prv, pub, err := Generate()
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	for _, f := range []struct{ path, text string }{{xprvFile, prv}, {xpubFile, pub}} {
		tmp := f.path + ".tmp"
		if err := os.WriteFile(tmp, []byte(f.text+"\n"), 0o600); err != nil {
			return "", "", err
		}
		if err := os.Rename(tmp, f.path); err != nil {
			return "", "", err
		}
	}
	return xprvFile, xpubFile, nil
}

// Read reads a key source: a file, an environment variable, or a key of a Secret through r
// (the API reader: the Secret is read once at start, not cached).
func Read(ctx context.Context, r client.Reader, src config.KeySource) (string, error) {
	if src.Secret == nil {
		v, err := src.ReadLocal()
		if err != nil {
			return "", fmt.Errorf("reading the key from %s: %w", src, err)
		}
		return v, nil
	}
	if r == nil {
		return "", fmt.Errorf("reading the key from %s: no cluster client", src)
	}
	s := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: src.Secret.Namespace, Name: src.Secret.Name}, s); err != nil {
		return "", fmt.Errorf("reading the key from %s: %w", src, err)
	}
	v, ok := s.Data[src.Secret.Key]
	if !ok || len(strings.TrimSpace(string(v))) == 0 {
		return "", fmt.Errorf("reading the key from %s: the Secret has no such key", src)
	}
	return strings.TrimSpace(string(v)), nil
}

// LoadPublic builds the address deriver of a configuration's deposit key (the xpub).
func LoadPublic(ctx context.Context, r client.Reader, k *config.DepositKey) (*Public, error) {
	if k == nil {
		return nil, errors.New("no deposit key is configured (depositKey.xpub)")
	}
	v, err := Read(ctx, r, k.XPub)
	if err != nil {
		return nil, err
	}
	return NewPublic(v)
}

// LoadPrivate builds the sweeper's key deriver from a configuration's xprv.
func LoadPrivate(ctx context.Context, r client.Reader, k *config.DepositKey) (*Private, error) {
	if k == nil || k.XPrv == nil {
		return nil, errors.New("no deposit private key is configured (depositKey.xprv)")
	}
	v, err := Read(ctx, r, *k.XPrv)
	if err != nil {
		return nil, err
	}
	return NewPrivate(v)
}
