package controllers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/compliance/walletscreen"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/fiat"
	"github.com/stablepay/payout-operator/internal/fiat/wise"
	"github.com/stablepay/payout-operator/internal/secret"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/test/testgen"
)

// The transfer controller's tests run Reconcile directly against the real API server and the
// simulated bank over HTTP, and assert the stored transfer and the bank's ledger.

const bankToken = "test-bank-token"

// startBank starts a simulated bank for one test and a Wise-style client of it.
func startBank(faults simbank.Faults) (*simbank.Server, fiat.Provider) {
	GinkgoHelper()
	return startBankWith(simbank.Options{Faults: faults})
}

// startBankWith starts a simulated bank with o (settling in 200 ms unless o says otherwise) and
// a Wise-style client of it.
func startBankWith(o simbank.Options) (*simbank.Server, fiat.Provider) {
	GinkgoHelper()
	o.Addr, o.Dir, o.Token = "127.0.0.1:0", GinkgoT().TempDir(), bankToken
	if o.SettleAfter == 0 {
		o.SettleAfter = 200 * time.Millisecond
	}
	bank, err := simbank.Start(o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(bank.Close)
	cfg := wise.DefaultConfig()
	cfg.BaseURL, cfg.Token, cfg.ProfileID, cfg.Name = bank.URL(), secret.New(bankToken), 1, "simbank"
	cfg.Timeout, cfg.Retries, cfg.RetryBackoff = 2*time.Second, 0, 10*time.Millisecond
	p, err := wise.New(cfg)
	Expect(err).NotTo(HaveOccurred())
	return bank, p
}

// mailLog is the Notifier of these tests: it records what would be mailed. (The SMTP round
// trip is tested in internal/notify against a real SMTP server.)
type mailLog struct {
	mu   sync.Mutex
	sent []string
	fail error
}

func (m *mailLog) Notify(_ context.Context, kind payoutv1.NotificationKind, t *payoutv1.Transfer) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return "", m.fail
	}
	m.sent = append(m.sent, t.Name+"/"+string(kind))
	return "<" + t.Name + "." + string(kind) + "@test>", nil
}
func (m *mailLog) Permanent(error) bool { return false }
func (m *mailLog) all() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.sent...)
}

type fixedV2 string

func (a fixedV2) V2Address(payoutv1.Network, payoutv1.Token) (string, bool) { return string(a), true }

type transferFixture struct {
	r    *TransferReconciler
	bank *simbank.Server
	mail *mailLog
	ns   string
	rc   *payoutv1.Recipient
	// blocks numbers the deposits in the order the test makes them
	blocks int64
}

func newTransferFixture(holder string, faults simbank.Faults) *transferFixture {
	GinkgoHelper()
	bank, provider := startBank(faults)
	f := &transferFixture{bank: bank, mail: &mailLog{}, ns: namespace()}
	f.r = &TransferReconciler{Client: env.Client, APIReader: env.Client, Recorder: events.NewFakeRecorder(100), Clock: clock.RealClock{},
		Provider: provider, Notifier: f.mail, V2: fixedV2("0x00000000000000000000000000000000000000f2"), MailRetry: time.Second,
		Screener: walletscreen.LocalList{Reader: env.Client}}
	f.rc = testgen.Recipient(f.ns, 123456789, func(r *payoutv1.Recipient) {
		r.Spec.AccountHolderName = holder
		r.Labels = map[string]string{payoutv1.RecipientLineageLabel: "123456789"}
	})
	Expect(env.Client.Create(ctx, f.rc)).To(Succeed())
	return f
}

func (f *transferFixture) transfer(id string, mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
	GinkgoHelper()
	t := testgen.Transfer(f.ns, id, append([]func(*payoutv1.Transfer){func(t *payoutv1.Transfer) {
		t.Labels = map[string]string{payoutv1.RecipientLineageLabel: "123456789"}
		t.Spec.Recipient.AccountHolderName = f.rc.Spec.AccountHolderName
		expires := metav1.NewTime(time.Now().Add(time.Hour))
		t.Spec.ExpiresAt = &expires
	}}, mods...)...)
	Expect(env.Client.Create(ctx, t)).To(Succeed())
	return t
}

