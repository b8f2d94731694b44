package transfer

import (
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/emailaddr"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// Request is a create request of spec 4.10 or 4.11 with its fields' types checked.
type Request struct {
	QuoteID       string
	Amount        decimal.Decimal
	HasAmount     bool
	CustomerUUID  string
	CustomerEmail string
	Token         string
	Network       string
	Wallet        string
	KeepRecipient bool
}

// AdmitInput is what a transfer's create is judged on: the caller's account, the request, and
// the facts read for it. A fact's Err is the read that could not be made; the rule that needs
// the fact answers it (fail closed), the rules before it still go first.
type AdmitInput struct {
	Method  payoutv1.TransferMethod
	Account payoutv1.PayoutAccountSpec
	Now     time.Time
	// Wallet is wallet_address as the rules judged before decoding see it: "" when it is
	// missing or not a string.
	Wallet WalletFacts
	// Binding is the v2 wallet's binding to an account (spec 4.11, PayoutAccount bindWallets).
	Binding   BindingFacts
	Recipient RecipientFacts
	// Request is the decoded request; RequestErr its decoding's 400 (the request's field types).
	Request    Request
	RequestErr error
	Quote      QuoteFacts
	Option     OptionFacts
}

// WalletFacts is a sender wallet and what the compliance services said of it.
type WalletFacts struct {
	Address string
	// Given: the field is in the request, even as "" (the recipients' rule refuses a given "").
	Given bool
	// Verified and KYCErr: the KYC service's answer, asked when the account requires KYC and
	// the address is well formed.
	Verified bool
	KYCErr   error
	// Blocked and ScreenErr: the risk screening's answer, asked for an EVM address.
	Blocked   bool
	ScreenErr error
}

// BindingFacts is the holder of a v2 wallet's binding claim.
type BindingFacts struct {
	// Elsewhere: another account holds the wallet.
	Elsewhere bool
	Err       error
}

// RecipientFacts is recipientId and the recipient read for it.
type RecipientFacts struct {
	ID int64
	// Err: recipientId is missing or not an integer (400), or the read failed.
	Err error
	// Recipient is the account's recipient of that id, nil when the account has none.
	Recipient *payoutv1.Recipient
	// Elsewhere: another account has a recipient of that id.
	Elsewhere bool
}

// QuoteFacts is the quote named by quote_id, read when quote_id is a UUID.
type QuoteFacts struct {
	// Quote is the account's quote, nil when it has none of that id.
	Quote *payoutv1.Quote
	// Used: a transfer on the quote exists.
	Used bool
	Err  error
}

// OptionFacts is the deposit option of the request's token and network.
type OptionFacts struct {
	// Option is nil when the pair is not offered.
	Option *payoutv1.DepositOption
	Err    error
}

// Admit applies the rules of a transfer's create in the spec's order of precedence. Spec 4.10
// (v1): the KYC wallet (1, before any other processing: a request with a malformed field still
// gets its 403), wallet screening (2), v1 provisioning (3), the deployed smart wallet (4),
// recipient ownership (5), then the request's own fields, the quote and the deposit option
// (6, 400). Spec 4.11 (v2): on an account that screens wallets, an EVM wallet required and
// screened first; otherwise the KYC wallet; then the wallet's binding, the recipient, the
// request's fields, the quote and the deposit option. Rule 7 (customer_uuid, 409) is the
// claim's atomic create, after Admit.
func Admit(in AdmitInput) error {
	var rules []func(AdmitInput) error
	if in.Method == payoutv1.TransferV2 {
		rules = []func(AdmitInput) error{v2Wallet, binding, recipient, decoded, v2Fields, quote, option}
	} else {
		rules = []func(AdmitInput) error{kycWallet, screened, v1Enabled, smartWallet, recipient, decoded, v1Fields, quote, option}
	}
	for _, rule := range rules {
		if err := rule(in); err != nil {
			return err
		}
	}
	return nil
}

// kycWallet is rule 1 of spec 4.10.
func kycWallet(in AdmitInput) error {
	if !in.Account.KYCRequired {
		return nil
	}
	return SenderWallet(in.Wallet, "wallet_address", true, true)
}

// SenderWallet is the KYC wallet rule of every endpoint that takes a wallet (spec 4.5 rule 1,
// 4.7, 4.8, 4.10 rule 1, 4.11): when the account requires KYC the wallet must be given and
// verified for the account, and a KYC service that cannot answer fails closed. Before any other
// processing (transfers) a missing or malformed wallet is not a verified one, 403; elsewhere a
// given wallet must be well formed whether or not KYC is required (400), and a missing one is
// a missing required field (400).
func SenderWallet(w WalletFacts, field string, kycRequired, beforeAll bool) error {
	wellFormed := chain.IsEVMAddress(w.Address) || chain.IsSolanaAddress(w.Address)
	switch {
	case beforeAll && w.Address == "":
		return apierror.Errorf(apierror.Forbidden, "%s: a KYC-verified wallet is required on this account", field)
	case beforeAll && !wellFormed:
		return apierror.Errorf(apierror.Forbidden, "%s: the wallet is not KYC-verified for this account", field)
	case !beforeAll && w.Given && w.Address != "" && !wellFormed:
		if errors.Is(chain.CheckEVMAddress(w.Address), chain.ErrEVMChecksum) {
			return apierror.FieldErrorf(field, "%s", chain.ErrEVMChecksum)
		}
		return apierror.FieldErrorf(field, "must be an EVM address (0x and 40 hex digits) or a Solana address (base58, 32 to 44 characters)")
	case !kycRequired:
		return nil
	case w.Address == "":
		return apierror.FieldErrorf(field, "is required: this account requires a KYC-verified wallet")
	case w.KYCErr != nil:
		return w.KYCErr
	case !w.Verified:
		return apierror.Errorf(apierror.Forbidden, "%s: the wallet is not KYC-verified for this account", field)
	}
	return nil
}

// screened is rule 2 of spec 4.10: an EVM wallet is screened; a screening service that cannot
// answer fails closed.
func screened(in AdmitInput) error {
	if !chain.IsEVMAddress(in.Wallet.Address) {
		return nil
	}
	return screening(in.Wallet)
}

func screening(w WalletFacts) error {
	if w.ScreenErr != nil {
		return w.ScreenErr
	}
	if w.Blocked {
		return apierror.Errorf(apierror.Forbidden, "wallet_address: the wallet failed compliance screening")
	}
	return nil
}

// v1Enabled is rule 3 of spec 4.10.
func v1Enabled(in AdmitInput) error {
	if !in.Account.V1Enabled {
		return apierror.Errorf(apierror.Forbidden, "this account is not provisioned for v1 transfers")
	}
	return nil
}

// smartWallet is rule 4 of spec 4.10.
func smartWallet(in AdmitInput) error {
	if !in.Account.SmartWalletDeployed {
		return apierror.Errorf(apierror.Forbidden, "this account has no deployed smart-contract wallet")
	}
	return nil
}

// v2Wallet is the wallet rule of spec 4.11: on an account that screens wallets, an EVM wallet
// is required and screened before anything else (fail closed); otherwise the wallet is
// KYC-conditional, judged before any other processing.
func v2Wallet(in AdmitInput) error {
	w := in.Wallet
	switch {
	case in.Account.V2WalletScreening:
		if w.Address == "" {
			if w.Given {
				return apierror.FieldErrorf("wallet_address", "must be a string")
			}
			return apierror.FieldErrorf("wallet_address", "is required: wallets are screened on this account")
		}
		if chain.IsSolanaAddress(w.Address) {
			return apierror.FieldErrorf("wallet_address", "is a Solana address, but this account screens v2 sender wallets and "+
				"screening takes EVM wallets only (0x and 40 hex digits; spec 4.11). Send from an EVM wallet on an EVM network; "+
				"v2 transfers from Solana wallets need an account without v2 wallet screening")
		}
		if err := chain.CheckEVMAddress(w.Address); err != nil {
			return apierror.FieldErrorf("wallet_address", "%s (wallets are screened on this account, and only EVM wallets can be)", err)
		}
		return screening(w)
	case in.Account.KYCRequired:
		return SenderWallet(w, "wallet_address", true, true)
	}
	return nil
}

// binding refuses a v2 wallet bound to another account: its payments pay only that account's
// transfers.
func binding(in AdmitInput) error {
	if in.Binding.Err != nil {
		return in.Binding.Err
	}
	if in.Binding.Elsewhere {
		return apierror.Errorf(apierror.Forbidden, "wallet_address: the wallet %s is bound to another account: its v2 payments pay only that account's transfers", in.Wallet.Address)
	}
	return nil
}

// recipient is rule 5 of spec 4.10: another account's recipient is 403, an unknown one 404, a
// deleted one 400.
func recipient(in AdmitInput) error {
	r := in.Recipient
	switch {
	case r.Err != nil:
		return r.Err
	case r.Recipient == nil && r.Elsewhere:
		return apierror.Errorf(apierror.Forbidden, "recipient %d belongs to another account", r.ID)
	case r.Recipient == nil:
		return apierror.Errorf(apierror.NotFound, "recipient %d not found", r.ID)
	case r.Recipient.Spec.Deactivated:
		return inactiveRecipient(r.ID, r.Recipient)
	}
	return nil
}

// inactiveRecipient is rule 5's answer for a recipient that takes no more transfers.
func inactiveRecipient(id int64, rc *payoutv1.Recipient) error {
	if rc.Spec.ReplacedBy != nil {
		return apierror.FieldErrorf("recipientId", "recipient %d was updated; use its latest id %d", id, *rc.Spec.ReplacedBy)
	}
	return apierror.FieldErrorf("recipientId", "recipient %d is deleted and takes no transfers", id)
}

// decoded is the start of rule 6: the request's fields have their types.
func decoded(in AdmitInput) error {
	return in.RequestErr
}

// v1Fields applies rule 6 to the request's own fields: all required, the token usdc or usdt,
// and the sender an EVM-format wallet that can send on the network.
func v1Fields(in AdmitInput) error {
	req := in.Request
	if err := checkFields(req, []string{"usdc", "usdt"}, true); err != nil {
		return err
	}
	if req.Wallet == "" {
		return apierror.FieldErrorf("wallet_address", "is required")
	}
	if err := checkV1Wallet(req.Wallet); err != nil {
		return err
	}
	return checkWalletNetwork(req.Wallet, req.Network)
}

// v2Fields applies spec 4.11 to the request's own fields: usdc only, no tron, no solana on an
// account that screens (EVM) wallets, customer_email optional, and a given wallet an EVM or
// Solana address that can send on the network.
func v2Fields(in AdmitInput) error {
	req := in.Request
	if req.Token != "" && req.Token != "usdc" {
		return apierror.FieldErrorf("source_token", "v2 transfers take usdc only; use v1 for usdt")
	}
	if req.Network == string(payoutv1.NetworkTron) {
		return apierror.FieldErrorf("source_network", "tron is not available on v2; use v1")
	}
	if req.Network == string(payoutv1.NetworkSolana) && in.Account.V2WalletScreening {
		// The screened wallet is an EVM one, which cannot send on Solana: no deposit could match.
		return apierror.FieldErrorf("source_network", "solana cannot be used on this account: it screens v2 sender wallets, "+
			"screening takes EVM wallets only (spec 4.11), and an EVM wallet cannot send on solana. Use an EVM network; v2 transfers "+
			"on solana need an account without v2 wallet screening")
	}
	if err := checkFields(req, []string{"usdc"}, false); err != nil {
		return err
	}
	if req.Wallet == "" {
		return nil
	}
	if !chain.IsSolanaAddress(req.Wallet) {
		if err := chain.CheckEVMAddress(req.Wallet); err != nil {
			return apierror.FieldErrorf("wallet_address", "%s, or a Solana address (base58, 32 to 44 characters)", err)
		}
	}
	return checkWalletNetwork(req.Wallet, req.Network)
}

// checkFields validates the request's own fields (400); customer_email is optional on v2,
// where the account's e-mail stands in.
func checkFields(req Request, tokens []string, emailRequired bool) error {
	if req.QuoteID == "" {
		return apierror.FieldErrorf("quote_id", "is required")
	}
	if !req.HasAmount {
		return apierror.FieldErrorf("amount", "is required")
	}
	if req.CustomerUUID == "" {
		return apierror.FieldErrorf("customer_uuid", "is required")
	}
	if _, err := uuid.Parse(req.CustomerUUID); err != nil || len(req.CustomerUUID) != 36 {
		return apierror.FieldErrorf("customer_uuid", "must be a UUID such as 7d0e1c55-8d0f-4d4e-9f59-3c8a5b1f2e3d")
	}
	if req.CustomerEmail == "" && emailRequired {
		return apierror.FieldErrorf("customer_email", "is required")
	}
	if req.CustomerEmail != "" {
		if err := emailaddr.Check(req.CustomerEmail); err != nil {
			return apierror.FieldErrorf("customer_email", "%s", err)
		}
	}
	if req.Token == "" {
		return apierror.FieldErrorf("source_token", "is required")
	}
	found := false
	for _, t := range tokens {
		found = found || t == req.Token
	}
	if !found {
		return apierror.FieldErrorf("source_token", "must be one of %s", strings.Join(tokens, ", "))
	}
	if req.Network == "" {
		return apierror.FieldErrorf("source_network", "is required")
	}
	return nil
}

// checkV1Wallet applies the sender format of v1 (spec 4.10): EVM only, 0x and 40 hex digits. A
// Tron sender is given in that format too, as its 20-byte account id (Tron's hex form without
// the 0x41 version byte), which is the EVM address of the same key: a Base58Check (T...) or
// 41-prefixed address is refused with that form named, so the caller can send it instead.
func checkV1Wallet(wallet string) error {
	err := chain.CheckEVMAddress(wallet)
	if err == nil {
		return nil
	}
	if chain.IsTronAddress(wallet) || (len(wallet) == 42 && strings.HasPrefix(wallet, "41")) {
		if body := chain.SenderKey(wallet); chain.IsEVMAddress(body) {
			return apierror.FieldErrorf("wallet_address", "%s is a Tron address in Tron's spelling; v1 takes senders in EVM format only "+
				"(spec 4.10): give this Tron sender as %s, its 20-byte account id", wallet, body)
		}
	}
	return apierror.FieldErrorf("wallet_address", "%s; v1 takes senders in EVM format only (a Tron sender as the 0x form of its "+
		"20-byte account id), and no Solana sender", err)
}

// checkWalletNetwork refuses a wallet that cannot send on the network: deposits from it could
// not be matched, nor refunds sent back. On tron the wallet is the sender's EVM-format body
// (checkV1Wallet): the same key as the Base58Check sender the Tron watcher records
// (chain.SameSender).
func checkWalletNetwork(wallet, network string) error {
	ok := false
	switch payoutv1.Network(network) {
	case payoutv1.NetworkSolana:
		ok = chain.IsSolanaAddress(wallet)
	default: // the EVM networks, and tron
		ok = chain.IsEVMAddress(wallet)
	}
	if !ok {
		return apierror.FieldErrorf("wallet_address", "%s is not an address on %s", wallet, network)
	}
	return nil
}

// quote applies rule 6 to the amount and the quote: the amount has at most 2 decimals and is
// inside the service's and the account's bounds; the quote exists for this account, is
// unexpired and unused, was priced for the recipient's currency and type, delivers something,
// and matches the amount within 0.01.
func quote(in AdmitInput) error {
	amount, err := pricing.ParseAmount("amount", in.Request.Amount.String())
	if err != nil {
		return err
	}
	limits := in.Account.AmountLimits
	if err := pricing.CheckLimitsField("amount", amount, pricing.Limit(limits.Min), pricing.Limit(limits.Max)); err != nil {
		return err
	}
	if _, err := uuid.Parse(in.Request.QuoteID); err != nil {
		return apierror.FieldErrorf("quote_id", "no such quote")
	}
	f, rc := in.Quote, in.Recipient.Recipient
	if f.Err != nil {
		return f.Err
	}
	q := f.Quote
	switch {
	case q == nil:
		return apierror.FieldErrorf("quote_id", "no such quote for this account")
	case f.Used:
		return apierror.FieldErrorf("quote_id", "the quote was already used; get a new quote")
	case !in.Now.Before(q.Spec.ExpiresAt.Time):
		return apierror.FieldErrorf("quote_id", "the quote expired; get a new quote")
	case q.Spec.TargetCurrency != rc.Spec.Currency:
		return apierror.FieldErrorf("quote_id", "the quote is for %s but recipient %d is paid in %s", q.Spec.TargetCurrency, rc.Spec.ID, rc.Spec.Currency)
	case !quoteFitsType(q.Spec.RecipientType, rc.Spec.Type):
		return apierror.FieldErrorf("quote_id", "the quote was priced for %s recipients but recipient %d is %s; get a quote with recipientType=%s",
			recipientTypeText(q.Spec.RecipientType), rc.Spec.ID, rc.Spec.Type, rc.Spec.Type)
	case !decimalOf(string(q.Spec.TargetAmount)).IsPositive():
		return apierror.FieldErrorf("amount", "%s USD leaves nothing to pay out in %s after fees; send a larger amount", q.Spec.SourceAmount, q.Spec.TargetCurrency)
	}
	if amount.Sub(decimalOf(string(q.Spec.SourceAmount))).Abs().GreaterThan(decimal.New(1, -2)) {
		return apierror.FieldErrorf("amount", "must equal the quoted amount %s within 0.01", q.Spec.SourceAmount)
	}
	// The payout is priced for the amount sent (pricing.PayoutTarget): a cent under a quote that
	// barely delivers may deliver nothing.
	pays, err := pricing.PayoutTarget(QuoteSnapshot(q), payoutv1.USDAmount(amount.StringFixed(2)))
	if err != nil {
		return err
	}
	if !decimalOf(string(pays)).IsPositive() {
		return apierror.FieldErrorf("amount", "%s USD leaves nothing to pay out in %s after the quoted fees; send the quoted amount %s",
			amount.StringFixed(2), q.Spec.TargetCurrency, q.Spec.SourceAmount)
	}
	return nil
}

// option refuses a token/network pair that is not offered or is unavailable now (spec 2.3:
// unavailable options must not be used).
func option(in AdmitInput) error {
	req, f := in.Request, in.Option
	switch {
	case f.Err != nil:
		return f.Err
	case f.Option == nil:
		return apierror.FieldErrorf("source_network", "%s is not offered on %s (see GET /api/payouts/deposit-options)", req.Token, req.Network)
	case !f.Option.Spec.Enabled || !f.Option.Status.Available:
		return apierror.FieldErrorf("source_network", "%s on %s is unavailable at the moment (see GET /api/payouts/deposit-options)", req.Token, req.Network)
	}
	return nil
}

// QuoteSnapshot is what a transfer keeps of its quote.
func QuoteSnapshot(q *payoutv1.Quote) payoutv1.QuoteSnapshot {
	return payoutv1.QuoteSnapshot{
		SourceAmount: q.Spec.SourceAmount, ProviderCharge: q.Spec.ProviderCharge, ServiceFeePercent: q.Spec.ServiceFeePercent,
		ServiceFeeFixed: q.Spec.ServiceFeeFixed, TargetCurrency: q.Spec.TargetCurrency, USDToTargetRate: q.Spec.USDToTargetRate,
		TargetAmount: q.Spec.TargetAmount, TransferFee: q.Spec.TransferFee, EstimatedDelivery: q.Spec.EstimatedDelivery,
	}
}

// quoteFitsType: a quote for e-mail recipients has no transfer fee, so it pays e-mail
// recipients only, and an e-mail recipient takes only such a quote; a quote priced for a named
// bank account type pays that type.
func quoteFitsType(quoted, recipient string) bool {
	const email = "email_recipient"
	if quoted == email || recipient == email {
		return quoted == recipient
	}
	return quoted == "" || quoted == recipient
}

func recipientTypeText(t string) string {
	if t == "" {
		return "bank account"
	}
	return t
}

// decimalOf reads a stored amount, which the API server's schema validated.
func decimalOf(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		panic("stored decimal " + s + " is invalid: " + err.Error())
	}
	return d
}
