// Package siwe reads and checks Sign-In with Ethereum messages (EIP-4361) and recovers their
// signer (EIP-191 personal_sign). No maintained EIP-4361 library is served to this project, so
// the parser is our own and strict: a message is accepted only when it is exactly the text its
// fields render to (Message.String), so two spellings of one message cannot both be signed.
package siwe

import (
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// MaxLen bounds a message: ours are a few hundred bytes, and a message is kept for audit.
const MaxLen = 2048

// Message is an EIP-4361 message. Times are kept as written (RFC 3339) and parsed on demand, so
// that the rendered text is the text signed.
type Message struct {
	// Domain is the RFC 3986 authority (host[:port]) asking for the signature.
	Domain string
	// Address is the signing account, EIP-55 mixed case.
	Address string
	// Statement is optional human-readable text; no line breaks.
	Statement string
	URI       string
	// Version is "1".
	Version        string
	ChainID        int64
	Nonce          string
	IssuedAt       string
	ExpirationTime string
	NotBefore      string
	RequestID      string
	Resources      []string
}

const header = " wants you to sign in with your Ethereum account:"

// String renders the message as EIP-4361 lays it out.
func (m *Message) String() string {
	var b strings.Builder
	b.WriteString(m.Domain + header + "\n" + m.Address + "\n\n")
	if m.Statement != "" {
		b.WriteString(m.Statement + "\n")
	}
	b.WriteString("\nURI: " + m.URI + "\nVersion: " + m.Version + "\nChain ID: " + strconv.FormatInt(m.ChainID, 10) +
		"\nNonce: " + m.Nonce + "\nIssued At: " + m.IssuedAt)
	if m.ExpirationTime != "" {
		b.WriteString("\nExpiration Time: " + m.ExpirationTime)
	}
	if m.NotBefore != "" {
		b.WriteString("\nNot Before: " + m.NotBefore)
	}
	if m.RequestID != "" {
		b.WriteString("\nRequest ID: " + m.RequestID)
	}
	if len(m.Resources) > 0 {
		b.WriteString("\nResources:")
		for _, r := range m.Resources {
			b.WriteString("\n- " + r)
		}
	}
	return b.String()
}

// Parse reads an EIP-4361 message strictly: every field in its place, the address in EIP-55
// case, version 1, a nonce of at least 8 letters and digits, RFC 3339 times, absolute URIs, and
// nothing before, after or between the lines the fields render to.
func Parse(text string) (*Message, error) {
	if len(text) > MaxLen {
		return nil, fmt.Errorf("the message is longer than %d bytes", MaxLen)
	}
	lines := strings.Split(text, "\n")
	next := func() (string, bool) {
		if len(lines) == 0 {
			return "", false
		}
		l := lines[0]
		lines = lines[1:]
		return l, true
	}
	m := &Message{}
	first, _ := next()
	domain, ok := strings.CutSuffix(first, header)
	if !ok || domain == "" || strings.ContainsAny(domain, " /") {
		return nil, errors.New("the first line must be `<domain> wants you to sign in with your Ethereum account:`")
	}
	m.Domain = domain
	m.Address, _ = next()
	if !common.IsHexAddress(m.Address) || !strings.HasPrefix(m.Address, "0x") || common.HexToAddress(m.Address).Hex() != m.Address {
		return nil, errors.New("the second line must be the signing address in EIP-55 mixed case")
	}
	if l, ok := next(); !ok || l != "" {
		return nil, errors.New("a blank line must follow the address")
	}
	l, _ := next()
	if l != "" {
		m.Statement = l
		if l, ok = next(); !ok || l != "" {
			return nil, errors.New("a blank line must follow the statement")
		}
	}
	field := func(name string, optional bool) (string, error) {
		if len(lines) == 0 || !strings.HasPrefix(lines[0], name+": ") {
			if optional {
				return "", nil
			}
			return "", fmt.Errorf("the line %q is missing or out of place", name+": ")
		}
		v, _ := next()
		v = strings.TrimPrefix(v, name+": ")
		if v == "" {
			return "", fmt.Errorf("%s is empty", name)
		}
		return v, nil
	}
	var err error
	if m.URI, err = field("URI", false); err != nil {
		return nil, err
	}
	if u, err := url.Parse(m.URI); err != nil || !u.IsAbs() {
		return nil, errors.New("URI must be an absolute URI")
	}
	if m.Version, err = field("Version", false); err != nil {
		return nil, err
	}
	if m.Version != "1" {
		return nil, errors.New("Version must be 1")
	}
	chain, err := field("Chain ID", false)
	if err != nil {
		return nil, err
	}
	if m.ChainID, err = strconv.ParseInt(chain, 10, 64); err != nil || m.ChainID <= 0 || strconv.FormatInt(m.ChainID, 10) != chain {
		return nil, errors.New("Chain ID must be a positive decimal integer")
	}
	if m.Nonce, err = field("Nonce", false); err != nil {
		return nil, err
	}
	if len(m.Nonce) < 8 || strings.IndexFunc(m.Nonce, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		return nil, errors.New("Nonce must be at least 8 letters and digits")
	}
	times := []struct {
		name     string
		to       *string
		optional bool
	}{{"Issued At", &m.IssuedAt, false}, {"Expiration Time", &m.ExpirationTime, true}, {"Not Before", &m.NotBefore, true}}
	for _, f := range times {
		if *f.to, err = field(f.name, f.optional); err != nil {
			return nil, err
		}
		if *f.to != "" {
			if _, err := time.Parse(time.RFC3339Nano, *f.to); err != nil {
				return nil, fmt.Errorf("%s must be an RFC 3339 time", f.name)
			}
		}
	}
	if m.RequestID, err = field("Request ID", true); err != nil {
		return nil, err
	}
	if len(lines) > 0 && lines[0] == "Resources:" {
		next()
		for len(lines) > 0 {
			r, _ := next()
			r, ok := strings.CutPrefix(r, "- ")
			if u, err := url.Parse(r); !ok || err != nil || !u.IsAbs() {
				return nil, errors.New("each resource must be a line `- <absolute URI>`")
			}
			m.Resources = append(m.Resources, r)
		}
		if len(m.Resources) == 0 {
			return nil, errors.New("Resources: lists no resource")
		}
	}
	if len(lines) > 0 {
		return nil, fmt.Errorf("unexpected text after the message's fields: %q", lines[0])
	}
	if m.String() != text {
		return nil, errors.New("the message is not in EIP-4361's layout")
	}
	return m, nil
}

// Time reads one of the message's times; the zero time when it is absent.
func Time(v string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, v)
	return t
}

// Recover returns the address whose key made signature (65 bytes, hex, as personal_sign gives
// it: r, s, and v of 27/28 or 0/1) over text under EIP-191's prefix. A signature with a high
// s (the malleable twin of a valid one) is refused.
func Recover(text, signature string) (common.Address, error) {
	sig, err := hexutil.Decode(signature)
	if err != nil || len(sig) != crypto.SignatureLength {
		return common.Address{}, errors.New("the signature must be 65 bytes in hex (0x...)")
	}
	if sig[64] >= 27 {
		sig[64] -= 27
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:64])
	if !crypto.ValidateSignatureValues(sig[64], r, s, true) {
		return common.Address{}, errors.New("the signature's values are out of range")
	}
	pub, err := crypto.SigToPub(accounts.TextHash([]byte(text)), sig)
	if err != nil {
		return common.Address{}, fmt.Errorf("the signature recovers no key: %w", err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}
