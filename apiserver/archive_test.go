package apiserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/controllers"
	"github.com/stablepay/payout-operator/internal/archive"
	"github.com/stablepay/payout-operator/internal/fiat/wise"
	"github.com/stablepay/payout-operator/internal/treasury"
	"github.com/stablepay/payout-operator/test/pgtest"
)

// Retention on the real facade, the real transfer controller and a real PostgreSQL:
// transfers are created through the API and finished by the controllers (a deposit recorded as
// the chain watcher records it, the simulated bank paying out); the archiver runs its passes
// with a clock past a completed payout's return window (six weeks and an hour ahead) and a
// retention of a minute, so that whatever ended is due.
var _ = Describe("retention: finished transfers move to the archive (issue 17)", Ordered, func() {
	var (
		pg       *pgtest.Server
		store    *archive.Store
		archived *Server // a facade with the archive
		arch     *controllers.Archiver
	)
	BeforeAll(func() {
		pg = pgtest.Start(GinkgoT())
		var err error
		store, err = archive.Open(ctx, pg.DSN())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(store.Close)
		cfg := baseCfg
		cfg.Archive = store
		archived = openServer(cfg, unlimited)
		cfg2 := archive.DefaultConfig()
		cfg2.Retention, cfg2.Batch, cfg2.Rate = time.Minute, 10, 1000
		arch = &controllers.Archiver{Client: srv.cfg.Client, Store: store, Clock: clocktesting.NewFakeClock(time.Now().Add(wise.DefaultReturnWindow + time.Hour)),
			Config: cfg2, TransferJSON: TransferLookupJSON, RecipientJSON: RecipientLookupJSON, Log: ctrl.Log.WithName("archiver")}
	})

	// pass runs archive passes until obj has left the API server and the facade's cache.
	passUntilGone := func(obj client.Object) {
		GinkgoHelper()
		Eventually(func() bool {
			_, err := arch.Pass(ctx)
			Expect(err).NotTo(HaveOccurred())
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))) &&
				apierrors.IsNotFound(srv.cfg.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)))
		}).Should(BeTrue())
	}
	lookup := func(p *payee, id string) *response {
		GinkgoHelper()
		return p.c.on(archived).get("/api/payouts/transfer/" + id)
	}
	// finishedV1 creates a v1 transfer and sends it amount (base units): the deposit recorded as
	// the watcher does, then the controller and the simulated bank take it to its end.
	finishedV1 := func(p *payee, amount string, want payoutv1.TransferPhase) (*payoutv1.Transfer, obj) {
		GinkgoHelper()
		b := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		r := p.c.on(archived).post("/api/payouts/transfer", b)
		Expect(r.status).To(Equal(200), "%s", r)
		id := r.json()["transfer"].(map[string]any)["id"].(string)
		t := storedTransfer(p.account, id)
		hash := randomHash()
		Expect(env.Client.Create(ctx, &payoutv1.Deposit{
			ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: payoutv1.DepositName(payoutv1.NetworkBase, hash, 1),
				Labels: map[string]string{payoutv1.DepositTransferLabel: id}},
			Spec: payoutv1.DepositSpec{Transfer: id, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
				Contract: "0x00000000000000000000000000000000000000c1", To: t.Spec.DepositAddress, From: senderWallet, Amount: amount,
				TxHash: hash, LogIndex: 1, BlockNumber: 100, BlockHash: randomHash(), BlockTime: metav1.Now(), Confirmations: 3},
		})).To(Succeed())
		Eventually(func() payoutv1.TransferPhase {
			got := &payoutv1.Transfer{}
			if srv.cfg.Client.Get(ctx, client.ObjectKeyFromObject(t), got) != nil {
				return ""
			}
			return got.Status.Phase
		}).WithTimeout(30 * time.Second).Should(Equal(want))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
		return t, b
	}

	var (
		done      *payoutv1.Transfer
		doneBody  obj
		doneOwner *payee
	)

	It("archives a completed transfer and answers its lookup byte for byte as before", func() {
		doneOwner = newPayee()
		done, doneBody = finishedV1(doneOwner, "25000000", payoutv1.PhaseCompleted)
		// the controller deletes the recipient after the transfer (spec 2.1): wait for it, and for
		// the facade's cache to hold the transfer's last version
		Eventually(func() any { return doneOwner.c.get(rpath(doneOwner.rid)).json()["active"] }).Should(BeFalse())
		Eventually(func() string {
			got := &payoutv1.Transfer{}
			_ = srv.cfg.Client.Get(ctx, client.ObjectKeyFromObject(done), got)
			return got.ResourceVersion
		}).Should(Equal(done.ResourceVersion))
		before := lookup(doneOwner, done.Name)
		Expect(before.status).To(Equal(200))
		stranger := newPayee()
		maskedBefore := lookup(stranger, done.Name)
		Expect(maskedBefore.status).To(Equal(200))
		Expect(maskedBefore.json()["transfer"]).To(HaveKeyWithValue("wallet_address", "****BA72"))
		recipientBefore := doneOwner.c.on(archived).get(rpath(doneOwner.rid))
		Expect(recipientBefore.status).To(Equal(200))
		deposits := &payoutv1.DepositList{}
		Expect(env.Client.List(ctx, deposits, client.InNamespace(done.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: done.Name})).To(Succeed())
		Expect(deposits.Items).To(HaveLen(1))

		passUntilGone(done)

		after := lookup(doneOwner, done.Name)
		Expect(after.status).To(Equal(200), "%s", after)
		Expect(string(after.body)).To(Equal(string(before.body)), "the archived lookup is the live one, byte for byte")
		Expect(string(lookup(stranger, done.Name).body)).To(Equal(string(maskedBefore.body)), "another account's key gets it masked, as it did live")
		Expect(doneOwner.c.get("/api/payouts/transfer/"+done.Name).status).To(Equal(404), "a facade without the archive no longer finds it: it left etcd")
		// its live objects are gone: the deposit, the claim of its customer_uuid
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(&deposits.Items[0]), &payoutv1.Deposit{}))).To(BeTrue())
		uuidClaim := objKey(payoutv1.ClaimName(payoutv1.ClaimCustomerUUID, strings.ToLower(doneBody["customer_uuid"].(string))))
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, uuidClaim, &payoutv1.Claim{}))).To(BeTrue())
		got, ok, err := store.TransferLookup(ctx, done.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(`{"transfer":` + string(got) + "}\n").To(Equal(string(after.body)))

		// the deleted recipient follows once no transfer of its lineage is live; its lookup too
		// answers as before, another account's read is still a 403
		rc := &payoutv1.Recipient{ObjectMeta: metav1.ObjectMeta{Namespace: done.Namespace, Name: done.Labels[payoutv1.RecipientLineageLabel]}}
		passUntilGone(rc)
		recipientAfter := doneOwner.c.on(archived).get(rpath(doneOwner.rid))
		Expect(string(recipientAfter.body)).To(Equal(string(recipientBefore.body)))
		Expect(doneOwner.c.get(rpath(doneOwner.rid)).status).To(Equal(404))
		Expect(errorText(newPayee().c.on(archived).get(rpath(doneOwner.rid)), 403)).To(ContainSubstring("another account"))
		again := doneOwner.c.on(archived).do("DELETE", rpath(doneOwner.rid), nil)
		Expect(again.status).To(Equal(200), "%s", again)
		Expect(again.json()["transfers_failed"]).To(BeEquivalentTo("0"))
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, objKey(payoutv1.ClaimName(payoutv1.ClaimRecipientID, rc.Name)), &payoutv1.Claim{}))).To(BeTrue())
	})

	It("answers 409 for the customer_uuid and the deposit hash of an archived transfer", func() {
		p := newPayee()
		b := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		b["customer_uuid"] = strings.ToUpper(doneBody["customer_uuid"].(string))
		Expect(errorText(p.c.on(archived).post("/api/payouts/transfer", b), 409)).To(ContainSubstring("customer_uuid"))
		Expect(errorText(p.c.on(archived).post("/api/payouts/transfer/v2", b), 409)).To(ContainSubstring("customer_uuid"))
		// the claim taken for the check is given back (the claim controller deletes it on the
		// facade's request): the uuid stays the archive's alone
		claim := objKey(payoutv1.ClaimName(payoutv1.ClaimCustomerUUID, strings.ToLower(b["customer_uuid"].(string))))
		Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, claim, &payoutv1.Claim{})) }).Should(BeTrue())

		r := p.c.on(archived).post("/api/payouts/transfer/v2", v1Body(p.quote("EUR", "21.00"), "21.00", p.rid))
		Expect(r.status).To(Equal(200), "%s", r)
		v2 := r.json()["transfer_id"].(string)
		Expect(errorText(p.c.on(archived).post("/api/payouts/transfer/v2/confirm-transfer",
			obj{"transfer_id": v2, "tx_hash": "0x" + strings.ToUpper(done.Status.Deposit.TxHash[2:])}), 409)).To(ContainSubstring("already linked"))
	})

	It("archives a v2 transfer with its hash: the hash stays taken, its confirmation answers as the rules say", func() {
		p := newPayee()
		r := p.c.on(archived).post("/api/payouts/transfer/v2", v1Body(p.quote("EUR", "21.00"), "21.00", p.rid))
		Expect(r.status).To(Equal(200), "%s", r)
		id := r.json()["transfer_id"].(string)
		hash := randomHash()
		confirm := func(id, hash string) *response {
			return p.c.on(archived).post("/api/payouts/transfer/v2/confirm-transfer", obj{"transfer_id": id, "tx_hash": hash})
		}
		Expect(confirm(id, hash).status).To(Equal(200))
		// the recipient's deletion stops it before any deposit: failed, nothing owed
		Expect(p.c.do("DELETE", rpath(p.rid), nil).json()["transfers_failed"]).To(BeEquivalentTo("1"))
		t := storedTransfer(p.account, id)
		Eventually(func() *payoutv1.TransferFailure {
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
			return t.Status.Failure
		}).ShouldNot(BeNil())
		Eventually(func() *payoutv1.TransferFailure {
			got := &payoutv1.Transfer{}
			_ = srv.cfg.Client.Get(ctx, client.ObjectKeyFromObject(t), got)
			return got.Status.Failure
		}).ShouldNot(BeNil())
		before := lookup(p, id)
		passUntilGone(t)
		Expect(string(lookup(p, id).body)).To(Equal(string(before.body)))

		same := confirm(id, hash)
		Expect(same.status).To(Equal(200), "%s", same)
		Expect(same.json()).To(HaveKeyWithValue("status", "failed"))
		Expect(errorText(confirm(id, randomHash()), 409)).To(ContainSubstring("another transaction hash"), "rule 3")
		q := newPayee()
		r2 := q.c.on(archived).post("/api/payouts/transfer/v2", v1Body(q.quote("EUR", "21.00"), "21.00", q.rid))
		Expect(r2.status).To(Equal(200), "%s", r2)
		other := r2.json()["transfer_id"].(string)
		Expect(errorText(q.c.on(archived).post("/api/payouts/transfer/v2/confirm-transfer", obj{"transfer_id": other, "tx_hash": hash}), 409)).
			To(ContainSubstring("already linked"), "rule 1 for an archived transfer's hash")
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, objKey(payoutv1.ClaimName(payoutv1.ClaimTxHash, hash)), &payoutv1.Claim{}))
		}).Should(BeTrue(), "the claim taken for the check is given back (by the claim controller, on the facade's request)")
		Expect(errorText(q.c.on(archived).post("/api/payouts/transfer/v2/confirm-transfer", obj{"transfer_id": id, "tx_hash": hash}), 403)).
			To(ContainSubstring("another account"))
	})

	It("never archives a failed transfer whose deposit was not refunded", func() {
		p := newPayee()
		p.rid = idOf(p.create(ibanBody("Simulated Failure")))       // the bank rejects its payouts
		short, _ := finishedV1(p, "25000000", payoutv1.PhaseFailed) // PayoutRejected: the deposit is kept for a refund
		Expect(short.Status.Failure.Reason).To(Equal(payoutv1.FailurePayoutRejected))
		for range 3 {
			res, err := arch.Pass(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Kept[archive.MoneyOwed]).To(BeNumerically(">=", 1))
		}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(short), &payoutv1.Transfer{})).To(Succeed())
		_, ok, err := store.TransferLookup(ctx, short.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
	})

	// crashAt runs passes of arch with a crash injected at stage until the transfer's row is in
	// the archive and the pass stopped there.
	crashAt := func(stage controllers.ArchiveStage, t *payoutv1.Transfer) {
		GinkgoHelper()
		crash := errors.New("injected crash at " + string(stage))
		arch.Fault = func(at controllers.ArchiveStage) error {
			if at == stage {
				return crash
			}
			return nil
		}
		DeferCleanup(func() { arch.Fault = nil })
		Eventually(func() bool {
			_, err := arch.Pass(ctx)
			Expect(err).To(Or(BeNil(), MatchError(crash)))
			_, ok, lerr := store.TransferLookup(ctx, t.Name)
			Expect(lerr).NotTo(HaveOccurred())
			return ok && errors.Is(err, crash)
		}).Should(BeTrue())
	}
	// restarted is a fresh archiver, as a new leader (or the restarted process) starts it.
	restarted := func() *controllers.Archiver {
		return &controllers.Archiver{Client: srv.cfg.Client, Store: store, Clock: arch.Clock, Config: arch.Config,
			TransferJSON: TransferLookupJSON, RecipientJSON: RecipientLookupJSON, Log: ctrl.Log.WithName("archiver-restarted")}
	}
	// finishByRestart runs passes of a fresh archiver until t has left the API server.
	finishByRestart := func(t *payoutv1.Transfer) {
		GinkgoHelper()
		fresh := restarted()
		Eventually(func() bool {
			_, err := fresh.Pass(ctx)
			Expect(err).NotTo(HaveOccurred())
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(t), &payoutv1.Transfer{}))
		}).Should(BeTrue())
	}

	// dueCompleted finishes a v1 transfer of p, waits until it is due (its recipient deleted) and
	// the facade's cache has its last version, and answers its lookup then and the archive's
	// counts.
	dueCompleted := func(p *payee) (*payoutv1.Transfer, obj, *response, archive.Counts) {
		GinkgoHelper()
		t, b := finishedV1(p, "25000000", payoutv1.PhaseCompleted)
		Eventually(func() any { return p.c.get(rpath(p.rid)).json()["active"] }).Should(BeFalse())
		Eventually(func() string {
			got := &payoutv1.Transfer{}
			_ = srv.cfg.Client.Get(ctx, client.ObjectKeyFromObject(t), got)
			return got.ResourceVersion
		}).Should(Equal(t.ResourceVersion))
		before := lookup(p, t.Name)
		Expect(before.status).To(Equal(200))
		countBefore, err := store.Count(ctx)
		Expect(err).NotTo(HaveOccurred())
		return t, b, before, countBefore
	}

	It("keeps a transfer live until the sweeper stored the Sweep of its deposit (issue 27)", func() {
		p := newPayee()
		t, _, _, _ := dueCompleted(p)
		deposits := &payoutv1.DepositList{}
		Expect(env.Client.List(ctx, deposits, client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: t.Name})).To(Succeed())
		Expect(deposits.Items).To(HaveLen(1))
		// the archiver of an installation that sweeps base
		sweeping := restarted()
		sweeping.Swept = map[payoutv1.Network]bool{payoutv1.NetworkBase: true}
		for range 3 {
			res, err := sweeping.Pass(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Kept[archive.SweepUnrecorded]).To(BeNumerically(">=", 1))
		}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), &payoutv1.Transfer{})).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&deposits.Items[0]), &payoutv1.Deposit{})).To(Succeed(), "the sweeper still finds the deposit")
		_, ok, err := store.TransferLookup(ctx, t.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())

		// the sweeper's intent, as it stores it (internal/sweeper): then the transfer goes
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
		Expect(env.Client.Create(ctx, treasury.Intent(t, &deposits.Items[0], payoutv1.SweepPaidOut))).To(Succeed())
		Eventually(func() bool {
			_, err := sweeping.Pass(ctx)
			Expect(err).NotTo(HaveOccurred())
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(t), &payoutv1.Transfer{}))
		}).Should(BeTrue())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&deposits.Items[0]), &payoutv1.Sweep{})).To(Succeed(), "the Sweep outlives its Deposit")
	})

	It("resumes an archival interrupted between the insert and the deletes, without duplicates", func() {
		p := newPayee()
		t, b, before, countBefore := dueCompleted(p)
		crashAt(controllers.FaultInserted, t)
		// inserted, nothing deleted: the transfer, its deposit and its claim are all live
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), &payoutv1.Transfer{})).To(Succeed())
		claim := objKey(payoutv1.ClaimName(payoutv1.ClaimCustomerUUID, strings.ToLower(b["customer_uuid"].(string))))
		Expect(env.Client.Get(ctx, claim, &payoutv1.Claim{})).To(Succeed())
		deposits := &payoutv1.DepositList{}
		Expect(env.Client.List(ctx, deposits, client.InNamespace(t.Namespace), client.MatchingLabels{payoutv1.DepositTransferLabel: t.Name})).To(Succeed())
		Expect(deposits.Items).To(HaveLen(1))
		Expect(lookup(p, t.Name).status).To(Equal(200))

		finishByRestart(t)
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, claim, &payoutv1.Claim{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(&deposits.Items[0]), &payoutv1.Deposit{}))).To(BeTrue())
		countAfter, err := store.Count(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(countAfter.Transfers-countBefore.Transfers).To(Equal(int64(1)), "one row for the transfer, inserted twice")
		Expect(countAfter.Deposits-countBefore.Deposits).To(Equal(int64(1)), "one row for its deposit")
		Eventually(func() string { return string(lookup(p, t.Name).body) }).Should(Equal(string(before.body)))
	})

	It("resumes an archival interrupted after the claims went and before the transfer did: the keys stay taken meanwhile", func() {
		p := newPayee()
		t, b, before, countBefore := dueCompleted(p)

		crashAt(controllers.FaultChildrenDeleted, t)
		// the transfer is live and answers as before; its claim and deposit are gone, and only
		// the archive holds its customer_uuid and its deposit's hash now
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(t), &payoutv1.Transfer{})).To(Succeed())
		uuid := strings.ToLower(b["customer_uuid"].(string))
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, objKey(payoutv1.ClaimName(payoutv1.ClaimCustomerUUID, uuid)), &payoutv1.Claim{}))).To(BeTrue())
		Expect(string(lookup(p, t.Name).body)).To(Equal(string(before.body)))
		q := newPayee()
		reuse := v1Body(q.quote("EUR", "25.00"), "25.00", q.rid)
		reuse["customer_uuid"] = uuid
		Expect(errorText(q.c.on(archived).post("/api/payouts/transfer", reuse), 409)).To(ContainSubstring("customer_uuid"),
			"the uuid of a half-archived transfer is not free")
		r := q.c.on(archived).post("/api/payouts/transfer/v2", v1Body(q.quote("EUR", "21.00"), "21.00", q.rid))
		Expect(r.status).To(Equal(200), "%s", r)
		Expect(errorText(q.c.on(archived).post("/api/payouts/transfer/v2/confirm-transfer",
			obj{"transfer_id": r.json()["transfer_id"].(string), "tx_hash": t.Status.Deposit.TxHash}), 409)).To(ContainSubstring("already linked"),
			"nor is its deposit's hash")

		finishByRestart(t)
		countAfter, err := store.Count(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(countAfter.Transfers - countBefore.Transfers).To(Equal(int64(1)))
		Expect(countAfter.Deposits-countBefore.Deposits).To(Equal(int64(1)), "the deposit's row stays though the second insert no longer saw it")
		Eventually(func() string { return string(lookup(p, t.Name).body) }).Should(Equal(string(before.body)))
	})

	It("fails creation and confirmation closed with 503 while the archive is down; live lookups still work", func() {
		p := newPayee()
		live := p.c.on(archived).post("/api/payouts/transfer", v1Body(p.quote("EUR", "25.00"), "25.00", p.rid))
		Expect(live.status).To(Equal(200))
		liveID := live.json()["transfer"].(map[string]any)["id"].(string)
		r := p.c.on(archived).post("/api/payouts/transfer/v2", v1Body(p.quote("EUR", "21.00"), "21.00", p.rid))
		Expect(r.status).To(Equal(200))
		v2 := r.json()["transfer_id"].(string)

		Expect(pg.Stop()).To(Succeed())
		down := true
		DeferCleanup(func() {
			if down {
				Expect(pg.Start()).To(Succeed())
			}
		})
		b := v1Body(p.quote("EUR", "25.00"), "25.00", p.rid)
		Expect(errorText(p.c.on(archived).post("/api/payouts/transfer", b), 503)).To(ContainSubstring("archive"))
		Expect(errorText(p.c.on(archived).post("/api/payouts/transfer/v2/confirm-transfer", obj{"transfer_id": v2, "tx_hash": randomHash()}), 503)).To(ContainSubstring("archive"))
		Expect(storedTransfer(p.account, v2).Spec.TxHash).To(BeEmpty(), "nothing recorded")
		claim := objKey(payoutv1.ClaimName(payoutv1.ClaimCustomerUUID, strings.ToLower(b["customer_uuid"].(string))))
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, claim, &payoutv1.Claim{}))).To(BeTrue(), "the claim is given back")
		Expect(lookup(p, liveID).status).To(Equal(200), "a live transfer is read from the cache")
		Expect(errorText(lookup(p, done.Name), 503)).To(ContainSubstring("archive"), "an archived one cannot be answered")

		Expect(pg.Start()).To(Succeed())
		down = false
		Eventually(func() int { return lookup(p, done.Name).status }).Should(Equal(200))
		Expect(p.c.on(archived).post("/api/payouts/transfer", b).status).To(Equal(200), "the same request goes through once the archive is back")
	})
})

func randomHash() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "0x" + hex.EncodeToString(b[:])
}
