// Package chain knows the blockchains deposits arrive on: address and transaction-hash formats.
package chain

import (
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