// deposit records a deposit for t as the chain watcher does, mined now.
func (f *transferFixture) deposit(t *payoutv1.Transfer, amount string) {
	GinkgoHelper()
	f.depositAt(t, amount, time.Now())
}

// depositAt records a deposit for t mined at bt.
func (f *transferFixture) depositAt(t *payoutv1.Transfer, amount string, bt time.Time) {
	GinkgoHelper()
	f.blocks++
	tx := fmt.Sprintf("0x%064x", time.Now().UnixNano())
	Expect(env.Client.Create(ctx, &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: payoutv1.DepositName(t.Spec.SourceNetwork, tx, 0),
			Labels: map[string]string{payoutv1.DepositTransferLabel: t.Name}},
		Spec: payoutv1.DepositSpec{Transfer: t.Name, Network: t.Spec.SourceNetwork, Token: t.Spec.SourceToken, Contract: "0xc0ffee",
			To: strings.ToLower(t.Spec.DepositAddress), From: strings.ToLower(t.Spec.WalletAddress), Amount: amount, TxHash: tx,
			BlockNumber: 100 + f.blocks, BlockHash: "0xbb", BlockTime: metav1.NewTime(bt), Confirmations: 3},
	})).To(Succeed())
}

// depositFrom records a deposit of amount of token for t from sender.
func (f *transferFixture) depositFrom(t *payoutv1.Transfer, sender string, token payoutv1.Token, amount string) {
	GinkgoHelper()
	d := t.DeepCopy()
	d.Spec.WalletAddress, d.Spec.SourceToken = sender, token
	f.deposit(d, amount)
}

// cursor stores the watcher's cursor of network, scanned to a block of time bt.
func (f *transferFixture) cursor(network payoutv1.Network, bt time.Time) *payoutv1.ChainCursor {
	GinkgoHelper()
	c := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: string(network)}, Spec: payoutv1.ChainCursorSpec{Network: network}}
	err := env.Client.Create(ctx, c)
	if apierrors.IsAlreadyExists(err) {
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	f.passCursor(c, bt)
	return c
}

// passCursor moves a cursor to a block of time bt.
func (f *transferFixture) passCursor(c *payoutv1.ChainCursor, bt time.Time) {
	GinkgoHelper()
	f.blocks++
	at := metav1.NewTime(bt)
	c.Status.Block, c.Status.BlockHash, c.Status.BlockTime = 1000+f.blocks, "0xcc", &at
	Expect(env.Client.Status().Update(ctx, c)).To(Succeed())
}

// unreachableScreener is a test double of a risk service that cannot be reached.
type unreachableScreener struct{}

func (unreachableScreener) Blocked(context.Context, string) (bool, error) {
	return false, fmt.Errorf("dial tcp 10.0.0.1:443: connection refused")
}

// reconcile runs one pass and returns the stored transfer.
func (f *transferFixture) reconcile(t *payoutv1.Transfer) *payoutv1.Transfer {
	GinkgoHelper()
	_, err := f.r.Reconcile(ctx, request(t))
	Expect(err).NotTo(HaveOccurred())
	got := &payoutv1.Transfer{}
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), got)).To(Succeed())
	return got
}

// until reconciles until the transfer reaches phase (the bank settles in its own time).
func (f *transferFixture) until(t *payoutv1.Transfer, phase payoutv1.TransferPhase) *payoutv1.Transfer {
	GinkgoHelper()
	var got *payoutv1.Transfer
	Eventually(func() payoutv1.TransferPhase {
		_, err := f.r.Reconcile(ctx, request(t))
		Expect(err).NotTo(HaveOccurred())
		got = &payoutv1.Transfer{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), got)).To(Succeed())
		return got.Status.Phase
	}).WithTimeout(10 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(phase))
	return got
}

