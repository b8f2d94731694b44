package apiserver

import (
	"context"
	"net/http"
	"net/mail"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// transferRequest is a decoded create request of spec 4.10 or 4.11, its types checked.
type transferRequest struct {
	quoteID       string
	amount        decimal.Decimal
	hasAmount     bool
	recipientID   int64
	hasRecipient  bool
	customerUUID  string
	customerEmail string
	token         string
	network       string
	wallet        string
	keepRecipient bool
}

func decodeTransferRequest(r *http.Request) (*transferRequest, error) {
	b, err := decodeBody(r)
	if err != nil {
		return nil, err
	}
	req := &transferRequest{}
	steps := []func() error{
		func() (err error) { req.quoteID, _, err = b.str("quote_id"); return },
		func() (err error) { req.amount, req.hasAmount, err = b.number("amount"); return },
		func() (err error) { req.recipientID, req.hasRecipient, err = b.integer("recipientId"); return },
		func() (err error) { req.customerUUID, _, err = b.str("customer_uuid"); return },
		func() (err error) { req.customerEmail, _, err = b.str("customer_email"); return },
		func() (err error) { req.token, _, err = b.str("source_token"); return },
		func() (err error) { req.network, _, err = b.str("source_network"); return },
		func() (err error) { req.wallet, _, err = b.str("wallet_address"); return },
		func() (err error) { req.keepRecipient, _, err = b.boolean("keep_recipient"); return },
		b.unknown,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// handleTransferV1 serves POST /api/payouts/transfer (spec 4.10), applying its rules in the
// spec's order of precedence: KYC wallet, wallet screening, v1 provisioning, deployed smart
// wallet, recipient ownership, then the request's own fields and the quote.
func (s *Server) handleTransferV1(w http.ResponseWriter, r *http.Request, c *Caller) error {
	req, err := decodeTransferRequest(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if c.Account.Spec.KYCRequired { // rule 1, before any other processing
		if err := s.checkWallet(ctx, c, "wallet_address", req.wallet, true); err != nil {
			return asForbiddenIfMissing(err, req.wallet)
		}
	}
	if chain.IsEVMAddress(req.wallet) { // rule 2
		if err := s.screenWallet(ctx, req.wallet); err != nil {
			return err
		}
	}
	if !c.Account.Spec.V1Enabled { // rule 3
		return apierror.Errorf(apierror.Forbidden, "this account is not provisioned for v1 transfers")
	}
	if !c.Account.Spec.SmartWalletDeployed { // rule 4
		return apierror.Errorf(apierror.Forbidden, "this account has no deployed smart-contract wallet")
	}
	rc, err := s.transferRecipient(ctx, c, req) // rule 5
	if err != nil {
		return err
	}
	if err := checkTransferFields(req, []string{"usdc", "usdt"}); err != nil {
		return err
	}
	if !chain.IsEVMAddress(req.wallet) {
		return apierror.FieldErrorf("wallet_address", "must be an EVM address (0x and 40 hex digits); Solana and Tron senders are not accepted on v1")
	}
	if _, err := s.checkQuote(ctx, c, req, rc); err != nil { // rule 6
		return err
	}
	if err := s.checkDepositOption(ctx, req); err != nil {
		return err
	}
	return errTransfersUnavailable
}

// handleTransferV2 serves POST /api/payouts/transfer/v2 (spec 4.11).
func (s *Server) handleTransferV2(w http.ResponseWriter, r *http.Request, c *Caller) error {
	req, err := decodeTransferRequest(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if c.Account.Spec.V2WalletScreening {
		// Screening on: an EVM wallet is required and screened before anything else; fail closed.
		if req.wallet == "" {
			return apierror.FieldErrorf("wallet_address", "is required: wallets are screened on this account")
		}
		if !chain.IsEVMAddress(req.wallet) {
			return apierror.FieldErrorf("wallet_address", "must be an EVM address (0x and 40 hex digits) when wallet screening is on")
		}
		if err := s.screenWallet(ctx, req.wallet); err != nil {
			return err
		}
	} else if c.Account.Spec.KYCRequired {
		if err := s.checkWallet(ctx, c, "wallet_address", req.wallet, true); err != nil {
			return asForbiddenIfMissing(err, req.wallet)
		}
	} else if req.wallet != "" && !chain.IsEVMAddress(req.wallet) && !chain.IsSolanaAddress(req.wallet) {
		return apierror.FieldErrorf("wallet_address", "must be an EVM or a Solana address")
	}
	rc, err := s.transferRecipient(ctx, c, req)
	if err != nil {
		return err
	}
	if req.token != "" && req.token != "usdc" {
		return apierror.FieldErrorf("source_token", "v2 transfers take usdc only; use v1 for usdt")
	}
	if req.network == string(payoutv1.NetworkTron) {
		return apierror.FieldErrorf("source_network", "tron is not available on v2; use v1")
	}
	if req.customerEmail == "" {
		req.customerEmail = c.Account.Spec.Email
	}
	if err := checkTransferFields(req, []string{"usdc"}); err != nil {
		return err
	}
	if _, err := s.checkQuote(ctx, c, req, rc); err != nil {
		return err
	}
	if err := s.checkDepositOption(ctx, req); err != nil {
		return err
	}
	return errTransfersUnavailable
}

// handleConfirm serves POST /api/payouts/transfer/v2/confirm-transfer (spec 4.12).
func (s *Server) handleConfirm(w http.ResponseWriter, r *http.Request, c *Caller) error {
	b, err := decodeBody(r)
	if err != nil {
		return err
	}
	id, err := b.requiredStr("transfer_id")
	if err != nil {
		return err
	}
	hash, err := b.requiredStr("tx_hash")
	if err != nil {
		return err
	}
	if err := b.unknown(); err != nil {
		return err
	}
	if !chain.IsEVMTxHash(hash) && !chain.IsSolanaSignature(hash) {
		return apierror.FieldErrorf("tx_hash", "must be an EVM transaction hash (0x and 64 hex digits) or a Solana signature (base58, 85 to 88 characters)")
	}
	t, err := s.findTransfer(r.Context(), id)
	if err != nil {
		return err
	}
	if t.Namespace != c.Namespace() {
		return apierror.Errorf(apierror.Forbidden, "transfer %s belongs to another account", id)
	}
	return errTransfersUnavailable
}

// errTransfersUnavailable answers a create request that passed every check while this
// deployment cannot yet take deposits: nothing is created and no quote is spent.
var errTransfersUnavailable = apierror.Errorf(apierror.NotImplemented, "transfer creation is not available on this deployment yet; nothing was created and the quote was not used")

// asForbiddenIfMissing turns "wallet required" into the 403 of the KYC rule, which comes before
// any other processing (spec 4.10 rule 1).
func asForbiddenIfMissing(err error, wallet string) error {
	if wallet == "" {
		return apierror.Errorf(apierror.Forbidden, "wallet_address: a KYC-verified wallet is required on this account")
	}
	return err
}

// screenWallet applies the risk screening of a sender wallet.
func (s *Server) screenWallet(ctx context.Context, wallet string) error {
	blocked, err := s.cfg.WalletScreen.Blocked(ctx, wallet)
	if err != nil {
		return err
	}
	if blocked {
		return apierror.Errorf(apierror.Forbidden, "wallet_address: the wallet failed compliance screening")
	}
	return nil
}

// transferRecipient resolves recipientId: another account's recipient is 403 (rule 5), an
// unknown or deleted one 400.
func (s *Server) transferRecipient(ctx context.Context, c *Caller, req *transferRequest) (*payoutv1.Recipient, error) {
	if !req.hasRecipient {
		return nil, apierror.FieldErrorf("recipientId", "is required")
	}
	if req.recipientID <= 0 {
		return nil, apierror.FieldErrorf("recipientId", "must be a recipient id (a positive integer)")
	}
	rc, err := s.findRecipient(ctx, c, strconv.FormatInt(req.recipientID, 10))
	if apierror.CodeOf(err) == apierror.NotFound {
		return nil, apierror.FieldErrorf("recipientId", "no recipient %d", req.recipientID)
	}
	if err != nil {
		return nil, err
	}
	if rc.Spec.Deactivated {
		return nil, apierror.FieldErrorf("recipientId", "recipient %d is deleted and takes no transfers", req.recipientID)
	}
	return rc, nil
}

// checkTransferFields validates the request's own fields (400).
func checkTransferFields(req *transferRequest, tokens []string) error {
	if req.quoteID == "" {
		return apierror.FieldErrorf("quote_id", "is required")
	}
	if !req.hasAmount {
		return apierror.FieldErrorf("amount", "is required")
	}
	if req.customerUUID == "" {
		return apierror.FieldErrorf("customer_uuid", "is required")
	}
	if _, err := uuid.Parse(req.customerUUID); err != nil || len(req.customerUUID) != 36 {
		return apierror.FieldErrorf("customer_uuid", "must be a UUID such as 7d0e1c55-8d0f-4d4e-9f59-3c8a5b1f2e3d")
	}
	if req.customerEmail == "" {
		return apierror.FieldErrorf("customer_email", "is required")
	}
	if a, err := mail.ParseAddress(req.customerEmail); err != nil || a.Address != req.customerEmail {
		return apierror.FieldErrorf("customer_email", "must be an e-mail address such as name@example.com")
	}
	if req.token == "" {
		return apierror.FieldErrorf("source_token", "is required")
	}
	if !contains(tokens, req.token) {
		return apierror.FieldErrorf("source_token", "must be one of %s", strings.Join(tokens, ", "))
	}
	if req.network == "" {
		return apierror.FieldErrorf("source_network", "is required")
	}
	return nil
}

// checkDepositOption refuses a token/network pair that is not offered or is switched off now
// (spec 2.3: unavailable options must not be used).
func (s *Server) checkDepositOption(ctx context.Context, req *transferRequest) error {
	opt := &payoutv1.DepositOption{}
	err := s.cfg.Client.Get(ctx, client.ObjectKey{Name: payoutv1.DepositOptionName(payoutv1.Token(req.token), payoutv1.Network(req.network))}, opt)
	if apierrors.IsNotFound(err) {
		return apierror.FieldErrorf("source_network", "%s is not offered on %s (see GET /api/payouts/deposit-options)", req.token, req.network)
	}
	if err != nil {
		return err
	}
	if !opt.Spec.Enabled || !opt.Status.Available {
		return apierror.FieldErrorf("source_network", "%s on %s is unavailable at the moment (see GET /api/payouts/deposit-options)", req.token, req.network)
	}
	return nil
}

// checkQuote applies rule 6: the amount has at most 2 decimals and is inside the service's and
// the account's bounds, the quote exists for this account, is unexpired and unused, prices the
// recipient's currency, and matches the amount within 0.01.
func (s *Server) checkQuote(ctx context.Context, c *Caller, req *transferRequest, rc *payoutv1.Recipient) (*payoutv1.Quote, error) {
	amount, err := pricing.ParseAmount("amount", req.amount.String())
	if err != nil {
		return nil, err
	}
	if err := pricing.CheckLimitsField("amount", amount, limitOf(c.Account.Spec.AmountLimits.Min), limitOf(c.Account.Spec.AmountLimits.Max)); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(req.quoteID); err != nil {
		return nil, apierror.FieldErrorf("quote_id", "no such quote")
	}
	q := &payoutv1.Quote{}
	err = s.cfg.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace(), Name: strings.ToLower(req.quoteID)}, q)
	if apierrors.IsNotFound(err) {
		return nil, apierror.FieldErrorf("quote_id", "no such quote for this account")
	}
	if err != nil {
		return nil, err
	}
	switch {
	case !s.cfg.Clock.Now().Before(q.Spec.ExpiresAt.Time):
		return nil, apierror.FieldErrorf("quote_id", "the quote expired; get a new quote")
	case q.Spec.TargetCurrency != rc.Spec.Currency:
		return nil, apierror.FieldErrorf("quote_id", "the quote is for %s but recipient %d is paid in %s", q.Spec.TargetCurrency, rc.Spec.ID, rc.Spec.Currency)
	}
	if amount.Sub(mustDecimal(string(q.Spec.SourceAmount))).Abs().GreaterThan(decimal.New(1, -2)) {
		return nil, apierror.FieldErrorf("amount", "must equal the quoted amount %s within 0.01", q.Spec.SourceAmount)
	}
	return q, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
