package apiserver

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/emailaddr"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// DepositAddresses issues the addresses deposits are sent to (the chain side of the service).
type DepositAddresses interface {
	// V1Address is the deposit address of v1 transfer transferID on network, and the derivation
	// path recorded with it (so that the sweeper can derive its key).
	V1Address(network payoutv1.Network, transferID string) (address, path string, err error)
	// V2Address is the platform's fixed deposit address of token on network.
	V2Address(network payoutv1.Network, token payoutv1.Token) (string, bool)
}

// transferRequest is a decoded create request of spec 4.10 or 4.11, its types checked.
type transferRequest struct {
	quoteID       string
	amount        decimal.Decimal
	hasAmount     bool
	recipientID   int64
	customerUUID  string
	customerEmail string
	token         string
	network       string
	wallet        string
	keepRecipient bool
}

// decodeTransferRequest reads the request's fields strictly: a wrong type or an unknown field
// is a 400 naming the field. It runs after the rules that come "before any other processing".
func decodeTransferRequest(b *body, recipientID int64) (*transferRequest, error) {
	req := &transferRequest{recipientID: recipientID}
	steps := []func() error{
		func() (err error) { req.quoteID, _, err = b.str("quote_id"); return },
		func() (err error) { req.amount, req.hasAmount, err = b.number("amount"); return },
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

// looseString is a field's string value for the rules judged before the request is decoded; a
// missing or non-string value reads as "".
func looseString(b *body, name string) string {
	s, _, err := b.str(name)
	if err != nil {
		return ""
	}
	return s
}

// handleTransferV1 serves POST /api/payouts/transfer (spec 4.10), applying its rules in the
// spec's order of precedence: the KYC wallet (before any other processing, so even a request
// with a malformed field gets the 403), wallet screening, v1 provisioning, the deployed smart
// wallet, recipient ownership; then the request's own fields and the quote (400); then the
// global uniqueness of customer_uuid (409).
func (s *Server) handleTransferV1(w http.ResponseWriter, r *http.Request, c *Caller) error {
	b, err := decodeBody(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	wallet := looseString(b, "wallet_address")
	if c.Account.Spec.KYCRequired { // rule 1
		if err := s.requireKYC(ctx, c, wallet); err != nil {
			return err
		}
	}
	if chain.IsEVMAddress(wallet) { // rule 2
		if err := s.screenWallet(ctx, wallet); err != nil {
			return err
		}
	}
	if !c.Account.Spec.V1Enabled { // rule 3
		return apierror.Errorf(apierror.Forbidden, "this account is not provisioned for v1 transfers")
	}
	if !c.Account.Spec.SmartWalletDeployed { // rule 4
		return apierror.Errorf(apierror.Forbidden, "this account has no deployed smart-contract wallet")
	}
	rc, err := s.transferRecipient(ctx, c, b) // rule 5
	if err != nil {
		return err
	}
	req, err := decodeTransferRequest(b, rc.Spec.ID) // rule 6 from here
	if err != nil {
		return err
	}
	if err := checkTransferFields(req, []string{"usdc", "usdt"}, true); err != nil {
		return err
	}
	if req.wallet == "" {
		return apierror.FieldErrorf("wallet_address", "is required")
	}
	if err := checkV1Wallet(req.wallet); err != nil {
		return err
	}
	if err := checkWalletNetwork(req.wallet, req.network); err != nil {
		return err
	}
	q, err := s.checkQuote(ctx, c, req, rc)
	if err != nil {
		return err
	}
	if err := s.checkDepositOption(ctx, req); err != nil {
		return err
	}
	t, err := s.createTransfer(ctx, c, req, rc, q, payoutv1.TransferV1) // rule 7 inside
	if err != nil {
		return err
	}
	v := transferView(t)
	v.UserID = c.Account.Name
	writeJSON(w, http.StatusOK, map[string]any{"transfer": v})
	return nil
}

// handleTransferV2 serves POST /api/payouts/transfer/v2 (spec 4.11).
func (s *Server) handleTransferV2(w http.ResponseWriter, r *http.Request, c *Caller) error {
	b, err := decodeBody(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	wallet := looseString(b, "wallet_address")
	switch {
	case c.Account.Spec.V2WalletScreening:
		// Screening on: an EVM wallet is required and screened before anything else; fail closed.
		if wallet == "" {
			if _, given, err := b.str("wallet_address"); err != nil || given {
				return apierror.FieldErrorf("wallet_address", "must be a string")
			}
			return apierror.FieldErrorf("wallet_address", "is required: wallets are screened on this account")
		}
		if chain.IsSolanaAddress(wallet) {
			return apierror.FieldErrorf("wallet_address", "is a Solana address, but this account screens v2 sender wallets and "+
				"screening takes EVM wallets only (0x and 40 hex digits; spec 4.11). Send from an EVM wallet on an EVM network; "+
				"v2 transfers from Solana wallets need an account without v2 wallet screening")
		}
		if err := chain.CheckEVMAddress(wallet); err != nil {
			return apierror.FieldErrorf("wallet_address", "%s (wallets are screened on this account, and only EVM wallets can be)", err)
		}
		if err := s.screenWallet(ctx, wallet); err != nil {
			return err
		}
	case c.Account.Spec.KYCRequired:
		// Screening off: the wallet is KYC-conditional, judged before any other processing.
		if err := s.requireKYC(ctx, c, wallet); err != nil {
			return err
		}
	}
	if err := s.checkWalletBinding(ctx, c, wallet); err != nil {
		return err
	}
	rc, err := s.transferRecipient(ctx, c, b)
	if err != nil {
		return err
	}
	req, err := decodeTransferRequest(b, rc.Spec.ID)
	if err != nil {
		return err
	}
	if req.token != "" && req.token != "usdc" {
		return apierror.FieldErrorf("source_token", "v2 transfers take usdc only; use v1 for usdt")
	}
	if req.network == string(payoutv1.NetworkTron) {
		return apierror.FieldErrorf("source_network", "tron is not available on v2; use v1")
	}
	if req.network == string(payoutv1.NetworkSolana) && c.Account.Spec.V2WalletScreening {
		// The screened wallet is an EVM one, which cannot send on Solana: no deposit could match.
		return apierror.FieldErrorf("source_network", "solana cannot be used on this account: it screens v2 sender wallets, "+
			"screening takes EVM wallets only (spec 4.11), and an EVM wallet cannot send on solana. Use an EVM network; v2 transfers "+
			"on solana need an account without v2 wallet screening")
	}
	if err := checkTransferFields(req, []string{"usdc"}, false); err != nil {
		return err
	}
	if req.customerEmail == "" {
		req.customerEmail = c.Account.Spec.Email // spec 4.11: the account's e-mail by default
	}
	if req.wallet != "" {
		if !chain.IsSolanaAddress(req.wallet) {
			if err := chain.CheckEVMAddress(req.wallet); err != nil {
				return apierror.FieldErrorf("wallet_address", "%s, or a Solana address (base58, 32 to 44 characters)", err)
			}
		}
		if err := checkWalletNetwork(req.wallet, req.network); err != nil {
			return err
		}
	}
	q, err := s.checkQuote(ctx, c, req, rc)
	if err != nil {
		return err
	}
	if err := s.checkDepositOption(ctx, req); err != nil {
		return err
	}
	t, err := s.createTransfer(ctx, c, req, rc, q, payoutv1.TransferV2)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v2View(t))
	return nil
}

// v2CreateJSON is the v2 create response of spec 4.11.
type v2CreateJSON struct {
	TransferID     string           `json:"transfer_id"`
	DepositAddress string           `json:"deposit_address"`
	SourceToken    string           `json:"source_token"`
	SourceNetwork  string           `json:"source_network"`
	Amount         jsonDecimal      `json:"amount"`
	Currency       string           `json:"currency"`
	WalletAddress  string           `json:"wallet_address"`
	Instructions   instructionsJSON `json:"instructions"`
}

type instructionsJSON struct {
	SendAmount     jsonDecimal `json:"send_amount"`
	SendToken      string      `json:"send_token"`
	SendNetwork    string      `json:"send_network"`
	DepositAddress string      `json:"deposit_address"`
	Note           string      `json:"note"`
}

func v2View(t *payoutv1.Transfer) v2CreateJSON {
	amount := fixed(mustDecimal(string(t.Spec.Amount)), 2)
	return v2CreateJSON{
		TransferID: t.Name, DepositAddress: t.Spec.DepositAddress,
		SourceToken: string(t.Spec.SourceToken), SourceNetwork: string(t.Spec.SourceNetwork),
		Amount: amount, Currency: string(t.Spec.Quote.TargetCurrency), WalletAddress: t.Spec.WalletAddress,
		Instructions: instructionsJSON{
			SendAmount: amount, SendToken: string(t.Spec.SourceToken), SendNetwork: string(t.Spec.SourceNetwork),
			DepositAddress: t.Spec.DepositAddress,
			Note: "Send exactly " + string(amount) + " " + strings.ToUpper(string(t.Spec.SourceToken)) + " on " + string(t.Spec.SourceNetwork) +
				" to the deposit address, then confirm the transaction hash with POST /api/payouts/transfer/v2/confirm-transfer and transfer_id " +
				t.Name + ". The address is shared by all v2 transfers: the hash is what matches your payment.",
		},
	}
}

// createTransfer creates the transfer: the name follows from the quote (so the quote is used
// once: a second transfer on it fails the create with AlreadyExists), the customer_uuid is
// claimed platform-wide first (409 when taken), and the recipient is read again past the cache
// after the create so that a transfer racing with the recipient's deletion is stopped.
func (s *Server) createTransfer(ctx context.Context, c *Caller, req *transferRequest, rc *payoutv1.Recipient,
	q *payoutv1.Quote, method payoutv1.TransferMethod) (*payoutv1.Transfer, error) {
	id := payoutv1.TransferNameForQuote(q.Name)
	network, token := payoutv1.Network(req.network), payoutv1.Token(req.token)
	t := &payoutv1.Transfer{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace(), Name: id,
			Labels: map[string]string{payoutv1.RecipientLineageLabel: rc.Lineage()}},
		Spec: payoutv1.TransferSpec{
			Method: method, Account: c.Account.Name, QuoteID: q.Name,
			Amount: payoutv1.USDAmount(req.amount.StringFixed(2)), RecipientID: rc.Spec.ID,
			Recipient: payoutv1.RecipientSnapshot{ID: rc.Spec.ID, AccountHolderName: rc.Spec.AccountHolderName,
				Currency: rc.Spec.Currency, Type: rc.Spec.Type, Country: rc.Spec.Country, Details: rc.Spec.Details},
			Quote:        quoteSnapshot(q),
			CustomerUUID: strings.ToLower(req.customerUUID), CustomerEmail: req.customerEmail,
			SourceToken: token, SourceNetwork: network, WalletAddress: req.wallet, KeepRecipient: req.keepRecipient,
		},
	}
	switch method {
	case payoutv1.TransferV1:
		addr, path, err := s.cfg.Deposits.V1Address(network, id)
		if err != nil {
			return nil, err
		}
		t.Spec.DepositAddress, t.Spec.DepositPath = addr, path
		expires := metav1.NewTime(s.cfg.Clock.Now().Add(s.cfg.TransferExpiry))
		t.Spec.ExpiresAt = &expires
	case payoutv1.TransferV2:
		addr, ok := s.cfg.Deposits.V2Address(network, token)
		if !ok {
			return nil, apierror.FieldErrorf("source_network", "%s on %s is unavailable at the moment (see GET /api/payouts/deposit-options)", token, network)
		}
		t.Spec.DepositAddress = addr
		head, err := s.networkHead(ctx, network)
		if err != nil {
			return nil, err
		}
		t.Spec.HeadAtCreation = head
	}

	claim, err := s.claim(ctx, payoutv1.ClaimCustomerUUID, req.customerUUID, payoutv1.ObjectRef{Namespace: t.Namespace, Name: id})
	if apierrors.IsAlreadyExists(err) { // rule 7
		return nil, apierror.Errorf(apierror.Conflict, "customer_uuid %s is already used by another transfer", req.customerUUID)
	}
	if err != nil {
		return nil, err
	}
	if err := s.checkArchivedUUID(ctx, req.customerUUID); err != nil { // rule 7 for archived transfers
		s.release(ctx, claim)
		return nil, err
	}
	if err := s.createOwned(ctx, c, t); err != nil {
		// The claim is given back only when the transfer certainly does not exist: a create
		// that timed out after etcd committed it would otherwise free its customer_uuid for a
		// second transfer.
		stored := &payoutv1.Transfer{}
		switch s.settleCreate(ctx, t, stored, err, func() bool { return stored.Spec.CustomerUUID == t.Spec.CustomerUUID }) {
		case createStored:
			t = stored // only the answer was lost: carry on with the transfer as stored
		case createTaken:
			s.release(ctx, claim)
			return nil, apierror.FieldErrorf("quote_id", "the quote was already used; get a new quote")
		case createRefused:
			s.release(ctx, claim)
			if apierrors.IsAlreadyExists(err) {
				return nil, apierror.FieldErrorf("quote_id", "the quote was already used; get a new quote")
			}
			return nil, err
		default:
			// Kept: the claim controller releases it once its grace is over if no transfer
			// appeared; until then the customer_uuid answers 409.
			return nil, err
		}
	}
	// The recipient may have been deleted between the read of rule 5 and the create, and its
	// deletion may have listed the transfers before this one existed: stop it here. A quorum
	// read (from etcd) comes after the create, so it sees any deletion that the deletion's list
	// of transfers could have missed. (A read from the API server's watch cache at the
	// transfer's resourceVersion is as sound, but it waits for that cache to catch up: 41 ms on
	// average in the load run, against 22 ms for the quorum read, for no throughput gained.)
	cur := &payoutv1.Recipient{}
	err = s.cfg.APIReader.Get(ctx, client.ObjectKeyFromObject(rc), cur)
	if err == nil && cur.Spec.Deactivated {
		return s.recipientGoneDuringCreate(ctx, t, claim, cur)
	}
	s.awaitCached(ctx, t)
	return t, nil
}

// recipientGoneDuringCreate settles a transfer whose recipient was deleted (or updated) between
// rule 5's read and the transfer's create (docs/api.md, "A recipient deleted during a create").
// A transfer nobody else has acted on is withdrawn: deleted, its customer_uuid claim released,
// and the caller gets the 400 rule 5 would have given a moment later; nothing of it remains,
// nothing is mailed, and a retry with the same customer_uuid (and quote) can succeed. A transfer
// someone else has acted on exists for others to see (the deletion counted it in
// transfers_failed, or its hash was confirmed): it is answered as it stands, cancelled if its
// recipient was deleted through the API, and it ends as any cancelled transfer does.
func (s *Server) recipientGoneDuringCreate(ctx context.Context, t *payoutv1.Transfer, claim *payoutv1.Claim, rc *payoutv1.Recipient) (*payoutv1.Transfer, error) {
	withdrawn, cur, err := s.withdrawTransfer(ctx, t)
	if withdrawn {
		s.release(ctx, claim)
		return nil, inactiveRecipient(t.Spec.RecipientID, rc, "; no transfer was created")
	}
	if err != nil {
		// It still exists, so it is answered like a transfer someone acted on.
		s.cfg.Log.Error(err, "withdrawing a transfer whose recipient was deleted during its create", "transfer", t.Name, "namespace", t.Namespace)
		cur = t.DeepCopy() // a stale base: the cancellation reads it again on conflict
	}
	if _, deleted := rc.DeletedAt(); deleted {
		msg := "recipient " + strconv.FormatInt(t.Spec.RecipientID, 10) + " was deleted"
		if _, err := s.cancelTransfer(ctx, cur, payoutv1.FailureRecipientDeleted, msg); err != nil {
			return nil, err
		}
	}
	if err := s.cfg.APIReader.Get(ctx, client.ObjectKeyFromObject(t), cur); err != nil {
		return nil, err
	}
	s.awaitCached(ctx, cur)
	return cur, nil
}

// withdrawTransfer deletes t, just created, unless someone else has acted on it (see untouched):
// under its resourceVersion, so that a cancellation or a hash recorded meanwhile stops it. It
// returns whether t is gone and, when it is not, t as stored.
func (s *Server) withdrawTransfer(ctx context.Context, t *payoutv1.Transfer) (bool, *payoutv1.Transfer, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	cur, gone := t.DeepCopy(), false
	err := retryConflict(ctx, func() error {
		if !untouched(cur) {
			return nil
		}
		uid, rv := cur.UID, cur.ResourceVersion
		err := s.cfg.Client.Delete(ctx, cur, client.Preconditions{UID: &uid, ResourceVersion: &rv})
		if apierrors.IsConflict(err) {
			// the controller's first status write, or someone acting on it: look again
			if gerr := s.cfg.APIReader.Get(ctx, client.ObjectKeyFromObject(t), cur); gerr != nil {
				return gerr
			}
			return err
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		gone = true
		return nil
	})
	if apierrors.IsNotFound(err) {
		gone, err = true, nil
	}
	if err != nil || !gone {
		return false, cur, err
	}
	s.awaitGone(ctx, t) // a retry's check of the quote reads the cache
	return true, nil, nil
}

// untouched reports whether nobody but the create's caller has acted on t: no cancellation, no
// hash, and no fact in its status (the controller's opening phase, history line and conditions
// aside). Anything else means that someone saw the transfer, or that money or mail is attached
// to it: such a transfer is never withdrawn.
func untouched(t *payoutv1.Transfer) bool {
	if t.Spec.Cancellation != nil || t.Spec.TxHash != "" {
		return false
	}
	st := t.Status.DeepCopy()
	st.Phase, st.History, st.UpdatedAt, st.ObservedGeneration, st.Conditions = "", nil, nil, 0, nil
	return equality.Semantic.DeepEqual(*st, payoutv1.TransferStatus{})
}

func quoteSnapshot(q *payoutv1.Quote) payoutv1.QuoteSnapshot {
	return payoutv1.QuoteSnapshot{
		SourceAmount: q.Spec.SourceAmount, ProviderCharge: q.Spec.ProviderCharge, ServiceFeePercent: q.Spec.ServiceFeePercent,
		ServiceFeeFixed: q.Spec.ServiceFeeFixed, TargetCurrency: q.Spec.TargetCurrency, USDToTargetRate: q.Spec.USDToTargetRate,
		TargetAmount: q.Spec.TargetAmount, TransferFee: q.Spec.TransferFee, EstimatedDelivery: q.Spec.EstimatedDelivery,
	}
}

// handleConfirm serves POST /api/payouts/transfer/v2/confirm-transfer (spec 4.12). The hash is
// claimed platform-wide by the API server's atomic create (rule 1), then set once on the
// transfer under its resourceVersion (rules 2 and 3); the transfer controller matches it.
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
	ctx := r.Context()
	t, err := s.findTransfer(ctx, id)
	if apierror.CodeOf(err) == apierror.NotFound {
		return s.confirmArchived(ctx, w, c, id, hash, err)
	}
	if err != nil {
		return err
	}
	if t.Namespace != c.Namespace() {
		return apierror.Errorf(apierror.Forbidden, "transfer %s belongs to another account", id)
	}
	if t.Spec.Method != payoutv1.TransferV2 {
		return apierror.FieldErrorf("transfer_id", "transfer %s is a v1 transfer: its deposit is detected without a confirmation", id)
	}
	solana := t.Spec.SourceNetwork == payoutv1.NetworkSolana
	if solana != chain.IsSolanaSignature(hash) {
		return apierror.FieldErrorf("tx_hash", "is not a transaction hash of %s", t.Spec.SourceNetwork)
	}
	hash = payoutv1.NormalizeClaimKey(payoutv1.ClaimTxHash, hash)
	if t.Spec.TxHash != "" {
		return s.confirmed(w, t, hash)
	}
	used, err := s.hashOfDeposit(ctx, hash)
	if err != nil {
		return err
	}
	if used {
		return apierror.Errorf(apierror.Conflict, "tx_hash %s is already linked to a transfer", hash)
	}
	holder := payoutv1.ObjectRef{Namespace: t.Namespace, Name: t.Name}
	claim, err := s.claim(ctx, payoutv1.ClaimTxHash, hash, holder)
	if apierrors.IsAlreadyExists(err) {
		// Ours when a confirmation of this very transfer was interrupted after the claim.
		held := &payoutv1.Claim{}
		if gerr := s.cfg.APIReader.Get(ctx, client.ObjectKey{Name: payoutv1.ClaimName(payoutv1.ClaimTxHash, hash)}, held); gerr != nil || held.Spec.Holder != holder {
			return apierror.Errorf(apierror.Conflict, "tx_hash %s is already linked to a transfer", hash) // rule 1
		}
		claim, err = held, nil
	}
	if err != nil {
		return err
	}
	if err := s.checkArchivedHash(ctx, hash); err != nil { // rule 1 for archived transfers
		s.release(ctx, claim)
		return err
	}
	var stored *payoutv1.Transfer
	err = retryConflict(ctx, func() error {
		cur := &payoutv1.Transfer{}
		if err := s.cfg.APIReader.Get(ctx, client.ObjectKeyFromObject(t), cur); err != nil {
			return err
		}
		if cur.Spec.TxHash != "" {
			stored = cur
			return nil
		}
		next := cur.DeepCopy()
		next.Spec.TxHash = hash
		if err := s.cfg.Client.Patch(ctx, next, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		stored = next
		return nil
	})
	if err != nil {
		return err
	}
	if stored.Spec.TxHash != hash {
		s.release(ctx, claim) // another hash won meanwhile: give ours back
	}
	s.awaitCached(ctx, stored)
	return s.confirmed(w, stored, hash)
}

// confirmed answers a confirmation of t whose hash is set: the same hash is idempotent (rule 2)
// and reports the current status, whatever it is (rule 4); another hash is a conflict (rule 3).
func (s *Server) confirmed(w http.ResponseWriter, t *payoutv1.Transfer, hash string) error {
	if t.Spec.TxHash != hash {
		return apierror.Errorf(apierror.Conflict, "transfer %s is already confirmed with another transaction hash; a hash cannot be replaced", t.Name)
	}
	phase := transferPhase(t)
	writeJSON(w, http.StatusOK, struct {
		TransferID string `json:"transfer_id"`
		Status     string `json:"status"`
		Message    string `json:"message"`
	}{t.Name, string(phase), confirmMessages[phase]})
	return nil
}

// confirmMessages explain each status a confirmation can report.
var confirmMessages = map[payoutv1.TransferPhase]string{
	payoutv1.PhaseAwaitingDeposit: "Waiting for the deposit and its transaction hash.",
	payoutv1.PhasePendingMatch:    "Transaction hash recorded; the deposit is being matched. The payout starts on its own.",
	payoutv1.PhaseDepositSent:     "The deposit transaction was found and is waiting for confirmations.",
	payoutv1.PhaseProcessing:      "Deposit received; the funds are being converted.",
	payoutv1.PhaseTransferCreated: "The payout to the recipient has been created.",
	payoutv1.PhaseCompleted:       "The payout was sent to the recipient.",
	payoutv1.PhaseFailed:          "The transfer failed; see GET /api/payouts/transfer/{id} for the error.",
	payoutv1.PhaseRefunded:        "The deposit was returned to the sender.",
}

// hashOfDeposit reports whether a deposit the chain watcher recorded (a v1 transfer's) has this
// transaction hash: such a hash is linked to a transfer already (rule 1). Deposits that cannot
// be read are a 503, never "not linked": rule 1 fails closed.
func (s *Server) hashOfDeposit(ctx context.Context, hash string) (bool, error) {
	list := &payoutv1.DepositList{}
	if err := s.cfg.Client.List(ctx, list, client.MatchingFields{index.DepositTxHash: strings.ToLower(hash)}); err != nil {
		s.cfg.Log.Error(err, "listing the deposits of a transaction hash", "hash", hash)
		return false, errHashUnknown
	}
	return len(list.Items) > 0, nil
}

// errHashUnknown answers a confirmation whose hash cannot be checked against the hashes already
// linked to transfers.
var errHashUnknown = apierror.Errorf(apierror.Unavailable, "whether tx_hash is already linked to a transfer cannot be checked at the moment; retry shortly")

// networkHead is a block network had reached by now: the head its watcher last read and wrote
// to the network's ChainCursor (never newer than the chain's). A v2 transfer records it, and a
// transaction mined in it or before never pays the transfer: a hash seen on chain cannot be
// taken by a transfer created after it. The cursor may be a few seconds behind the chain, which
// only lets through a transaction of those seconds; an honest customer's, sent after the
// create, is always after it. No head known yet: 503, as for any dependency that cannot answer.
func (s *Server) networkHead(ctx context.Context, network payoutv1.Network) (int64, error) {
	cur := &payoutv1.ChainCursor{}
	err := s.cfg.Client.Get(ctx, client.ObjectKey{Name: string(network)}, cur)
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	if err != nil || cur.Status.Head <= 0 {
		return 0, apierror.Errorf(apierror.Unavailable, "the %s watcher has not read the chain's head yet; retry shortly", network)
	}
	return cur.Status.Head, nil
}

// checkWalletBinding refuses a v2 wallet bound to another account (PayoutAccount bindWallets:
// the first account that completed a v2 transfer from the wallet holds it), read past the cache:
// a binding is rare and a create must not miss one made a moment ago.
func (s *Server) checkWalletBinding(ctx context.Context, c *Caller, wallet string) error {
	key := chain.SenderKey(wallet)
	if key == "" {
		return nil
	}
	held := &payoutv1.Claim{}
	name := payoutv1.ClaimName(payoutv1.ClaimWalletBinding, payoutv1.NormalizeClaimKey(payoutv1.ClaimWalletBinding, key))
	switch err := s.cfg.APIReader.Get(ctx, client.ObjectKey{Name: name}, held); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	if held.Spec.Holder.Namespace == c.Namespace() {
		return nil
	}
	return apierror.Errorf(apierror.Forbidden, "wallet_address: the wallet %s is bound to another account: its v2 payments pay only that account's transfers", wallet)
}

// requireKYC applies the KYC wallet rule of transfers: on an account that requires KYC the wallet
// must be given and verified for the account, before any other processing; a missing or
// malformed wallet is not a verified one (403), and a verification service that cannot answer
// fails closed (503).
func (s *Server) requireKYC(ctx context.Context, c *Caller, wallet string) error {
	if wallet == "" {
		return apierror.Errorf(apierror.Forbidden, "wallet_address: a KYC-verified wallet is required on this account")
	}
	if !chain.IsEVMAddress(wallet) && !chain.IsSolanaAddress(wallet) {
		return apierror.Errorf(apierror.Forbidden, "wallet_address: the wallet is not KYC-verified for this account")
	}
	ok, err := s.cfg.KYC.Verified(ctx, c.Account.Name, wallet)
	if err != nil {
		return err
	}
	if !ok {
		return apierror.Errorf(apierror.Forbidden, "wallet_address: the wallet is not KYC-verified for this account")
	}
	return nil
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

// transferRecipient resolves recipientId (rule 5): another account's recipient is 403, an
// unknown one 404, a deleted one 400. It reads the cache, and past it only on a miss (a recipient
// made a moment ago on another replica); a deletion racing with this request is caught by the
// re-read past the cache after the transfer's create (createTransfer).
func (s *Server) transferRecipient(ctx context.Context, c *Caller, b *body) (*payoutv1.Recipient, error) {
	id, ok, err := b.integer("recipientId")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierror.FieldErrorf("recipientId", "is required")
	}
	name := strconv.FormatInt(id, 10)
	key := client.ObjectKey{Namespace: c.Namespace(), Name: name}
	rc := &payoutv1.Recipient{}
	err = s.cfg.Client.Get(ctx, key, rc)
	if apierrors.IsNotFound(err) {
		err = s.cfg.APIReader.Get(ctx, key, rc)
	}
	if apierrors.IsNotFound(err) {
		list := &payoutv1.RecipientList{}
		if err := s.cfg.Client.List(ctx, list, client.MatchingFields{index.Name: name}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		if len(list.Items) > 0 {
			return nil, apierror.Errorf(apierror.Forbidden, "recipient %d belongs to another account", id)
		}
		return nil, apierror.Errorf(apierror.NotFound, "recipient %d not found", id)
	}
	if err != nil {
		return nil, err
	}
	if rc.Spec.Deactivated {
		return nil, inactiveRecipient(id, rc, "")
	}
	return rc, nil
}

// inactiveRecipient is rule 5's answer for a recipient that takes no more transfers, with more
// said after it.
func inactiveRecipient(id int64, rc *payoutv1.Recipient, more string) error {
	if rc.Spec.ReplacedBy != nil {
		return apierror.FieldErrorf("recipientId", "recipient %d was updated; use its latest id %d%s", id, *rc.Spec.ReplacedBy, more)
	}
	return apierror.FieldErrorf("recipientId", "recipient %d is deleted and takes no transfers%s", id, more)
}

// checkTransferFields validates the request's own fields (400); customer_email is optional on
// v2, where the account's e-mail stands in.
func checkTransferFields(req *transferRequest, tokens []string, emailRequired bool) error {
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
	if req.customerEmail == "" && emailRequired {
		return apierror.FieldErrorf("customer_email", "is required")
	}
	if req.customerEmail != "" {
		if err := emailaddr.Check(req.customerEmail); err != nil {
			return apierror.FieldErrorf("customer_email", "%s", err)
		}
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

// checkDepositOption refuses a token/network pair that is not offered or is unavailable now
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
// the account's bounds; the quote exists for this account, is unexpired and unused, was priced
// for the recipient's currency and type, delivers something, and matches the amount within 0.01.
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
	key := client.ObjectKey{Namespace: c.Namespace(), Name: strings.ToLower(req.quoteID)}
	q := &payoutv1.Quote{}
	// A quote is immutable and its single use is enforced by the transfer's create, so the cache
	// serves; a quote made a moment ago on another replica is read past it.
	err = s.cfg.Client.Get(ctx, key, q)
	if apierrors.IsNotFound(err) {
		err = s.cfg.APIReader.Get(ctx, key, q)
	}
	if apierrors.IsNotFound(err) {
		return nil, apierror.FieldErrorf("quote_id", "no such quote for this account")
	}
	if err != nil {
		return nil, err
	}
	used := &payoutv1.Transfer{}
	if err := s.cfg.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace(), Name: payoutv1.TransferNameForQuote(q.Name)}, used); err == nil {
		return nil, apierror.FieldErrorf("quote_id", "the quote was already used; get a new quote")
	}
	switch {
	case !s.cfg.Clock.Now().Before(q.Spec.ExpiresAt.Time):
		return nil, apierror.FieldErrorf("quote_id", "the quote expired; get a new quote")
	case q.Spec.TargetCurrency != rc.Spec.Currency:
		return nil, apierror.FieldErrorf("quote_id", "the quote is for %s but recipient %d is paid in %s", q.Spec.TargetCurrency, rc.Spec.ID, rc.Spec.Currency)
	case !quoteFitsType(q.Spec.RecipientType, rc.Spec.Type):
		return nil, apierror.FieldErrorf("quote_id", "the quote was priced for %s recipients but recipient %d is %s; get a quote with recipientType=%s",
			recipientTypeText(q.Spec.RecipientType), rc.Spec.ID, rc.Spec.Type, rc.Spec.Type)
	case !mustDecimal(string(q.Spec.TargetAmount)).IsPositive():
		return nil, apierror.FieldErrorf("amount", "%s USD leaves nothing to pay out in %s after fees; send a larger amount", q.Spec.SourceAmount, q.Spec.TargetCurrency)
	}
	if amount.Sub(mustDecimal(string(q.Spec.SourceAmount))).Abs().GreaterThan(decimal.New(1, -2)) {
		return nil, apierror.FieldErrorf("amount", "must equal the quoted amount %s within 0.01", q.Spec.SourceAmount)
	}
	// The payout is priced for the amount sent (pricing.PayoutTarget): a cent under a quote that
	// barely delivers may deliver nothing.
	pays, err := pricing.PayoutTarget(quoteSnapshot(q), payoutv1.USDAmount(amount.StringFixed(2)))
	if err != nil {
		return nil, err
	}
	if !mustDecimal(string(pays)).IsPositive() {
		return nil, apierror.FieldErrorf("amount", "%s USD leaves nothing to pay out in %s after the quoted fees; send the quoted amount %s",
			amount.StringFixed(2), q.Spec.TargetCurrency, q.Spec.SourceAmount)
	}
	return q, nil
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

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