func (f *transferFixture) recipientDeleted() bool {
	GinkgoHelper()
	rc := &payoutv1.Recipient{}
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(f.rc), rc)).To(Succeed())
	return rc.Spec.Deactivated
}

func sentEntries(bank *simbank.Server, reference string) (all, sent int) {
	for _, e := range bank.Ledger() {
		if e.Reference == reference {
			all++
			if e.SentAt != nil {
				sent++
			}
		}
	}
	return all, sent
}

var _ = Describe("TransferReconciler", func() {
	It("takes a v1 transfer from its deposit to a completed payout, once", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{})
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0001")
		got := f.reconcile(t)
		Expect(got.Status.Phase).To(Equal(payoutv1.PhaseReadyToProcess), "the schema's default")
		Expect(got.ResourceVersion).To(Equal(t.ResourceVersion), "a fresh v1 transfer's status is not written")
		Expect(got.Status.History).To(BeEmpty())
		Expect(got.Status.Payout).To(BeNil())

		f.deposit(t, "25000000")
		got = f.reconcile(t)
		Expect(got.Status.Phase).To(Equal(payoutv1.PhaseProcessing))
		Expect(got.Status.Payout.State).To(Equal(payoutv1.PayoutRequested), "the intent is stored before the bank is called")
		all, _ := sentEntries(f.bank, t.Name)
		Expect(all).To(BeZero(), "no call to the bank in the pass that records the intent")

		got = f.reconcile(t)
		Expect(got.Status.Phase).To(Equal(payoutv1.PhaseTransferCreated))
		Expect(got.Status.Payout.ProviderID).NotTo(BeEmpty())

		got = f.until(t, payoutv1.PhaseCompleted)
		Expect(got.Status.Payout.TargetAmount).To(Equal(payoutv1.Decimal("21.56")))
		Expect(f.recipientDeleted()).To(BeTrue(), "the recipient is deleted after the transfer ends")
		Expect(f.mail.all()).To(ConsistOf(t.Name + "/PayoutSent"))
		Expect(got.Status.Notifications).To(HaveLen(1))
		phases := []payoutv1.TransferPhase{}
		for _, h := range got.Status.History {
			phases = append(phases, h.Status)
		}
		Expect(phases).To(Equal([]payoutv1.TransferPhase{payoutv1.PhaseReadyToProcess, payoutv1.PhaseProcessing,
			payoutv1.PhaseTransferCreated, payoutv1.PhaseCompleted}))

		for range 3 {
			f.reconcile(t)
		}
		all, sent := sentEntries(f.bank, t.Name)
		Expect([]int{all, sent}).To(Equal([]int{1, 1}), "one payout in the bank's ledger, sent once")
		Expect(f.mail.all()).To(HaveLen(1), "each outcome is mailed once")
		for _, e := range f.bank.Ledger() {
			if e.Reference == t.Name {
				Expect(e.TargetAmount.String()).To(Equal("21.56"))
				Expect(e.TargetCurrency).To(Equal("EUR"))
			}
		}
	})

	It("pays a transfer a cent under its quote what that cent less buys, never the quote's target (issue 22 item 9)", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{})
		// spec 4.10 lets amount be the quote's 25.00 less 0.01; the customer sends 24.99
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0009", func(t *payoutv1.Transfer) { t.Spec.Amount = "24.99" })
		f.deposit(t, "24990000")
		got := f.until(t, payoutv1.PhaseCompleted)
		// (24.99 - 0.50 transfer fee) × 0.88022588 = 21.5567318..., truncated: the quote's
		// 21.56 would pay out money that was never collected
		Expect(got.Status.Payout.TargetAmount).To(Equal(payoutv1.Decimal("21.55")))
		e, ok := f.bank.Find(t.Name)
		Expect(ok).To(BeTrue(), "the payout is in the bank's ledger")
		Expect(e.TargetAmount.String()).To(Equal("21.55"))
		Expect(e.TargetCurrency).To(Equal("EUR"))
		all, sent := sentEntries(f.bank, t.Name)
		Expect([]int{all, sent}).To(Equal([]int{1, 1}))
	})

	It("asks the bank by reference after a lost answer and never pays twice", func() {
		// The bank makes the transfer and funds it, but every answer to the create is lost on the
		// way, as if the controller crashed right after calling.
		f := newTransferFixture("Jane Doe", simbank.Faults{DropRate: 1, Ops: []string{simbank.OpTransfer, simbank.OpFund}})
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0002")
		f.deposit(t, "25000000")
		f.reconcile(t)
		// The transfer's create is lost, then its funding: each pass asks the bank by reference
		// first and carries on from what the bank holds.
		for _, step := range []string{"/v1/transfers", "/payments"} {
			_, err := f.r.Reconcile(ctx, request(t))
			Expect(err).To(MatchError(ContainSubstring(step)), "the lost answer is an error; the transfer waits")
		}
		Expect(f.bank.FaultCounts().Drops).To(Equal(2))
		f.bank.SetFaults(simbank.Faults{})
		got := f.until(t, payoutv1.PhaseCompleted)
		Expect(got.Status.Failure).To(BeNil())
		all, sent := sentEntries(f.bank, t.Name)
		Expect([]int{all, sent}).To(Equal([]int{1, 1}))
		for _, e := range f.bank.Ledger() {
			if e.Reference == t.Name {
				Expect(e.Fundings).To(Equal(1), "funded once")
			}
		}
	})

	It("fails a payout the bank rejects, pays nothing and keeps the deposit refundable", func() {
		f := newTransferFixture("Simulated Failure", simbank.Faults{})
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0003")
		f.deposit(t, "25000000")
		got := f.until(t, payoutv1.PhaseFailed)
		Expect(got.Status.Failure.Reason).To(Equal(payoutv1.FailurePayoutRejected))
		Expect(got.Status.Failure.Message).NotTo(BeEmpty())
		Expect(got.Status.Deposit.ConfirmedAt).NotTo(BeNil())
		_, sent := sentEntries(f.bank, t.Name)
		Expect(sent).To(BeZero())
		Expect(f.recipientDeleted()).To(BeTrue())
		Expect(f.mail.all()).To(ConsistOf(t.Name + "/Failed"))

		// an operator's refund, once at depth, makes it refunded
		rf := &payoutv1.Refund{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name}, Spec: payoutv1.RefundSpec{Transfer: t.Name}}
		Expect(env.Client.Create(ctx, rf)).To(Succeed())
		confirmRefund(rf, got.Status.Deposit.From, "25000000")
		got = f.reconcile(t)
		Expect(got.Status.Phase).To(Equal(payoutv1.PhaseRefunded))
		Expect(got.Status.Refund.TxHash).To(Equal(rf.Status.TxHash))
	})

	It("stops a cancelled transfer before its payout, and never after", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{})
		cancel := func(t *payoutv1.Transfer) {
			GinkgoHelper()
			cur := &payoutv1.Transfer{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), cur)).To(Succeed())
			next := cur.DeepCopy()
			next.Spec.Cancellation = &payoutv1.TransferCancellation{Reason: payoutv1.FailureRecipientDeleted, Message: "recipient 123456789 was deleted", RequestedAt: metav1.Now()}
			Expect(env.Client.Patch(ctx, next, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{}))).To(Succeed())
		}
		early := f.transfer("aaaaaaaaaaaaaaaaaaaa0004")
		f.deposit(early, "25000000")
		cancel(early)
		got := f.reconcile(early)
		Expect(got.Status.Failure.Reason).To(Equal(payoutv1.FailureRecipientDeleted))
		Expect(got.Status.Payout).To(BeNil())
		Expect(got.Status.Deposit).NotTo(BeNil(), "the deposit is recorded, refundable")
		f.reconcile(early)
		all, _ := sentEntries(f.bank, early.Name)
		Expect(all).To(BeZero())

		// A payout intent stored first: the facade's cancellation request is refused (its write
		// conflicts or finds the intent), and the payout completes.
		late := f.transfer("aaaaaaaaaaaaaaaaaaaa0005")
		f.deposit(late, "25000000")
		stored := f.reconcile(late)
		Expect(stored.Status.Payout).NotTo(BeNil())
		Expect(transfer.Cancellable(stored)).To(BeFalse())
		got = f.until(late, payoutv1.PhaseCompleted)
		Expect(got.Status.Failure).To(BeNil())
	})

	It("credits only the wallet's own deposits, adds them up, and keeps every other one apart", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{})
		// a stranger's dust first, then the wallet's payment in two sends
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0006")
		f.depositFrom(t, "0x1111111111111111111111111111111111111111", t.Spec.SourceToken, "1")
		f.deposit(t, "10000000")
		got := f.reconcile(t)
		Expect(got.Status.Failure).To(BeNil(), "dust fails nothing")
		Expect(got.Status.Deposit).To(BeNil(), "the first send waits for the rest")
		Expect(got.Status.StrayDeposits).To(HaveLen(1))
		f.deposit(t, "20000000")
		got = f.reconcile(t)
		Expect(got.Status.Payout).NotTo(BeNil())
		Expect(got.Status.Deposit.Amount).To(Equal("25000000"))
		Expect(got.Status.Deposit.Parts).To(HaveLen(2))
		Expect(got.Status.StrayDeposits).To(HaveLen(2), "the dust and the excess of the second send")

		// a stranger's full payment pays nothing, nor does a wrong token
		other := f.transfer("aaaaaaaaaaaaaaaaaaaa0007")
		f.depositFrom(other, "0x1111111111111111111111111111111111111111", other.Spec.SourceToken, "25000000")
		f.depositFrom(other, other.Spec.WalletAddress, payoutv1.TokenUSDT, "25000000")
		got = f.reconcile(other)
		Expect(got.Status.Payout).To(BeNil())
		Expect(got.Status.Failure).To(BeNil())
		Expect(got.Status.StrayDeposits).To(HaveLen(2))
		all, _ := sentEntries(f.bank, other.Name)
		Expect(all).To(BeZero())
	})

	It("expires a transfer only once its network's watcher has scanned past the expiry, reading the deposits past the cache", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{})
		// on arbitrum: the deposit options' spec owns base's cursor
		expired := func(t *payoutv1.Transfer) {
			e := metav1.NewTime(time.Now().Add(-time.Minute))
			t.Spec.ExpiresAt, t.Spec.SourceNetwork = &e, payoutv1.NetworkArbitrum
		}
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0013", expired)
		f.depositAt(t, "24000000", time.Now().Add(-2*time.Minute))
		got := f.reconcile(t)
		Expect(got.Status.Failure).To(BeNil(), "no cursor of the network: the chain has not passed the expiry")
		cursor := f.cursor(payoutv1.NetworkArbitrum, time.Now().Add(-2*time.Minute))
		got = f.reconcile(t)
		Expect(got.Status.Failure).To(BeNil(), "the watcher is behind the expiry")
		Expect(meta.FindStatusCondition(got.Status.Conditions, payoutv1.ReadyCondition).Message).To(ContainSubstring("waiting for the arbitrum watcher"))
		f.passCursor(cursor, time.Now())
		got = f.reconcile(t)
		Expect(got.Status.Failure).NotTo(BeNil())
		Expect(got.Status.Failure.Reason).To(Equal(payoutv1.FailureDepositShort))
		Expect(got.Status.Deposit.Amount).To(Equal("24000000"), "what arrived is kept refundable")
	})

	It("screens the wallet that paid before the payout, holds it while the service cannot answer, and fails a blocked one", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{})
		down := &unreachableScreener{}
		f.r.Screener = down
		// a wallet of its own: the risk list is the cluster's, shared by every spec
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0014", func(t *payoutv1.Transfer) { t.Spec.WalletAddress = "0x00000000000000000000000000000000000b10c0" })
		f.deposit(t, "25000000")
		got := f.reconcile(t)
		Expect(got.Status.Payout).To(BeNil(), "nothing is paid to an unscreened payer")
		Expect(got.Status.SenderScreening.Result).To(Equal(payoutv1.ScreeningUnavailable))
		Expect(meta.FindStatusCondition(got.Status.Conditions, payoutv1.ReadyCondition).Message).To(ContainSubstring("risk service cannot answer"))

		f.r.Screener = walletscreen.LocalList{Reader: env.Client}
		Expect(env.Client.Create(ctx, &payoutv1.BlockedWallet{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.WalletName(t.Spec.WalletAddress)},
			Spec: payoutv1.BlockedWalletSpec{Address: payoutv1.NormalizeWallet(t.Spec.WalletAddress), Reason: "test"}})).To(Succeed())
		Eventually(func() payoutv1.FailureReason {
			got = f.reconcile(t)
			if got.Status.Failure == nil {
				return ""
			}
			return got.Status.Failure.Reason
		}).Should(Equal(payoutv1.FailureSenderBlocked))
		Expect(got.Status.Payout).To(BeNil())
		all, _ := sentEntries(f.bank, t.Name)
		Expect(all).To(BeZero())
	})

	It("lets a recipient's automatic deletion spare its other transfers, and a deletion through the API stop them", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{})
		first, second := f.transfer("aaaaaaaaaaaaaaaaaaaa0010"), f.transfer("aaaaaaaaaaaaaaaaaaaa0011")
		f.deposit(first, "25000000")
		f.until(first, payoutv1.PhaseCompleted)
		rc := &payoutv1.Recipient{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(f.rc), rc)).To(Succeed())
		Expect(rc.Spec.Deactivated).To(BeTrue())
		Expect(rc.Spec.Deletion).To(Equal(&payoutv1.RecipientDeletion{AfterTransfer: first.Name}))
		Expect(rc.DeletedAt()).To(BeZero(), "an automatic deletion is no deletion through the API")
		f.deposit(second, "25000000")
		Expect(f.until(second, payoutv1.PhaseCompleted).Status.Failure).To(BeNil(), "pays out to its snapshot")

		// A transfer created while its recipient was being deleted through the API, which the
		// deletion's cancellation did not see: the controller stops it before any payout.
		g := newTransferFixture("Jane Doe", simbank.Faults{})
		escaped := g.transfer("aaaaaaaaaaaaaaaaaaaa0012")
		g.deposit(escaped, "25000000")
		deleted := g.rc.DeepCopy()
		deleted.Spec.Deactivated = true
		at := metav1.NewMicroTime(time.Now().Add(-transfer.RecipientDeletionGrace))
		deleted.Spec.Deletion = &payoutv1.RecipientDeletion{At: &at}
		Expect(env.Client.Patch(ctx, deleted, client.MergeFrom(g.rc))).To(Succeed())
		got := g.reconcile(escaped)
		Expect(got.Status.Failure.Reason).To(Equal(payoutv1.FailureRecipientDeleted))
		Expect(got.Status.Payout).To(BeNil())

		// The same, with the recipient deleted by a release before spec.deletion: it recorded the
		// deletion in an annotation, which still reads deleted (docs/operations/upgrade.md).
		h := newTransferFixture("Jane Doe", simbank.Faults{})
		older := h.transfer("aaaaaaaaaaaaaaaaaaaa0013")
		h.deposit(older, "25000000")
		deleted = h.rc.DeepCopy()
		deleted.Spec.Deactivated = true
		deleted.Annotations = map[string]string{payoutv1.RecipientDeletedAtAnnotation: time.Now().Add(-transfer.RecipientDeletionGrace).UTC().Format(time.RFC3339Nano)}
		Expect(env.Client.Patch(ctx, deleted, client.MergeFrom(h.rc))).To(Succeed())
		got = h.reconcile(older)
		Expect(got.Status.Failure.Reason).To(Equal(payoutv1.FailureRecipientDeleted))
		Expect(got.Status.Payout).To(BeNil())
	})

	It("delays a mail the server cannot take, never the transfer", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{})
		f.mail.fail = fmt.Errorf("connection refused")
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0009")
		f.deposit(t, "25000000")
		got := f.until(t, payoutv1.PhaseCompleted)
		Expect(got.Status.Notifications).To(HaveLen(1))
		Expect(got.Status.Notifications[0].State).To(Equal(payoutv1.NotificationPending), "the outcome to mail is stored before it is sent")
		res, err := f.r.Reconcile(ctx, request(t))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(Equal(time.Second), "the mail is tried again later")
		f.mail.mu.Lock()
		f.mail.fail = nil
		f.mail.mu.Unlock()
		got = f.reconcile(t)
		Expect(got.Status.Notifications).To(HaveLen(1))
		Expect(got.Status.Notifications[0].State).To(Equal(payoutv1.NotificationSent))
		Expect(f.mail.all()).To(HaveLen(1))
		Expect(strconv.Itoa(len(got.Status.History))).To(Equal("4"))
	})
})

