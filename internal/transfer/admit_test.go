package transfer

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
)

const (
	admitWallet = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	admitQuote  = "3f0c5f2e-6a1b-4c55-8d0f-9f593c8a5b1f"
)

var admitNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// admitted is a v1 create that every rule lets through; each case breaks it in its own way.
func admitted(method payoutv1.TransferMethod) AdmitInput {
	rc := &payoutv1.Recipient{Spec: payoutv1.RecipientSpec{ID: 42, Currency: "EUR", Type: "iban"}}
	q := &payoutv1.Quote{Spec: payoutv1.QuoteSpec{SourceAmount: "25.00", TargetCurrency: "EUR", USDToTargetRate: "0.9",
		TargetAmount: "22.00", ServiceFeePercent: "0", TransferFee: "0",
		ExpiresAt: metav1.NewTime(admitNow.Add(time.Minute))}}
	q.Name = admitQuote
	opt := &payoutv1.DepositOption{Spec: payoutv1.DepositOptionSpec{Enabled: true}, Status: payoutv1.DepositOptionStatus{Available: true}}
	return AdmitInput{
		Method:    method,
		Account:   payoutv1.PayoutAccountSpec{KYCRequired: true, V1Enabled: true, SmartWalletDeployed: true, V2WalletScreening: true},
		Now:       admitNow,
		Wallet:    WalletFacts{Address: admitWallet, Given: true, Verified: true},
		Recipient: RecipientFacts{ID: 42, Recipient: rc},
		Request: Request{QuoteID: admitQuote, Amount: decimal.RequireFromString("25.00"), HasAmount: true,
			CustomerUUID: "7d0e1c55-8d0f-4d4e-9f59-3c8a5b1f2e3d", CustomerEmail: "jane@example.com",
			Token: "usdc", Network: "base", Wallet: admitWallet},
		Quote:  QuoteFacts{Quote: q},
		Option: OptionFacts{Option: opt},
	}
}

// admitCase is a way to break a create: the answer Admit must give, as code and message.
type admitCase struct {
	name   string
	break_ func(*AdmitInput)
	code   apierror.Code
	text   string
}

// namesAmount: cases whose message names the request's amount, which other cases change; in a
// pair it is checked up to the amount.
var namesAmount = map[string]bool{"6 over the account's limit": true}

var errKYCDown = apierror.Errorf(apierror.Unavailable, "the KYC service is unavailable")
var errScreenDown = apierror.Errorf(apierror.Unavailable, "wallet screening is unavailable")

