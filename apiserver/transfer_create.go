package apiserver

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/index"
	"github.com/stablepay/payout-operator/internal/pricing"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// DepositAddresses issues the addresses deposits are sent to (the chain side of the service).
type DepositAddresses interface {
	// V1Address is the deposit address of v1 transfer transferID on network, and the derivation
	// path recorded with it (so that the sweeper can derive its key).
	V1Address(network payoutv1.Network, transferID string) (address, path string, err error)
	// V2Address is the platform's fixed deposit address of token on network.
	V2Address(network payoutv1.Network, token payoutv1.Token) (string, bool)
}

// decodeTransferRequest reads the request's fields strictly: a wrong type or an unknown field
// is a 400 naming the field.
func decodeTransferRequest(b *body) (transfer.Request, error) {
	var req transfer.Request
	steps := []func() error{
		func() (err error) { req.QuoteID, _, err = b.str("quote_id"); return },
		func() (err error) { req.Amount, req.HasAmount, err = b.number("amount"); return },
		func() (err error) { req.CustomerUUID, _, err = b.str("customer_uuid"); return },
		func() (err error) { req.CustomerEmail, _, err = b.str("customer_email"); return },
		func() (err error) { req.Token, _, err = b.str("source_token"); return },
		func() (err error) { req.Network, _, err = b.str("source_network"); return },
		func() (err error) { req.Wallet, _, err = b.str("wallet_address"); return },
		func() (err error) { req.KeepRecipient, _, err = b.boolean("keep_recipient"); return },
		b.unknown,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return transfer.Request{}, err
		}
	}
	return req, nil
}

// looseString is a field's string value for the rules judged before the request is decoded; a
// missing or non-string value reads as "". given says whether the field is there at all.
func looseString(b *body, name string) (s string, given bool) {
	s, given, err := b.str(name)
	if err != nil {
		return "", true
	}
	return s, given
}

// handleTransferV1 serves POST /api/payouts/transfer (spec 4.10): the rules are
// transfer.Admit's, judged on the facts gatherTransfer reads; rule 7 is the create's.
func (s *Server) handleTransferV1(w http.ResponseWriter, r *http.Request, c *Caller) error {
	return s.handleTransfer(w, r, c, payoutv1.TransferV1)
}

// handleTransferV2 serves POST /api/payouts/transfer/v2 (spec 4.11).
func (s *Server) handleTransferV2(w http.ResponseWriter, r *http.Request, c *Caller) error {
	return s.handleTransfer(w, r, c, payoutv1.TransferV2)
}

