package admin

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/emailaddr"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// The rules below repeat the CRD schema (api/v1alpha1) on purpose: the API server would refuse
// the same values, but with messages about JSON paths instead of flags.
var (
	accountNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	decimalPattern     = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.([0-9]+))?$`)
	keyIDPattern       = regexp.MustCompile(`^[a-z0-9]{8,40}$`)
	transferIDPattern  = regexp.MustCompile(`^[0-9a-f]{24}$`)
)

const (
	maxAccountNameLen = 50
	maxAllowedIPs     = 64
	maxReasonLen      = 256
	usdDecimals       = 2
	percentDecimals   = 18
)

var maxUSDAmount = decimal.NewFromInt(1_000_000)

// ValidateAccountName checks that name can name an account: a DNS label of at most 50
// characters, so that its namespace payout-<name> is a valid namespace name too.
func ValidateAccountName(name string) error {
	if name == "" {
		return invalid(FieldAccountName, name, "an account name is required")
	}
	if len(name) > maxAccountNameLen || !accountNamePattern.MatchString(name) {
		return invalid(FieldAccountName, name, fmt.Sprintf(
			"use at most %d lower-case letters, digits and '-', starting and ending with a letter or digit", maxAccountNameLen))
	}
	if name == payoutv1.OrphanAccountName {
		return invalid(FieldAccountName, name, fmt.Sprintf("the name %s is reserved: namespace %s holds the deposits of deleted accounts", name, payoutv1.OrphanNamespace))
	}
	return nil
}

// validateEmail accepts the addresses the service sends mail to (emailaddr.Check): the
// account's e-mail is the default customer_email of v2 transfers.
func validateEmail(email string) error {
	if emailaddr.Check(email) != nil {
		return invalid(FieldEmail, email, "not an e-mail address such as ops@example.com")
	}
	return nil
}

// validateUSDAmount accepts "" (not set) and the schema's USD amounts: at most two decimals,
// from 0 to 1000000.
func validateUSDAmount(field, v string) error {
	if v == "" {
		return nil
	}
	d, err := parseDecimal(field, v, usdDecimals, "a USD amount")
	if err != nil {
		return err
	}
	if d.GreaterThan(maxUSDAmount) {
		return invalid(field, v, "a USD amount is at most 1000000")
	}
	return nil
}

// validatePercent accepts "" (not set) and the service fee percentages pricing can apply: at
// least 0 and below 100 (1.5 means 1.5%; pricing.CheckServiceFeePercent is the rule).
func validatePercent(field, v string) error {
	if v == "" {
		return nil
	}
	d, err := parseDecimal(field, v, percentDecimals, "a percentage")
	if err != nil {
		return err
	}
	if pricing.CheckServiceFeePercent(d) != nil {
		return invalid(field, v, "a service fee percentage is below 100 (0 to 99.99…)")
	}
	return nil
}

// parseDecimal reads a plain non-negative decimal (no sign, exponent or leading zeros) with at
// most maxDecimals decimals. The text is checked before shopspring parses it, so nothing is
// rounded on the way.
func parseDecimal(field, v string, maxDecimals int, what string) (decimal.Decimal, error) {
	m := decimalPattern.FindStringSubmatch(v)
	if m == nil {
		return decimal.Decimal{}, invalid(field, v, what+" is a non-negative decimal number such as 25.00")
	}
	if len(m[3]) > maxDecimals {
		return decimal.Decimal{}, invalid(field, v, fmt.Sprintf("%s has at most %d decimals", what, maxDecimals))
	}
	return decimal.RequireFromString(v), nil
}

// normalizeAllowedIPs turns the allow-list into the CIDRs the schema stores. A bare address
// means that one address (/32 for IPv4, /128 for IPv6). A CIDR with host bits set (10.0.0.5/24)
// is refused rather than widened silently: it is more often a typo than a wish. Duplicates are
// dropped, since the list is a set.
func normalizeAllowedIPs(entries []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		p, err := parseAllowedIP(strings.TrimSpace(e))
		if err != nil {
			return nil, err
		}
		if s := p.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) > maxAllowedIPs {
		return nil, invalid(FieldAllowedIPs, strings.Join(entries, ","), fmt.Sprintf("at most %d entries", maxAllowedIPs))
	}
	return out, nil
}

func parseAllowedIP(e string) (netip.Prefix, error) {
	if e == "" {
		return netip.Prefix{}, invalid(FieldAllowedIPs, e, "empty entry; give CIDRs such as 192.0.2.0/24, separated by commas")
	}
	if !strings.Contains(e, "/") {
		a, err := netip.ParseAddr(e)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, invalid(FieldAllowedIPs, e, "not an IP address or a CIDR such as 192.0.2.0/24")
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(e)
	if err != nil {
		return netip.Prefix{}, invalid(FieldAllowedIPs, e, "not a CIDR such as 192.0.2.0/24")
	}
	if p != p.Masked() {
		return netip.Prefix{}, invalid(FieldAllowedIPs, e, fmt.Sprintf("host bits are set; the network is %s", p.Masked()))
	}
	return p, nil
}

// ValidateWalletAddress accepts the wallets the facade accepts (chain.CheckEVMAddress,
// chain.IsSolanaAddress): EVM addresses, 0x and 40 hex digits, whose EIP-55 checksum is right
// when they are in mixed case (all lower or all upper case carry none), and Solana addresses
// (base58 of a 32-byte key, 32 to 44 characters). Surrounding space and an upper-case 0X are
// forgiven; stored, EVM addresses are lower case and compare case-insensitively.
func ValidateWalletAddress(address string) error {
	a := strings.TrimSpace(address)
	if strings.HasPrefix(a, "0X") {
		a = "0x" + a[2:]
	}
	if chain.IsSolanaAddress(a) {
		return nil
	}
	err := chain.CheckEVMAddress(a)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, chain.ErrEVMChecksum):
		return invalid(FieldWalletAddress, address, err.Error())
	}
	return invalid(FieldWalletAddress, address,
		"not an EVM address (0x and 40 hex digits) or a Solana address (32 to 44 base58 characters)")
}

// ValidateKeyID checks the <keyId> of svc_live_<keyId>_<secret>, and catches a full key given
// in its place.
func ValidateKeyID(keyID string) error {
	if id, ok := apikey.ParseKey(keyID); ok {
		return invalid(FieldKeyID, apikey.Prefix+id+"_…",
			"that is a full key; pass only its key id "+id+" (and treat the key as exposed)")
	}
	if !keyIDPattern.MatchString(keyID) {
		return invalid(FieldKeyID, keyID, "a key id is the <keyId> of svc_live_<keyId>_<secret>: 8 to 40 lower-case letters and digits")
	}
	return nil
}

// ValidateTransferID checks a transfer id: 24 lower-case hex digits.
func ValidateTransferID(id string) error {
	if !transferIDPattern.MatchString(id) {
		return invalid(FieldTransferID, id, "a transfer id is 24 lower-case hex digits")
	}
	return nil
}

func validateBlockReason(reason string) error {
	if len(reason) > maxReasonLen {
		return invalid(FieldBlockReason, reason, fmt.Sprintf("at most %d characters", maxReasonLen))
	}
	return nil
}
