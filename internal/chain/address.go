// Package chain knows the blockchains deposits arrive on: address and transaction-hash formats.
package chain

import (
	"math/big"
	"regexp"
)

var (
	evmAddress   = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	evmTxHash    = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	base58Chars  = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]+$`)
	base58Digits = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
)

// IsEVMAddress reports whether s is an EVM address, 0x and 40 hex digits (any case).
func IsEVMAddress(s string) bool { return evmAddress.MatchString(s) }

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
