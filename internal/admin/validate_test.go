package admin

import (
	"strconv"
	"strings"
	"testing"
)

func itoa(i int) string { return strconv.Itoa(i) }

func TestValidateAccountName(t *testing.T) {
	for _, ok := range []string{"a", "acme", "acme-eu-1", "0x", strings.Repeat("a", 50)} {
		if err := ValidateAccountName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Acme", "acme_eu", "-acme", "acme-", "acme.eu", strings.Repeat("a", 51), "orphaned"} {
		if err := ValidateAccountName(bad); err == nil || !strings.Contains(err.Error(), "account name") {
			t.Errorf("%q: got %v, want an account-name error", bad, err)
		}
	}
}

func TestValidateWalletAddress(t *testing.T) {
	for _, ok := range []string{
		"0x8ba1f109551bD432803012645Ac136ddd64DBA72",
		"0x8ba1f109551bd432803012645ac136ddd64dba72",
		"0X8BA1F109551BD432803012645AC136DDD64DBA72",
		"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", // 44 characters
		"11111111111111111111111111111111",             // 32 characters
	} {
		if err := ValidateWalletAddress(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"",
		"0x8ba1f109551bD432803012645Ac136ddd64DBA7",   // 39 hex digits
		"0x8ba1f109551bD432803012645Ac136ddd64DBA72a", // 41
		"0x8ba1f109551bD432803012645Ac136ddd64DBAZZ",
		"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T1", // 45 characters
		"1111111111111111111111111111111",               // 31
		"0OIl1111111111111111111111111111111",           // not base58
		"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",  // base58, but 33 bytes: no Solana key
	} {
		if err := ValidateWalletAddress(bad); err == nil || !strings.Contains(err.Error(), "not an EVM address") {
			t.Errorf("%q: got %v, want a wallet-address error", bad, err)
		}
	}
	// a mixed-case EVM address is checked against its EIP-55 checksum, as the facade does
	for _, bad := range []string{"0x8Ba1f109551bD432803012645Ac136ddd64DBA72", "0xDEADbeef00000000000000000000000000000001"} {
		if err := ValidateWalletAddress(bad); err == nil || !strings.Contains(err.Error(), "wrong EIP-55 checksum") {
			t.Errorf("%q: got %v, want a checksum error", bad, err)
		}
	}
}

func TestValidateKeyID(t *testing.T) {
	if err := ValidateKeyID("0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "short", "0123456789ABCDEF", "0123_4567_89ab"} {
		if err := ValidateKeyID(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	secret := strings.Repeat("ab", 32)
	err := ValidateKeyID("svc_live_0123456789abcdef_" + secret)
	if err == nil || !strings.Contains(err.Error(), "pass only its key id 0123456789abcdef") {
		t.Fatalf("full key: got %v", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error repeats the secret: %v", err)
	}
}

func TestValidateTransferID(t *testing.T) {
	if err := ValidateTransferID("0123456789abcdef01234567"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "0123456789abcdef0123456", "0123456789ABCDEF01234567", "0123456789abcdef012345678"} {
		if err := ValidateTransferID(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestValidateBlockReason(t *testing.T) {
	if err := validateBlockReason(strings.Repeat("x", 256)); err != nil {
		t.Fatal(err)
	}
	if err := validateBlockReason(strings.Repeat("x", 257)); err == nil {
		t.Fatal("a 257-character reason was accepted")
	}
}
