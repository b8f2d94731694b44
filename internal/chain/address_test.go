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

// TestEIP55: the examples of EIP-55 itself; a mixed-case address with one letter's case
// flipped fails its checksum; all lower and all upper carry none and pass.
func TestEIP55(t *testing.T) {
	for _, good := range []string{
		// EIP-55, "Test Cases"
		"0x52908400098527886E0F7030069857D2E4169EE7",
		"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
		"0xde709f2102306220921060314715629080e2fb77",
		"0x27b1fdb04752bbc536007a920d24acb045561c26",
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	} {
		if err := CheckEVMAddress(good); err != nil {
			t.Errorf("CheckEVMAddress(%s) = %v", good, err)
		}
		mixed := good[2:] != strings.ToLower(good[2:]) && good[2:] != strings.ToUpper(good[2:])
		if got := ChecksumEVMAddress(strings.ToLower(good)); mixed && got != good {
			t.Errorf("ChecksumEVMAddress(%s) = %s, want %s", strings.ToLower(good), got, good)
		}
		for _, flat := range []string{"0x" + strings.ToLower(good[2:]), "0x" + strings.ToUpper(good[2:])} {
			if err := CheckEVMAddress(flat); err != nil {
				t.Errorf("CheckEVMAddress(%s) = %v; a single case carries no checksum", flat, err)
			}
		}
	}
	for _, bad := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", // last letter's case flipped
		"0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", // second letter's case flipped
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d358", // one digit changed
		"0x8Ba1f109551bD432803012645Ac136ddd64DBA72",
	} {
		if err := CheckEVMAddress(bad); err != ErrEVMChecksum || IsEVMAddress(bad) {
			t.Errorf("CheckEVMAddress(%s) = %v, want ErrEVMChecksum", bad, err)
		}
	}
	for _, notAddress := range []string{"", "0x", "0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd"} {
		if err := CheckEVMAddress(notAddress); err != ErrNotEVMAddress {
			t.Errorf("CheckEVMAddress(%q) = %v, want ErrNotEVMAddress", notAddress, err)
		}
	}
}