// gateSwitch is the recovery check's gate as the controllers see it (internal/recovery.Checker,
// which needs payoutd's leader election to run, is tested end to end in cmd/payoutd): closed,
// it says why money waits.
type gateSwitch struct {
	mu     sync.Mutex
	closed string
}

func (g *gateSwitch) MoneyMoves(context.Context) (bool, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed == "", g.closed
}

func (g *gateSwitch) set(closed string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = closed
}

var _ = Describe("TransferReconciler behind the recovery gate", func() {
	It("creates no payout while money waits for an operator, says why, and pays once the gate opens", func() {
		f := newTransferFixture("Jane Doe", simbank.Faults{})
		gate := &gateSwitch{}
		f.r.Gate = gate
		t := f.transfer("aaaaaaaaaaaaaaaaaaaa0301")
		f.deposit(t, "25000000")
		got := f.reconcile(t)
		Expect(got.Status.Payout.State).To(Equal(payoutv1.PayoutRequested), "the intent is recorded: it moves no money")

		gate.set("the recovery check found the records behind the provider; money waits for an operator")
		for range 3 {
			got = f.reconcile(t)
		}
		Expect(got.Status.Phase).To(Equal(payoutv1.PhaseProcessing))
		Expect(got.Status.Payout.State).To(Equal(payoutv1.PayoutRequested))
		ready := meta.FindStatusCondition(got.Status.Conditions, payoutv1.ReadyCondition)
		Expect(ready).NotTo(BeNil())
		Expect(ready.Message).To(ContainSubstring("money waits for an operator"))
		all, _ := sentEntries(f.bank, t.Name)
		Expect(all).To(BeZero(), "no payout is created at the bank while the gate is closed")

		gate.set("")
		got = f.until(t, payoutv1.PhaseCompleted)
		all, sent := sentEntries(f.bank, t.Name)
		Expect([]int{all, sent}).To(Equal([]int{1, 1}))
	})
})

// confirmRefund writes rf's status through the states the refund controller writes, to
// Confirmed sending amount to to: a refund's status only moves forward (its transition rules).
func confirmRefund(rf *payoutv1.Refund, to, amount string) {
	GinkgoHelper()
	at := metav1.Now()
	pending := payoutv1.RefundStatus{State: payoutv1.RefundPending, Amount: amount, To: to}
	signed := pending
	signed.State, signed.TxHash, signed.SignedTx, signed.Nonce = payoutv1.RefundSigned, "0x"+strings.Repeat("ef", 32), "0x01", new(int64)
	confirmed := signed
	confirmed.State, confirmed.ConfirmedAt = payoutv1.RefundConfirmed, &at
	for _, st := range []payoutv1.RefundStatus{pending, signed, confirmed} {
		rf.Status = st
		Expect(env.Client.Status().Update(ctx, rf)).To(Succeed())
	}
}