// v1Rules are spec 4.10's rules, in its order of precedence, one case (or more) each.
var v1Rules = []admitCase{
	{"1 no wallet", func(in *AdmitInput) { in.Wallet = WalletFacts{} }, apierror.Forbidden,
		"wallet_address: a KYC-verified wallet is required on this account"},
	{"1 malformed wallet", func(in *AdmitInput) { in.Wallet.Address = "0x12" }, apierror.Forbidden,
		"wallet_address: the wallet is not KYC-verified for this account"},
	{"1 KYC service down", func(in *AdmitInput) { in.Wallet.KYCErr = errKYCDown }, apierror.Unavailable, errKYCDown.Message},
	{"1 unverified", func(in *AdmitInput) { in.Wallet.Verified = false }, apierror.Forbidden,
		"wallet_address: the wallet is not KYC-verified for this account"},
	{"2 screening down", func(in *AdmitInput) { in.Wallet.ScreenErr = errScreenDown }, apierror.Unavailable, errScreenDown.Message},
	{"2 blocked", func(in *AdmitInput) { in.Wallet.Blocked = true }, apierror.Forbidden,
		"wallet_address: the wallet failed compliance screening"},
	{"3 no v1", func(in *AdmitInput) { in.Account.V1Enabled = false }, apierror.Forbidden,
		"this account is not provisioned for v1 transfers"},
	{"4 no smart wallet", func(in *AdmitInput) { in.Account.SmartWalletDeployed = false }, apierror.Forbidden,
		"this account has no deployed smart-contract wallet"},
	{"5 another account's", func(in *AdmitInput) { in.Recipient = RecipientFacts{ID: 42, Elsewhere: true} }, apierror.Forbidden,
		"recipient 42 belongs to another account"},
	{"5 unknown", func(in *AdmitInput) { in.Recipient = RecipientFacts{ID: 42} }, apierror.NotFound, "recipient 42 not found"},
	{"5 deleted", func(in *AdmitInput) { in.Recipient.Recipient.Spec.Deactivated = true }, apierror.Invalid,
		"recipientId: recipient 42 is deleted and takes no transfers"},
	{"6 a field's type", func(in *AdmitInput) { in.RequestErr = apierror.FieldErrorf("amount", "must be a number") }, apierror.Invalid,
		"amount: must be a number"},
	{"6 no customer_email", func(in *AdmitInput) { in.Request.CustomerEmail = "" }, apierror.Invalid, "customer_email: is required"},
	{"6 usdt elsewhere", func(in *AdmitInput) { in.Request.Token = "dai" }, apierror.Invalid, "source_token: must be one of usdc, usdt"},
	{"6 no wallet field", func(in *AdmitInput) { in.Request.Wallet = "" }, apierror.Invalid, "wallet_address: is required"},
	{"6 wallet not on network", func(in *AdmitInput) { in.Request.Network = "solana" }, apierror.Invalid,
		"wallet_address: " + admitWallet + " is not an address on solana"},
	{"6 three decimals", func(in *AdmitInput) { in.Request.Amount = decimal.RequireFromString("25.001") }, apierror.Invalid,
		"amount: must have at most 2 decimal places"},
	{"6 over the account's limit", func(in *AdmitInput) { max := payoutv1.USDAmount("20.00"); in.Account.AmountLimits.Max = &max },
		apierror.Invalid, "amount: 25.00 USD is above this account's maximum amount of 20.00 USD"},
	{"6 quote_id not a UUID", func(in *AdmitInput) { in.Request.QuoteID = "q1" }, apierror.Invalid, "quote_id: no such quote"},
	{"6 no such quote", func(in *AdmitInput) { in.Quote = QuoteFacts{} }, apierror.Invalid, "quote_id: no such quote for this account"},
	{"6 quote used", func(in *AdmitInput) { in.Quote.Used = true }, apierror.Invalid, "quote_id: the quote was already used; get a new quote"},
	{"6 quote expired", func(in *AdmitInput) { in.Now = in.Quote.Quote.Spec.ExpiresAt.Time }, apierror.Invalid,
		"quote_id: the quote expired; get a new quote"},
	{"6 quote's currency", func(in *AdmitInput) { in.Recipient.Recipient.Spec.Currency = "GBP" }, apierror.Invalid,
		"quote_id: the quote is for EUR but recipient 42 is paid in GBP"},
	{"6 quote's recipient type", func(in *AdmitInput) { in.Quote.Quote.Spec.RecipientType = "email_recipient" }, apierror.Invalid,
		"quote_id: the quote was priced for email_recipient recipients but recipient 42 is iban; get a quote with recipientType=iban"},
	{"6 quote delivers nothing", func(in *AdmitInput) { in.Quote.Quote.Spec.TargetAmount = "0.00" }, apierror.Invalid,
		"amount: 25.00 USD leaves nothing to pay out in EUR after fees; send a larger amount"},
	{"6 amount off by more than 0.01", func(in *AdmitInput) { in.Request.Amount = decimal.RequireFromString("25.02") }, apierror.Invalid,
		"amount: must equal the quoted amount 25.00 within 0.01"},
	{"6 option not offered", func(in *AdmitInput) { in.Option = OptionFacts{} }, apierror.Invalid,
		"source_network: usdc is not offered on base (see GET /api/payouts/deposit-options)"},
	{"6 option unavailable", func(in *AdmitInput) { in.Option.Option.Status.Available = false }, apierror.Invalid,
		"source_network: usdc on base is unavailable at the moment (see GET /api/payouts/deposit-options)"},
}

