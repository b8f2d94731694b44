package chain

import (
	"encoding/hex"
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

// TestTronAddressVectors: Base58Check addresses and their hex forms as Tron writes them. The
// USDT contract is Tether's on Tron mainnet (Tronscan: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t,
// hex 41a614f803b6fd780986a42c78ec9c7f77e6ded13c); the zero account id is Tron's well-known
// "black hole" address; the third pair is the example of TRON's wallet-cli documentation
// ("wallet-cli encoding convert").
func TestTronAddressVectors(t *testing.T) {
	for _, v := range []struct{ base58, hex41 string }{
		{"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"},
		{"T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb", "410000000000000000000000000000000000000000"},
		{"TBhCfAytTEh52WFL6HYr64i2nmc3u3TCUp", "4112e94f5a3c88b17d2f6e0b9a45cd310f8e7a6d29"},
	} {
		if !IsTronAddress(v.base58) {
			t.Errorf("IsTronAddress(%s) = false: %v", v.base58, CheckTronAddress(v.base58))
		}
		got, err := TronAddressToHex(v.base58)
		if err != nil || got != "0x"+v.hex41[2:] {
			t.Errorf("TronAddressToHex(%s) = %s, %v; want 0x%s", v.base58, got, err, v.hex41[2:])
		}
		for _, h := range []string{v.hex41, "0x" + v.hex41[2:], "0x" + strings.ToUpper(v.hex41[2:])} {
			if got, err := TronAddressFromHex(h); err != nil || got != v.base58 {
				t.Errorf("TronAddressFromHex(%s) = %s, %v; want %s", h, got, err, v.base58)
			}
		}
	}
}

func TestTronAddressRoundTrip(t *testing.T) {
	for i := 0; i < 256; i++ {
		var id [20]byte
		for j := range id {
			id[j] = byte(i*31 + j*7)
		}
		if i%17 == 0 {
			id = [20]byte{} // leading zero bytes too
			id[19] = byte(i)
		}
		s := TronAddress(id)
		if len(s) != 34 || s[0] != 'T' {
			t.Fatalf("TronAddress(%x) = %s: not 34 characters starting with T", id, s)
		}
		back, err := TronAddressBytes(s)
		if err != nil || back != id {
			t.Fatalf("TronAddressBytes(%s) = %x, %v; want %x", s, back, err, id)
		}
	}
}

func TestTronAddressRefusals(t *testing.T) {
	good := "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
	cases := []struct {
		s    string
		want error
	}{
		{"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6T", ErrTronChecksum}, // last character's case flipped
		{"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj7t", ErrTronChecksum}, // a digit mistyped
		{good[:33], ErrNotTronAddress},
		{good + "1", ErrNotTronAddress},
		{"0xa614f803b6fd780986a42c78ec9c7f77e6ded13c", ErrNotTronAddress},
		{"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj60", ErrNotTronAddress}, // 0 is not base58
		// Base58Check of 21 bytes with Bitcoin's version byte 0x00 is 34 characters too, but
		// starts with 1: refused by its shape
		{"1111111111111111111114oLvT2", ErrNotTronAddress},
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", ErrNotTronAddress}, // a Solana mint
		{"", ErrNotTronAddress},
	}
	for _, tc := range cases {
		if err := CheckTronAddress(tc.s); err != tc.want {
			t.Errorf("CheckTronAddress(%q) = %v, want %v", tc.s, err, tc.want)
		}
	}
	if IsSolanaAddress(good) || IsEVMAddress(good) {
		t.Error("a Tron address passes as another chain's")
	}
	for _, bad := range []string{"0x12", "42a614f803b6fd780986a42c78ec9c7f77e6ded13c", "0xg614f803b6fd780986a42c78ec9c7f77e6ded13c"} {
		if _, err := TronAddressFromHex(bad); err == nil {
			t.Errorf("TronAddressFromHex(%q) accepted", bad)
		}
	}
	if !IsTronTxID(strings.Repeat("ab", 32)) || IsTronTxID("0x"+strings.Repeat("ab", 32)) {
		t.Error("IsTronTxID: 64 hex digits without 0x")
	}
}

// TestTronAddressOtherVersionByte: Base58Check of 21 bytes with a version byte next to 0x41
// can still read as 34 characters starting with T; the version byte refuses it.
func TestTronAddressOtherVersionByte(t *testing.T) {
	found := false
	for _, version := range []byte{0x40, 0x42} {
		for i := 0; i < 64; i++ {
			raw := append([]byte{version}, make([]byte, 20)...)
			raw[20] = byte(i)
			raw[1] = byte(255 - i)
			sum := doubleSHA256(raw)
			s := encodeBase58(append(raw, sum[:4]...))
			if len(s) != 34 || s[0] != 'T' {
				continue
			}
			found = true
			if err := CheckTronAddress(s); err != ErrTronPrefix {
				t.Fatalf("CheckTronAddress(%s) (version %#x) = %v, want ErrTronPrefix", s, version, err)
			}
		}
	}
	if !found {
		t.Fatal("no T... string with another version byte was built; the test checks nothing")
	}
}

func TestSameSender(t *testing.T) {
	evm := "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	id := [20]byte{}
	b, _ := hex.DecodeString(strings.ToLower(evm[2:]))
	copy(id[:], b)
	tron := TronAddress(id)
	cases := []struct {
		a, b string
		want bool
	}{
		{evm, strings.ToLower(evm), true},
		{evm, tron, true},
		{tron, "41" + strings.ToLower(evm[2:]), true},
		{evm, "0x0000000000000000000000000000000000000001", false},
		{"", "", false},
		{"So11111111111111111111111111111111111111112", "So11111111111111111111111111111111111111112", true},
		{"So11111111111111111111111111111111111111112", strings.ToLower("So11111111111111111111111111111111111111112"), false},
	}
	for _, c := range cases {
		if got := SameSender(c.a, c.b); got != c.want {
			t.Errorf("SameSender(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestRefundAddressOnBase: an EVM sender is refunded at itself, a Tron sender at its 0x body
// (the same key's EVM address, which SameSender takes as the same sender), a Solana sender and
// anything unreadable nowhere.
func TestRefundAddressOnBase(t *testing.T) {
	evm := "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	for _, c := range []struct {
		sender, want string
		ok           bool
	}{
		{evm, strings.ToLower(evm), true},
		{strings.ToLower(evm), strings.ToLower(evm), true},
		{"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "0xa614f803b6fd780986a42c78ec9c7f77e6ded13c", true},
		{"TBhCfAytTEh52WFL6HYr64i2nmc3u3TCUp", "0x12e94f5a3c88b17d2f6e0b9a45cd310f8e7a6d29", true},
		{"7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV", "", false}, // Solana
		{"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6T", "", false},          // a Tron address with a wrong checksum
		{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "", false},  // a wrong EIP-55 checksum
		{"", "", false},
	} {
		got, ok := RefundAddressOnBase(c.sender)
		if got != c.want || ok != c.ok {
			t.Errorf("RefundAddressOnBase(%q) = %q, %v; want %q, %v", c.sender, got, ok, c.want, c.ok)
		}
		if ok && !SameSender(got, c.sender) {
			t.Errorf("RefundAddressOnBase(%q) = %s, which is not the same sender", c.sender, got)
		}
	}
}