// handleTransfer decodes a create, gathers its facts, has transfer.Admit judge them, creates the
// transfer and encodes it as the method answers.
func (s *Server) handleTransfer(w http.ResponseWriter, r *http.Request, c *Caller, method payoutv1.TransferMethod) error {
	b, err := decodeBody(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	in, priced := s.gatherTransfer(ctx, c, b, method)
	if err := transfer.Admit(in); err != nil {
		return err
	}
	if priced {
		// a browser caller's quote, priced for this create: stored once admitted, so that the
		// transfer names it as an API key's names the quote it was given
		if err := s.createOwned(ctx, c, in.Quote.Quote); err != nil {
			return err
		}
	}
	req := in.Request
	if method == payoutv1.TransferV2 && req.CustomerEmail == "" {
		req.CustomerEmail = c.Account.Spec.Email // spec 4.11: the account's e-mail by default
	}
	t, err := s.createTransfer(ctx, c, req, in.Recipient.Recipient, in.Quote.Quote, method) // rule 7 inside
	if err != nil {
		return err
	}
	if method == payoutv1.TransferV2 {
		writeJSON(w, http.StatusOK, v2View(t))
		return nil
	}
	v := transferView(t)
	v.UserID = c.Account.Name
	writeJSON(w, http.StatusOK, map[string]any{"transfer": v})
	return nil
}

// gatherTransfer reads what transfer.Admit judges a create on. A compliance service is asked
// only where its answer is a rule's fact: the KYC service when the account requires KYC and the
// wallet is well formed, the screening for an EVM wallet that the method screens.
//
// A browser caller's quotes have no quoteId (spec 5.6), so its create names none: the amount is
// priced now for the recipient's currency (as GET quote would price it for that caller) and the
// create is judged on that quote by the same rules; priced says so, and the caller stores it.
func (s *Server) gatherTransfer(ctx context.Context, c *Caller, b *body, method payoutv1.TransferMethod) (in transfer.AdmitInput, priced bool) {
	acct := c.Account.Spec
	in = transfer.AdmitInput{Method: method, Account: acct, Now: s.cfg.Clock.Now()}
	wallet, given := looseString(b, "wallet_address")
	v1 := method == payoutv1.TransferV1
	in.Wallet = s.senderWallet(ctx, c, wallet, given, acct.KYCRequired && (v1 || !acct.V2WalletScreening), v1 || acct.V2WalletScreening)
	if method == payoutv1.TransferV2 {
		in.Binding = s.walletBinding(ctx, c, wallet)
	}
	in.Recipient = s.transferRecipient(ctx, c, b)
	in.Request, in.RequestErr = decodeTransferRequest(b)
	if in.RequestErr != nil {
		return in, false
	}
	if c.Browser && in.Request.QuoteID == "" && in.Request.HasAmount && in.Recipient.Recipient != nil {
		in.Request.QuoteID = uuid.NewString()
		in.Quote = s.browserQuote(ctx, c, in.Request.QuoteID, in.Request.Amount, in.Recipient.Recipient)
		priced = in.Quote.Quote != nil
	} else if _, err := uuid.Parse(in.Request.QuoteID); err == nil {
		in.Quote = s.transferQuote(ctx, c, in.Request.QuoteID)
	}
	if in.Request.Token != "" && in.Request.Network != "" {
		in.Option = s.depositOption(ctx, in.Request)
	}
	return in, priced
}

// browserQuote prices a browser caller's create (gatherTransfer): amount USD for rc's currency,
// an e-mail recipient's without the transfer fee. An amount the quote endpoint would refuse is
// the quote rule's error.
func (s *Server) browserQuote(ctx context.Context, c *Caller, id string, amount decimal.Decimal, rc *payoutv1.Recipient) transfer.QuoteFacts {
	_, priced, err := pricing.ParsePricedAmount("amount", amount.String())
	if err != nil {
		return transfer.QuoteFacts{Err: err}
	}
	recipientType := ""
	if rc.Spec.Type == bankaccount.EmailRecipientType {
		recipientType = bankaccount.EmailRecipientType
	}
	q, err := s.priceQuote(ctx, c, id, string(rc.Spec.Currency), priced, false, recipientType)
	if err != nil {
		return transfer.QuoteFacts{Err: err}
	}
	return transfer.QuoteFacts{Quote: q}
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
// once: a second transfer on it fails the create with AlreadyExists), and the customer_uuid is
// claimed platform-wide first (409 when taken). A recipient deleted between rule 5's read and
// the create is not looked at again here: the transfer controller fails a transfer whose
// recipient was deleted through the API, before any payout (docs/api.md, "A recipient deleted
// during a create").
func (s *Server) createTransfer(ctx context.Context, c *Caller, req transfer.Request, rc *payoutv1.Recipient,
	q *payoutv1.Quote, method payoutv1.TransferMethod) (*payoutv1.Transfer, error) {
	id := payoutv1.TransferNameForQuote(q.Name)
	network, token := payoutv1.Network(req.Network), payoutv1.Token(req.Token)
	t := &payoutv1.Transfer{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace(), Name: id,
			Labels: map[string]string{payoutv1.RecipientLineageLabel: rc.Lineage()}},
		Spec: payoutv1.TransferSpec{
			Method: method, Account: c.Account.Name, QuoteID: q.Name,
			Amount: payoutv1.USDAmount(req.Amount.StringFixed(2)), RecipientID: rc.Spec.ID,
			Recipient: payoutv1.RecipientSnapshot{ID: rc.Spec.ID, AccountHolderName: rc.Spec.AccountHolderName,
				Currency: rc.Spec.Currency, Type: rc.Spec.Type, Country: rc.Spec.Country, Details: rc.Spec.Details},
			Quote:        transfer.QuoteSnapshot(q),
			CustomerUUID: strings.ToLower(req.CustomerUUID), CustomerEmail: req.CustomerEmail,
			SourceToken: token, SourceNetwork: network, WalletAddress: req.Wallet, KeepRecipient: req.KeepRecipient,
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

	// the cap is judged after every rule of the spec but the duplicate's (rule 7, the claim's)
	free, err := s.reserveOpenTransfer(ctx, c, method)
	if err != nil {
		return nil, err
	}
	handedOff := false
	defer func() { // when the create failed; else once the transfer is cached (below)
		if !handedOff {
			free()
		}
	}()
	claim, err := s.claim(ctx, c, payoutv1.ClaimCustomerUUID, req.CustomerUUID, payoutv1.ObjectRef{Namespace: t.Namespace, Name: id})
	if apierrors.IsAlreadyExists(err) { // rule 7
		return nil, apierror.Errorf(apierror.Conflict, "customer_uuid %s is already used by another transfer", req.CustomerUUID)
	}
	if err != nil {
		return nil, err
	}
	if err := s.checkArchivedUUID(ctx, req.CustomerUUID); err != nil { // rule 7 for archived transfers
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
	// The caller's next request about the transfer (GET transfer, a confirmation) reads the
	// transfer book, which takes the transfer as the API server stored it: the answer does not
	// wait for the informer (3.5 ms a create on average under load, docs/benchmarks.md). The
	// place under the account's cap is held until the informers' count includes the transfer
	// (freeWhenCounted); should the cache never show it (deleted at once), the book lets it go
	// too.
	handedOff = true
	s.transferBook.put(t)
	go func() {
		ctx := context.WithoutCancel(ctx) // the request has been answered
		s.awaitCached(ctx, t)
		if cached, err := s.stores.transfer(ctx, t.Name); err == nil && cached == nil {
			s.transferBook.remove(t)
		}
		s.freeWhenCounted(ctx, t, free)
	}()
	return t, nil
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
	claim, err := s.claim(ctx, c, payoutv1.ClaimTxHash, hash, holder)
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

// walletBinding reads the holder of a v2 wallet's binding (PayoutAccount bindWallets: an account
// the wallet's owner proved control for holds it) past the cache: a binding is rare and a create
// must not miss one made a moment ago.
func (s *Server) walletBinding(ctx context.Context, c *Caller, wallet string) transfer.BindingFacts {
	key := chain.SenderKey(wallet)
	if key == "" {
		return transfer.BindingFacts{}
	}
	held := &payoutv1.Claim{}
	name := payoutv1.ClaimName(payoutv1.ClaimWalletBinding, payoutv1.NormalizeClaimKey(payoutv1.ClaimWalletBinding, key))
	switch err := s.cfg.APIReader.Get(ctx, client.ObjectKey{Name: name}, held); {
	case apierrors.IsNotFound(err):
		return transfer.BindingFacts{}
	case err != nil:
		return transfer.BindingFacts{Err: err}
	}
	return transfer.BindingFacts{Elsewhere: held.Spec.Holder.Namespace != c.Namespace()}
}

// transferRecipient reads the recipient named by recipientId (rule 5). It reads the cache, and
// past it only on a miss (a recipient made a moment ago on another replica); on a miss past it
// too, whether another account has a recipient of that id.
func (s *Server) transferRecipient(ctx context.Context, c *Caller, b *body) transfer.RecipientFacts {
	id, ok, err := b.integer("recipientId")
	if err != nil {
		return transfer.RecipientFacts{Err: err}
	}
	if !ok {
		return transfer.RecipientFacts{Err: apierror.FieldErrorf("recipientId", "is required")}
	}
	f := transfer.RecipientFacts{ID: id}
	name := strconv.FormatInt(id, 10)
	key := client.ObjectKey{Namespace: c.Namespace(), Name: name}
	rc := &payoutv1.Recipient{}
	err = s.cfg.Client.Get(ctx, key, rc)
	if apierrors.IsNotFound(err) {
		err = s.cfg.APIReader.Get(ctx, key, rc)
	}
	switch {
	case apierrors.IsNotFound(err):
		list := &payoutv1.RecipientList{}
		if err := s.cfg.Client.List(ctx, list, client.MatchingFields{index.Name: name}, client.UnsafeDisableDeepCopy); err != nil {
			f.Err = err
		}
		f.Elsewhere = len(list.Items) > 0
	case err != nil:
		f.Err = err
	default:
		f.Recipient = rc
	}
	return f
}

// transferQuote reads the account's quote quoteID and whether a transfer used it. A quote is
// immutable and its single use is enforced by the transfer's create, so the cache serves; a
// quote made a moment ago on another replica is read past it.
func (s *Server) transferQuote(ctx context.Context, c *Caller, quoteID string) transfer.QuoteFacts {
	key := client.ObjectKey{Namespace: c.Namespace(), Name: strings.ToLower(quoteID)}
	q := &payoutv1.Quote{}
	err := s.cfg.Client.Get(ctx, key, q)
	if apierrors.IsNotFound(err) {
		err = s.cfg.APIReader.Get(ctx, key, q)
	}
	switch {
	case apierrors.IsNotFound(err):
		return transfer.QuoteFacts{}
	case err != nil:
		return transfer.QuoteFacts{Err: err}
	}
	used := s.cfg.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace(), Name: payoutv1.TransferNameForQuote(q.Name)}, &payoutv1.Transfer{}) == nil
	return transfer.QuoteFacts{Quote: q, Used: used}
}

// depositOption reads the deposit option of the request's token and network.
func (s *Server) depositOption(ctx context.Context, req transfer.Request) transfer.OptionFacts {
	opt := &payoutv1.DepositOption{}
	err := s.cfg.Client.Get(ctx, client.ObjectKey{Name: payoutv1.DepositOptionName(payoutv1.Token(req.Token), payoutv1.Network(req.Network))}, opt)
	switch {
	case apierrors.IsNotFound(err):
		return transfer.OptionFacts{}
	case err != nil:
		return transfer.OptionFacts{Err: err}
	}
	return transfer.OptionFacts{Option: opt}
}
