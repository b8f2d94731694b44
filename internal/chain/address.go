// Package chain knows the blockchains deposits arrive on: address and transaction-hash formats
// of EVM chains, Solana and Tron.
package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/big"
	"regexp"
	"strings"

	"golang.org/x/crypto/sha3"
)

var (
	evmAddress   = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	evmTxHash    = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	base58Chars  = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]+$`)
	base58Digits = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
)

// Why CheckEVMAddress refuses an address.
var (
	// ErrNotEVMAddress: not 0x and 40 hex digits.
	ErrNotEVMAddress = errors.New("not an EVM address (0x and 40 hex digits)")
	// ErrEVMChecksum: 0x and 40 hex digits in mixed case that are not the address's EIP-55
	// spelling, so one of its letters or digits is likely mistyped.
	ErrEVMChecksum = errors.New("the EVM address has mixed case but a wrong EIP-55 checksum; check it, or send it all in lower case")
)

// CheckEVMAddress is the one check of an EVM address in the service: 0x and 40 hex digits, and
// when the digits are in mixed case, the EIP-55 checksum their case encodes must be right.
// All lower-case and all upper-case digits carry no checksum and are accepted (EIP-55). A
// mixed-case address that fails its checksum is refused rather than trusted: funds sent to,
// or refunded to, a mistyped address are lost.
func CheckEVMAddress(s string) error {
	if !evmAddress.MatchString(s) {
		return ErrNotEVMAddress
	}
	digits := s[2:]
	lower := strings.ToLower(digits)
	if digits == lower || digits == strings.ToUpper(digits) {
		return nil
	}
	if digits != eip55(lower) {
		return ErrEVMChecksum
	}
	return nil
}

// IsEVMAddress reports whether CheckEVMAddress accepts s.
func IsEVMAddress(s string) bool { return CheckEVMAddress(s) == nil }

// ChecksumEVMAddress returns the EIP-55 spelling of an EVM address (0x and 40 hex digits, any
// case); it panics on anything else, which callers have checked.
func ChecksumEVMAddress(s string) string {
	if !evmAddress.MatchString(s) {
		panic("chain: ChecksumEVMAddress of " + s)
	}
	return "0x" + eip55(strings.ToLower(s[2:]))
}

// eip55 upper-cases each letter of the lower-case hex digits whose nibble in the Keccak-256
// hash of those digits (as ASCII text) is 8 or more.
func eip55(lower string) string {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lower))
	sum := h.Sum(nil)
	out := []byte(lower)
	for i, c := range out {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if c >= 'a' && c <= 'f' && nibble >= 8 {
			out[i] = c - ('a' - 'A')
		}
	}
	return string(out)
}

// IsEVMTxHash reports whether s is an EVM transaction hash, 0x and 64 hex digits.
func IsEVMTxHash(s string) bool { return evmTxHash.MatchString(s) }

// IsSolanaAddress reports whether s is a Solana address: base58, 32 to 44 characters, that
// decodes to a 32-byte public key.
func IsSolanaAddress(s string) bool {
	if len(s) < 32 || len(s) > 44 {
		return false
	}
	b, ok := decodeBase58(s)
	return ok && len(b) == 32
}

// IsSolanaSignature reports whether s is a Solana transaction signature: base58 of 64 bytes,
// 85 to 88 characters.
func IsSolanaSignature(s string) bool {
	if len(s) < 85 || len(s) > 88 {
		return false
	}
	b, ok := decodeBase58(s)
	return ok && len(b) == 64
}

// TronAddressPrefix is the version byte of Tron addresses: an address is this byte and the
// 20-byte account id (the last 20 bytes of the Keccak-256 hash of the public key, as on EVM
// chains), written in Base58Check (TRON documentation, "Account Model": TRON address generation
// and the Base58Check calculation).
const TronAddressPrefix = 0x41

// Why CheckTronAddress refuses an address.
var (
	// ErrNotTronAddress: not Base58Check of 25 bytes (34 characters starting with T).
	ErrNotTronAddress = errors.New("not a Tron address (Base58Check, 34 characters starting with T)")
	// ErrTronChecksum: the Base58Check checksum does not match, so a character is likely
	// mistyped.
	ErrTronChecksum = errors.New("the Tron address has a wrong Base58Check checksum; check it for a mistyped character")
	// ErrTronPrefix: Base58Check of 21 bytes, but not with Tron's version byte 0x41.
	ErrTronPrefix = errors.New("not a Tron address: the version byte is not 0x41")
)

// CheckTronAddress is the check of a Tron address in its usual form: Base58Check of the version
// byte 0x41 and 20 bytes, whose 4-byte checksum is the start of the double SHA-256 of those 21
// bytes. Such an address is always 34 characters starting with T.
func CheckTronAddress(s string) error {
	_, err := TronAddressBytes(s)
	return err
}

// IsTronAddress reports whether CheckTronAddress accepts s.
func IsTronAddress(s string) bool { return CheckTronAddress(s) == nil }

// TronAddressBytes is the 20-byte account id of a Base58Check Tron address.
func TronAddressBytes(s string) ([20]byte, error) {
	var out [20]byte
	if len(s) != 34 || s[0] != 'T' {
		return out, ErrNotTronAddress
	}
	b, ok := decodeBase58(s)
	if !ok || len(b) != 25 {
		return out, ErrNotTronAddress
	}
	sum := doubleSHA256(b[:21])
	if string(sum[:4]) != string(b[21:]) {
		return out, ErrTronChecksum
	}
	if b[0] != TronAddressPrefix {
		return out, ErrTronPrefix
	}
	copy(out[:], b[1:21])
	return out, nil
}

// TronAddress is the Base58Check form of a 20-byte account id (as Tron's JSON-RPC, and EVM
// tooling, write it without the 0x41 prefix).
func TronAddress(id [20]byte) string {
	raw := make([]byte, 0, 25)
	raw = append(raw, TronAddressPrefix)
	raw = append(raw, id[:]...)
	sum := doubleSHA256(raw)
	return encodeBase58(append(raw, sum[:4]...))
}

// TronAddressFromHex reads a Tron address in one of its hex forms: 0x and 20 bytes (the
// JSON-RPC and EVM form, any case), or 41 and 20 bytes (Tron's HTTP API form), and returns its
// Base58Check form.
func TronAddressFromHex(s string) (string, error) {
	digits := strings.ToLower(s)
	switch {
	case len(digits) == 42 && strings.HasPrefix(digits, "0x"):
		digits = digits[2:]
	case len(digits) == 42 && strings.HasPrefix(digits, "41"):
		digits = digits[2:]
	default:
		return "", errors.New("not a Tron address in hex (0x or 41, then 40 hex digits)")
	}
	b, err := hex.DecodeString(digits)
	if err != nil {
		return "", errors.New("not a Tron address in hex (0x or 41, then 40 hex digits)")
	}
	var id [20]byte
	copy(id[:], b)
	return TronAddress(id), nil
}

// TronAddressToHex is the 0x form (lower case) of a Base58Check Tron address: the 20 bytes
// Tron's Ethereum-compatible JSON-RPC takes and returns.
func TronAddressToHex(s string) (string, error) {
	id, err := TronAddressBytes(s)
	if err != nil {
		return "", err
	}
	return "0x" + hex.EncodeToString(id[:]), nil
}

// IsTronTxID reports whether s is a Tron transaction id: 64 hex digits, as Tron writes them
// (without 0x).
func IsTronTxID(s string) bool { return tronTxID.MatchString(s) }

var tronTxID = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

func doubleSHA256(b []byte) [32]byte {
	h := sha256.Sum256(b)
	return sha256.Sum256(h[:])
}

// encodeBase58 encodes b in the Bitcoin alphabet, each leading zero byte as a '1'.
func encodeBase58(b []byte) string {
	n := new(big.Int).SetBytes(b)
	radix := big.NewInt(58)
	mod := new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, base58Digits[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// decodeBase58 decodes Bitcoin-alphabet base58, keeping leading zero bytes.
func decodeBase58(s string) ([]byte, bool) {
	if !base58Chars.MatchString(s) {
		return nil, false
	}
	n := new(big.Int)
	radix := big.NewInt(58)
	for i := 0; i < len(s); i++ {
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(indexByte(base58Digits, s[i]))))
	}
	out := n.Bytes()
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	return append(make([]byte, zeros), out...), true
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// SenderKey is one spelling per account key of a sending address, so that the wallet a caller
// declared and the sender a chain reports compare equal whatever their network writes: an EVM
// address in lower case; a Tron address (Base58Check T..., or 41/0x hex) as the 0x form of its
// 20-byte account id, which is the EVM address of the same key (spec 4.10 takes a Tron sender as
// its EVM-format body); anything else (Solana) as it is. It is a comparison key, never an
// address to send to.
func SenderKey(addr string) string {
	a := strings.TrimSpace(addr)
	if evmAddress.MatchString(a) {
		return strings.ToLower(a)
	}
	if id, err := TronAddressBytes(a); err == nil {
		return "0x" + hex.EncodeToString(id[:])
	}
	if len(a) == 42 && (strings.HasPrefix(a, "41")) {
		if b, err := hex.DecodeString(a[2:]); err == nil && len(b) == 20 {
			return "0x" + strings.ToLower(a[2:])
		}
	}
	return a
}

// SameSender reports whether two sending addresses are the same account key (see SenderKey);
// an empty address is nobody's.
func SameSender(a, b string) bool {
	ka, kb := SenderKey(a), SenderKey(b)
	return ka != "" && ka == kb
}

// RefundAddressOnBase is the address on Base that a refund of a deposit sent by sender goes to,
// and whether there is one. Refunds are sent in USDC on Base (spec 3.1, refund_tx_hash) to the
// deposit's sender, so the sender's key must hold an address there: an EVM sender is that
// address (in lower case); a Tron sender (Base58Check T..., as the Tron watcher records it) is
// the 0x form of its 20-byte account id, which is the EVM address of the same secp256k1 key
// (Tron derives its account id as EVM chains do) and is the EVM-format wallet_address a v1 tron
// transfer declares (spec 4.10). A Solana sender's key is ed25519 and has no address on Base.
func RefundAddressOnBase(sender string) (string, bool) {
	a := strings.TrimSpace(sender)
	if IsEVMAddress(a) {
		return strings.ToLower(a), true
	}
	if id, err := TronAddressBytes(a); err == nil {
		return "0x" + hex.EncodeToString(id[:]), true
	}
	return "", false
}
