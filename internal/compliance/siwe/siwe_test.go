package siwe

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

func sample() *Message {
	return &Message{Domain: "kyc.example.com", Address: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
		Statement: "I prove control of this wallet for account acme.", URI: "https://kyc.example.com/verify", Version: "1",
		ChainID: 1, Nonce: "32891756abcdEFGH", IssuedAt: "2026-11-26T05:00:00Z", ExpirationTime: "2026-11-26T05:10:00Z"}
}

func TestParseRoundTrip(t *testing.T) {
	for name, m := range map[string]*Message{
		"with statement": sample(),
		"no statement":   func() *Message { m := sample(); m.Statement = ""; return m }(),
		"every field": func() *Message {
			m := sample()
			m.NotBefore, m.RequestID, m.Resources = "2026-11-26T05:00:00Z", "req-1", []string{"https://a.example/x", "ipfs://bafy"}
			return m
		}(),
	} {
		got, err := Parse(m.String())
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, m.String())
		}
		if got.String() != m.String() {
			t.Errorf("%s: parsed back as\n%s", name, got.String())
		}
	}
}

// The EIP's own example message parses, field by field.
func TestParseEIPExample(t *testing.T) {
	text := "service.org wants you to sign in with your Ethereum account:\n0xe5A12547fe4E872D192E3eCecb76F2Ce1aeA4946\n\n" +
		"I accept the ServiceOrg Terms of Service: https://service.org/tos\n\nURI: https://service.org/login\nVersion: 1\nChain ID: 1\n" +
		"Nonce: 32891757\nIssued At: 2021-09-30T16:25:24.000Z\nResources:\n- ipfs://Qme7ss3ARVgxv6rXqVPiikMJ8u2NLgmgszg13pYrDKEoiu\n" +
		"- https://example.com/my-web2-claim.json"
	m, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if m.Domain != "service.org" || m.Nonce != "32891757" || m.ChainID != 1 || len(m.Resources) != 2 || m.ExpirationTime != "" {
		t.Errorf("parsed %+v", m)
	}
}

func TestParseRefusesLooseMessages(t *testing.T) {
	good := sample().String()
	cases := map[string]string{
		"lower-case address":   strings.Replace(good, "0x8ba1f109551bD432803012645Ac136ddd64DBA72", "0x8ba1f109551bd432803012645ac136ddd64dba72", 1),
		"bad checksum":         strings.Replace(good, "0x8ba1f109551bD432803012645Ac136ddd64DBA72", "0x8Ba1f109551bD432803012645Ac136ddd64DBA72", 1),
		"version 2":            strings.Replace(good, "Version: 1", "Version: 2", 1),
		"short nonce":          strings.Replace(good, "Nonce: 32891756abcdEFGH", "Nonce: 1234567", 1),
		"nonce with a dash":    strings.Replace(good, "Nonce: 32891756abcdEFGH", "Nonce: 32891756-abcd", 1),
		"chain id 01":          strings.Replace(good, "Chain ID: 1", "Chain ID: 01", 1),
		"not a time":           strings.Replace(good, "Issued At: 2026-11-26T05:00:00Z", "Issued At: yesterday", 1),
		"trailing newline":     good + "\n",
		"CRLF":                 strings.ReplaceAll(good, "\n", "\r\n"),
		"extra line":           good + "\nFoo: bar",
		"fields swapped":       strings.Replace(strings.Replace(good, "Version: 1\nChain ID: 1", "Chain ID: 1\nVersion: 1", 1), "", "", 1),
		"relative URI":         strings.Replace(good, "URI: https://kyc.example.com/verify", "URI: /verify", 1),
		"domain with a path":   strings.Replace(good, "kyc.example.com wants", "kyc.example.com/x wants", 1),
		"no blank line":        strings.Replace(good, "DBA72\n\n", "DBA72\n", 1),
		"missing issued at":    strings.Replace(good, "Issued At: 2026-11-26T05:00:00Z\n", "", 1),
		"too long":             good + "\nResources:\n- https://x.example/" + strings.Repeat("a", MaxLen),
		"empty resources list": good + "\nResources:",
	}
	for name, text := range cases {
		if _, err := Parse(text); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestRecover(t *testing.T) {
	key, _ := crypto.GenerateKey()
	text := sample().String()
	sig, err := crypto.Sign(accounts.TextHash([]byte(text)), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27 // as personal_sign gives it
	got, err := Recover(text, hexutil.Encode(sig))
	if err != nil || got != crypto.PubkeyToAddress(key.PublicKey) {
		t.Fatalf("recovered %s, %v", got.Hex(), err)
	}
	if got, err := Recover(text+" ", hexutil.Encode(sig)); err == nil && got == crypto.PubkeyToAddress(key.PublicKey) {
		t.Error("a changed message recovered the signer")
	}
	// The high-s twin of the signature is as valid to secp256k1, and refused.
	twin := append([]byte(nil), sig...)
	s := new(big.Int).SetBytes(twin[32:64])
	s.Sub(crypto.S256().Params().N, s)
	s.FillBytes(twin[32:64])
	twin[64] ^= 1
	if _, err := Recover(text, hexutil.Encode(twin)); err == nil {
		t.Error("the high-s twin was accepted")
	}
	for _, bad := range []string{"", "0x", "0x1234", hexutil.Encode(sig)[:100]} {
		if _, err := Recover(text, bad); err == nil {
			t.Errorf("signature %q accepted", bad)
		}
	}
}
