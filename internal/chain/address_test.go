package chain

import (
	"strings"
	"testing"
)

func TestAddressFormats(t *testing.T) {
	cases := []struct {
		s           string
		evm, solana bool
	}{
		{"0x8ba1f109551bD432803012645Ac136ddd64DBA72", true, false},
		{"0x8ba1f109551bd432803012645ac136ddd64dba72", true, false},
		{"0x8ba1f109551bD432803012645Ac136ddd64DBA7", false, false},
		{"8ba1f109551bD432803012645Ac136ddd64DBA72aa", false, false},
		{"0xZZa1f109551bD432803012645Ac136ddd64DBA72", false, false},
		// the System Program and a real mint (USDC on Solana)
		{"11111111111111111111111111111111", false, true},
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", false, true},
		{"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", false, false}, // decodes to 33 bytes
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt10", false, false}, // 0 is not base58
		{"", false, false},
	}
	for _, tc := range cases {
		if got := IsEVMAddress(tc.s); got != tc.evm {
			t.Errorf("IsEVMAddress(%q) = %v", tc.s, got)
		}
		if got := IsSolanaAddress(tc.s); got != tc.solana {
			t.Errorf("IsSolanaAddress(%q) = %v", tc.s, got)
		}
	}
}

func TestTxHashFormats(t *testing.T) {
	if !IsEVMTxHash("0x" + strings.Repeat("aB", 32)) {
		t.Error("a 64-hex-digit hash is an EVM tx hash")
	}
	if IsEVMTxHash("0x" + strings.Repeat("a", 63)) {
		t.Error("63 hex digits is not an EVM tx hash")
	}
	// a real mainnet signature (88 characters)
	sig := "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
	if !IsSolanaSignature(sig) {
		t.Errorf("IsSolanaSignature(%q) = false", sig)
	}
	if IsSolanaSignature(sig[:80]) {
		t.Error("80 characters is too short for a signature")
	}
}