// v2Rules are spec 4.11's, in the order the v2 create applies them.
var v2Rules = []admitCase{
	{"unscreened, KYC: unverified", func(in *AdmitInput) { in.Account.V2WalletScreening, in.Wallet.Verified = false, false }, apierror.Forbidden, ""},
	{"screened: no wallet", func(in *AdmitInput) { in.Wallet = WalletFacts{} }, apierror.Invalid,
		"wallet_address: is required: wallets are screened on this account"},
	{"screened: a Solana wallet", func(in *AdmitInput) { in.Wallet.Address = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM" }, apierror.Invalid,
		"wallet_address: is a Solana address, but this account screens v2 sender wallets and screening takes EVM wallets only " +
			"(0x and 40 hex digits; spec 4.11). Send from an EVM wallet on an EVM network; v2 transfers from Solana wallets need " +
			"an account without v2 wallet screening"},
	{"screened: blocked", func(in *AdmitInput) { in.Wallet.Blocked = true }, apierror.Forbidden,
		"wallet_address: the wallet failed compliance screening"},
	{"bound elsewhere", func(in *AdmitInput) { in.Binding.Elsewhere = true }, apierror.Forbidden,
		"wallet_address: the wallet " + admitWallet + " is bound to another account: its v2 payments pay only that account's transfers"},
	{"recipient unknown", func(in *AdmitInput) { in.Recipient = RecipientFacts{ID: 42} }, apierror.NotFound, "recipient 42 not found"},
	{"usdt", func(in *AdmitInput) { in.Request.Token = "usdt" }, apierror.Invalid, "source_token: v2 transfers take usdc only; use v1 for usdt"},
	{"tron", func(in *AdmitInput) { in.Request.Network = "tron" }, apierror.Invalid, "source_network: tron is not available on v2; use v1"},
	{"quote used", func(in *AdmitInput) { in.Quote.Used = true }, apierror.Invalid, "quote_id: the quote was already used; get a new quote"},
	{"option unavailable", func(in *AdmitInput) { in.Option.Option.Status.Available = false }, apierror.Invalid,
		"source_network: usdc on base is unavailable at the moment (see GET /api/payouts/deposit-options)"},
}

func checkAdmit(t *testing.T, in AdmitInput, want admitCase, paired bool) {
	t.Helper()
	err := Admit(in)
	var ae *apierror.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want %s %q, got %v", want.code, want.text, err)
	}
	text, msg := want.text, ae.Message
	if paired && namesAmount[want.name] {
		text, msg = text[:len("amount: ")], msg[:min(len(msg), len("amount: "))]
	}
	if ae.Code != want.code || (text != "" && msg != text) {
		// a case without a text is one whose message depends on the other case of its pair
		t.Fatalf("want %s %q, got %s %q", want.code, want.text, ae.Code, ae.Message)
	}
}

// TestAdmitRuleByRule: each rule alone refuses with its own answer, and the create that breaks
// none is admitted.
func TestAdmitRuleByRule(t *testing.T) {
	for method, rules := range map[payoutv1.TransferMethod][]admitCase{payoutv1.TransferV1: v1Rules, payoutv1.TransferV2: v2Rules} {
		if err := Admit(admitted(method)); err != nil {
			t.Fatalf("%s: the unbroken create is refused: %v", method, err)
		}
		for _, c := range rules {
			t.Run(string(method)+"/"+c.name, func(t *testing.T) {
				in := admitted(method)
				c.break_(&in)
				checkAdmit(t, in, c, false)
			})
		}
	}
}

// TestAdmitInSpecOrder: a create that breaks two rules gets the answer of the one the spec lists
// first, for every pair of cases (two of one rule: the one it checks first).
func TestAdmitInSpecOrder(t *testing.T) {
	for method, rules := range map[payoutv1.TransferMethod][]admitCase{payoutv1.TransferV1: v1Rules, payoutv1.TransferV2: v2Rules} {
		for i, first := range rules {
			for _, later := range rules[i+1:] {
				t.Run(string(method)+"/"+first.name+" before "+later.name, func(t *testing.T) {
					in := admitted(method)
					later.break_(&in)
					first.break_(&in)
					checkAdmit(t, in, first, true)
				})
			}
		}
	}
}

// TestSenderWalletOutsideTransfers: on the recipients' endpoints a malformed wallet is a 400
// whether or not KYC is required, and a missing one a 400 only when it is.
func TestSenderWalletOutsideTransfers(t *testing.T) {
	cases := []struct {
		w        WalletFacts
		kyc      bool
		code     apierror.Code
		text     string
		admitted bool
	}{
		{WalletFacts{}, false, "", "", true},
		{WalletFacts{Address: "0x12", Given: true}, false, apierror.Invalid,
			"wallet: must be an EVM address (0x and 40 hex digits) or a Solana address (base58, 32 to 44 characters)", false},
		{WalletFacts{}, true, apierror.Invalid, "wallet: is required: this account requires a KYC-verified wallet", false},
		{WalletFacts{Address: admitWallet, Given: true}, true, apierror.Forbidden, "wallet: the wallet is not KYC-verified for this account", false},
		{WalletFacts{Address: admitWallet, Given: true, KYCErr: errKYCDown}, true, apierror.Unavailable, errKYCDown.Message, false},
		{WalletFacts{Address: admitWallet, Given: true, Verified: true}, true, "", "", true},
	}
	for _, c := range cases {
		err := SenderWallet(c.w, "wallet", c.kyc, false)
		if c.admitted {
			if err != nil {
				t.Errorf("%+v (KYC %v): refused: %v", c.w, c.kyc, err)
			}
			continue
		}
		var ae *apierror.Error
		if !errors.As(err, &ae) || ae.Code != c.code || ae.Message != c.text {
			t.Errorf("%+v (KYC %v): want %s %q, got %v", c.w, c.kyc, c.code, c.text, err)
		}
	}
}
