package controllers

import (
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/test/testgen"
)

var _ = Describe("PayoutAccountReconciler", func() {
	It("gives the account its own namespace, owned by it", func() {
		acct := testgen.Account("ctrl-acme")
		Expect(env.Client.Create(ctx, acct)).To(Succeed())
		r := &PayoutAccountReconciler{Client: env.Client}
		_, err := r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())

		ns := &corev1.Namespace{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "payout-ctrl-acme"}, ns)).To(Succeed())
		Expect(ns.Labels).To(HaveKeyWithValue(tenancy.AccountLabel, "ctrl-acme"))
		Expect(ns.OwnerReferences).To(HaveLen(1))
		Expect(ns.OwnerReferences[0].UID).To(Equal(acct.UID))
		status, reason := readyOf(acct)
		Expect(status).To(Equal(metav1.ConditionTrue))
		Expect(reason).To(Equal(AccountNamespaceReadyReason))
		Expect(acct.Status.Namespace).To(Equal("payout-ctrl-acme"))

		// a second pass changes nothing
		rv := acct.ResourceVersion
		_, err = r.Reconcile(ctx, request(acct))
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
		Expect(acct.ResourceVersion).To(Equal(rv))
	})
})

var _ = Describe("APIKey controller", func() {
	It("reports revoked keys and keys of missing accounts", func() {
		r := &statusReconciler[payoutv1.APIKey, *payoutv1.APIKey]{Client: env.Client}
		r.observe = apiKeyObserver(env.Client, fakeClock)
		Expect(env.Client.Create(ctx, testgen.Account("ctrl-keys"))).To(Succeed())
		active := testgen.APIKey("aaaaaaaaaaaaaaa1", "ctrl-keys")
		revoked := testgen.APIKey("aaaaaaaaaaaaaaa2", "ctrl-keys", func(k *payoutv1.APIKey) { k.Spec.Revoked = true })
		orphan := testgen.APIKey("aaaaaaaaaaaaaaa3", "ctrl-nobody")
		for _, k := range []*payoutv1.APIKey{active, revoked, orphan} {
			Expect(env.Client.Create(ctx, k)).To(Succeed())
			_, err := r.Reconcile(ctx, request(k))
			Expect(err).NotTo(HaveOccurred())
		}
		status, reason := readyOf(active)
		Expect(status).To(Equal(metav1.ConditionTrue))
		Expect(reason).To(Equal(APIKeyActiveReason))
		_, reason = readyOf(revoked)
		Expect(reason).To(Equal(APIKeyRevokedReason))
		Expect(revoked.Status.RevokedAt.Time).To(BeTemporally("==", fakeClock.Now()))
		_, reason = readyOf(orphan)
		Expect(reason).To(Equal(APIKeyAccountMissingReason))
	})
})

var _ = Describe("APIKey controller on keys of a release before accountUID", func() {
	// reconcile runs the passes a key's events would: the spec's write, then the status's
	reconcile := func(k *payoutv1.APIKey) {
		GinkgoHelper()
		r := &apiKeyReconciler{Client: env.Client,
			status: &statusReconciler[payoutv1.APIKey, *payoutv1.APIKey]{Client: env.Client, observe: apiKeyObserver(env.Client, fakeClock)}}
		for range 2 {
			_, err := r.Reconcile(ctx, request(k))
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(k), k)).To(Succeed())
	}
	// madeAfter creates an account named name whose creationTimestamp (seconds) is after the
	// key's, as an account made again after a key of its first would be
	madeAfter := func(name string, k *payoutv1.APIKey) *payoutv1.PayoutAccount {
		GinkgoHelper()
		var acct *payoutv1.PayoutAccount
		Eventually(func() bool {
			acct = testgen.Account(name)
			Expect(env.Client.Create(ctx, acct)).To(Succeed())
			if acct.CreationTimestamp.After(k.CreationTimestamp.Time) {
				return true
			}
			Expect(env.Client.Delete(ctx, acct)).To(Succeed()) // no finalizer: it goes at once
			return false
		}).WithTimeout(5 * time.Second).WithPolling(200 * time.Millisecond).Should(BeTrue())
		return acct
	}

	It("stamps one made after its account with the account's UID and an owner reference", func() {
		acct := testgen.Account("ctrl-upgraded")
		Expect(env.Client.Create(ctx, acct)).To(Succeed())
		k := testgen.APIKey("bbbbbbbbbbbbbbb1", acct.Name)
		Expect(env.Client.Create(ctx, k)).To(Succeed())
		reconcile(k)
		Expect(k.Spec.AccountUID).To(Equal(string(acct.UID)))
		Expect(k.OwnerReferences).To(ConsistOf(HaveField("UID", acct.UID)))
		Expect(k.Spec.Revoked).To(BeFalse())
		status, reason := readyOf(k)
		Expect(status).To(Equal(metav1.ConditionTrue))
		Expect(reason).To(Equal(APIKeyActiveReason))

		// set once: neither changed nor removed
		other := *k.DeepCopy()
		other.Spec.AccountUID = "5d2a4c1e-0000-4000-8000-000000000000"
		Expect(env.Client.Update(ctx, &other)).To(MatchError(ContainSubstring("accountUID is immutable once set")))
		other.Spec.AccountUID = ""
		Expect(env.Client.Update(ctx, &other)).To(MatchError(ContainSubstring("accountUID is immutable once set")))
	})

	It("revokes one made before the account of its name, which is another account than its own", func() {
		k := testgen.APIKey("bbbbbbbbbbbbbbb2", "ctrl-remade")
		Expect(env.Client.Create(ctx, k)).To(Succeed())
		reconcile(k) // its account is gone: nothing to bind it to yet
		Expect(k.Spec.Revoked).To(BeFalse())
		_, reason := readyOf(k)
		Expect(reason).To(Equal(APIKeyAccountMissingReason))

		madeAfter("ctrl-remade", k)
		reconcile(k)
		Expect(k.Spec.Revoked).To(BeTrue(), "an older release, which reads no accountUID, refuses it too")
		Expect(k.Spec.AccountUID).To(BeEmpty())
		Expect(k.OwnerReferences).To(BeEmpty())
		status, reason := readyOf(k)
		Expect(status).To(Equal(metav1.ConditionFalse))
		Expect(reason).To(Equal(APIKeyAccountReplacedReason))
	})

	It("leaves a key stamped at issue to the facade once its account is made again, and says so", func() {
		first := testgen.Account("ctrl-remade-stamped")
		Expect(env.Client.Create(ctx, first)).To(Succeed())
		k := testgen.APIKey("bbbbbbbbbbbbbbb3", first.Name, func(k *payoutv1.APIKey) { k.BindTo(first) })
		Expect(env.Client.Create(ctx, k)).To(Succeed())
		Expect(env.Client.Delete(ctx, first)).To(Succeed())
		second := testgen.Account(first.Name)
		Expect(env.Client.Create(ctx, second)).To(Succeed())
		reconcile(k)
		Expect(k.Spec.AccountUID).To(Equal(string(first.UID)))
		Expect(k.Spec.Revoked).To(BeFalse())
		_, reason := readyOf(k)
		Expect(reason).To(Equal(APIKeyAccountReplacedReason))
	})
})

var _ = Describe("QuoteReconciler", func() {
	It("deletes quotes once expired for the retention, and writes nothing before", func() {
		ns := namespace()
		r := &QuoteReconciler{Client: env.Client, Clock: fakeClock, Retention: 10 * time.Minute}
		open := testgen.Quote(ns, "11111111-0000-4000-8000-000000000001", func(q *payoutv1.Quote) {
			q.Spec.ExpiresAt = metav1.NewTime(fakeClock.Now().Add(3 * time.Minute))
		})
		Expect(env.Client.Create(ctx, open)).To(Succeed())
		created := open.ResourceVersion
		res, err := r.Reconcile(ctx, request(open))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(Equal(13 * time.Minute))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(open), open)).To(Succeed())
		Expect(open.ResourceVersion).To(Equal(created), "no write for an open quote")

		fakeClock.Step(3 * time.Minute)
		res, err = r.Reconcile(ctx, request(open))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(Equal(10 * time.Minute))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(open), open)).To(Succeed())
		Expect(open.ResourceVersion).To(Equal(created), "no write for an expired quote")

		fakeClock.Step(10 * time.Minute)
		_, err = r.Reconcile(ctx, request(open))
		Expect(err).NotTo(HaveOccurred())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(open), open))).To(BeTrue())
	})
})

var _ = Describe("ClaimReconciler", func() {
	It("keeps claims whose holder exists, without a write, and releases the others after the grace period", func() {
		ns := namespace()
		r := &ClaimReconciler{Client: env.Client, APIReader: env.Client, Clock: fakeClock, Grace: 2 * time.Minute}
		t := testgen.Transfer(ns, "eeeeeeeeeeeeeeeeeeeeee01")
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		bound := testgen.Claim(payoutv1.ClaimCustomerUUID, t.Spec.CustomerUUID, payoutv1.ObjectRef{Namespace: ns, Name: t.Name})
		orphan := testgen.Claim(payoutv1.ClaimCustomerUUID, "0d4b3c2a-1111-4222-8333-444455556666", payoutv1.ObjectRef{Namespace: ns, Name: "eeeeeeeeeeeeeeeeeeeeee02"})
		for _, c := range []*payoutv1.Claim{bound, orphan} {
			Expect(env.Client.Create(ctx, c)).To(Succeed())
		}
		fakeClock.SetTime(bound.CreationTimestamp.Time)
		rv := bound.ResourceVersion
		res, err := r.Reconcile(ctx, request(bound))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(BeNumerically(">", time.Minute), "a young claim is looked at once its grace is over")
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bound), bound)).To(Succeed())
		Expect(bound.ResourceVersion).To(Equal(rv))

		res, err = r.Reconcile(ctx, request(orphan))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(BeNumerically(">", time.Minute))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(orphan), orphan)).To(Succeed())

		fakeClock.Step(2 * time.Minute)
		_, err = r.Reconcile(ctx, request(orphan))
		Expect(err).NotTo(HaveOccurred())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(orphan), orphan))).To(BeTrue())
		_, err = r.Reconcile(ctx, request(bound))
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bound), bound)).To(Succeed(), "a bound claim is never released")
	})

	It("keeps a wallet binding while its account exists", func() {
		r := &ClaimReconciler{Client: env.Client, APIReader: env.Client, Clock: fakeClock, Grace: time.Minute}
		acct := testgen.Account("binder-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10))
		Expect(env.Client.Create(ctx, acct)).To(Succeed())
		wallet := "0x00000000000000000000000000000000000b1d00"
		bound := testgen.Claim(payoutv1.ClaimWalletBinding, wallet, payoutv1.ObjectRef{Namespace: payoutv1.AccountNamespace(acct.Name), Name: acct.Name})
		gone := testgen.Claim(payoutv1.ClaimWalletBinding, "0x00000000000000000000000000000000000b1d01", payoutv1.ObjectRef{Namespace: "payout-nobody", Name: "nobody"})
		for _, c := range []*payoutv1.Claim{bound, gone} {
			c.Finalizers = []string{payoutv1.ClaimBindingFinalizer}
			Expect(env.Client.Create(ctx, c)).To(Succeed())
		}
		// deleted by hand, or by a release that does not know bindings (docs/operations/upgrade.md)
		Expect(env.Client.Delete(ctx, bound)).To(Succeed())
		fakeClock.SetTime(bound.CreationTimestamp.Add(2 * time.Minute))
		for _, c := range []*payoutv1.Claim{bound, gone} {
			_, err := r.Reconcile(ctx, request(c))
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bound), bound)).To(Succeed(), "an account's binding is kept, even once deleted")
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(gone), gone))).To(BeTrue(), "a binding of no account is released")
	})
})

var _ = Describe("ClaimReconciler on a release request (issue 25 item 13)", func() {
	// requestRelease marks c as the facade does: through the status subresource, its only write
	requestRelease := func(c *payoutv1.Claim) {
		marked := c.DeepCopy()
		marked.Status.ReleaseRequested = true
		Expect(env.Client.Status().Patch(ctx, marked, client.MergeFrom(c))).To(Succeed())
	}
	released := func(c *payoutv1.Claim) bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(c), &payoutv1.Claim{}))
	}
	reconcileAll := func(r *ClaimReconciler, claims []*payoutv1.Claim) {
		for _, c := range claims {
			_, err := r.Reconcile(ctx, request(c))
			Expect(err).NotTo(HaveOccurred())
		}
	}

	It("releases at once a claim whose holder does not hold the key, and keeps one whose holder does", func() {
		ns := namespace()
		r := &ClaimReconciler{Client: env.Client, APIReader: env.Client, Clock: fakeClock, Grace: 2 * time.Minute}
		hash := "0x" + strings.Repeat("ab", 32)
		live := testgen.Transfer(ns, "eeeeeeeeeeeeeeeeeeeeee11", testgen.V2(), func(t *payoutv1.Transfer) {
			t.Spec.TxHash, t.Spec.CustomerUUID = hash, "0d4b3c2a-1111-4222-8333-444455556612"
		})
		Expect(env.Client.Create(ctx, live)).To(Succeed())
		holder := payoutv1.ObjectRef{Namespace: ns, Name: live.Name}
		held := testgen.Claim(payoutv1.ClaimTxHash, hash, holder)                                              // a compromised facade's request
		lost := testgen.Claim(payoutv1.ClaimTxHash, "0x"+strings.Repeat("cd", 32), holder)                     // another hash won the transfer
		usedQuote := testgen.Claim(payoutv1.ClaimCustomerUUID, "0d4b3c2a-1111-4222-8333-444455556611", holder) // the quote was used by another
		ownUUID := testgen.Claim(payoutv1.ClaimCustomerUUID, live.Spec.CustomerUUID, holder)
		never := testgen.Claim(payoutv1.ClaimRecipientID, "1000000000011", payoutv1.ObjectRef{Namespace: ns, Name: "1000000000011"})
		claims := []*payoutv1.Claim{held, lost, usedQuote, ownUUID, never}
		for _, c := range claims {
			Expect(env.Client.Create(ctx, c)).To(Succeed())
			requestRelease(c)
		}
		fakeClock.SetTime(held.CreationTimestamp.Time) // all young: the request is not left to the grace
		reconcileAll(r, claims)
		Expect(released(held)).To(BeFalse(), "the hash of a live transfer that carries it stays claimed")
		Expect(released(ownUUID)).To(BeFalse(), "the customer_uuid of a transfer that carries it stays claimed")
		Expect(released(lost)).To(BeTrue(), "a hash its holder does not carry is released")
		Expect(released(usedQuote)).To(BeTrue(), "a customer_uuid its holder does not carry is released")
		Expect(released(never)).To(BeTrue(), "the id of a recipient never made is released")
	})

	It("ignores a release request on a deposit claim or a wallet binding, which only the controllers release", func() {
		ns := namespace()
		r := &ClaimReconciler{Client: env.Client, APIReader: env.Client, Clock: fakeClock, Grace: 2 * time.Minute}
		t := testgen.Transfer(ns, "eeeeeeeeeeeeeeeeeeeeee12", testgen.V2())
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		acct := testgen.Account("released-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10))
		Expect(env.Client.Create(ctx, acct)).To(Succeed())
		// a deposit log that pays its transfer, another whose transfer is gone, and a binding
		deposit := testgen.Claim(payoutv1.ClaimDeposit, "base/0x"+strings.Repeat("ef", 32)+"/0", payoutv1.ObjectRef{Namespace: ns, Name: t.Name})
		orphanDeposit := testgen.Claim(payoutv1.ClaimDeposit, "base/0x"+strings.Repeat("ef", 32)+"/1", payoutv1.ObjectRef{Namespace: ns, Name: "eeeeeeeeeeeeeeeeeeeeee13"})
		binding := testgen.Claim(payoutv1.ClaimWalletBinding, "0x00000000000000000000000000000000000b1d11",
			payoutv1.ObjectRef{Namespace: payoutv1.AccountNamespace(acct.Name), Name: acct.Name})
		binding.Finalizers = []string{payoutv1.ClaimBindingFinalizer}
		claims := []*payoutv1.Claim{deposit, orphanDeposit, binding}
		for _, c := range claims {
			Expect(env.Client.Create(ctx, c)).To(Succeed())
			requestRelease(c)
		}
		// the clock starts at the last claim's creation (seconds: a loaded machine may have
		// crossed one between the creates), so the step below takes every claim past the grace
		last := deposit.CreationTimestamp.Time
		for _, c := range claims {
			if c.CreationTimestamp.After(last) {
				last = c.CreationTimestamp.Time
			}
		}
		fakeClock.SetTime(last)
		reconcileAll(r, claims)
		for _, c := range claims {
			Expect(released(c)).To(BeFalse(), "%s released on the facade's request", c.Spec.Kind)
		}
		fakeClock.Step(2 * time.Minute)
		reconcileAll(r, claims)
		Expect(released(deposit)).To(BeFalse(), "a deposit claim whose transfer exists is kept")
		Expect(released(binding)).To(BeFalse(), "a binding whose account exists is kept")
		Expect(released(orphanDeposit)).To(BeTrue(), "past the grace a missing holder releases as before the request")
	})
})

var _ = Describe("simple status controllers", func() {
	It("derive wallets' verification", func() {
		ns := namespace()
		w := testgen.Wallet(ns, "0x8ba1f109551bD432803012645Ac136ddd64DBA72")
		misnamed := testgen.Wallet(ns, "0x0000000000000000000000000000000000000001")
		misnamed.Name = "w-wrong"
		wr := &statusReconciler[payoutv1.Wallet, *payoutv1.Wallet]{Client: env.Client, observe: observeWallet}
		for _, x := range []*payoutv1.Wallet{w, misnamed} {
			Expect(env.Client.Create(ctx, x)).To(Succeed())
			_, err := wr.Reconcile(ctx, request(x))
			Expect(err).NotTo(HaveOccurred())
		}
		status, reason := readyOf(w)
		Expect(status).To(Equal(metav1.ConditionTrue))
		Expect(reason).To(Equal(WalletVerifiedReason))
		_, reason = readyOf(misnamed)
		Expect(reason).To(Equal(WalletMisnamedReason))

	})
})

var _ = Describe("DepositOptionReconciler", func() {
	It("makes an option available while its network's watcher is in sync with a fresh heartbeat", func() {
		now := fakeClock.Now()
		r := &DepositOptionReconciler{Client: env.Client, Clock: fakeClock, MaxHeartbeatAge: 30 * time.Second}
		Expect(EnsureDepositOptions(ctx, env.Client)).To(Succeed())
		Expect(EnsureDepositOptions(ctx, env.Client)).To(Succeed(), "ensuring twice is harmless")
		cursor := func(network payoutv1.Network, synced bool, heartbeatAge time.Duration, message string) {
			cc := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: string(network)}, Spec: payoutv1.ChainCursorSpec{Network: network}}
			Expect(env.Client.Create(ctx, cc)).To(Succeed())
			hb := metav1.NewTime(now.Add(-heartbeatAge))
			cc.Status = payoutv1.ChainCursorStatus{Synced: synced, HeartbeatAt: &hb, Message: message, Block: 10}
			Expect(env.Client.Status().Update(ctx, cc)).To(Succeed())
		}
		cursor(payoutv1.NetworkBase, true, 10*time.Second, "")
		cursor(payoutv1.NetworkEthereum, true, 31*time.Second, "")
		cursor(payoutv1.NetworkPolygon, false, time.Second, "eth_blockNumber: connection refused")
		want := map[string]string{
			"usdc-base":     payoutv1.DepositOptionAvailableReason,
			"usdc-ethereum": payoutv1.DepositOptionChainNotSyncedReason, // stale heartbeat
			"usdt-ethereum": payoutv1.DepositOptionChainNotSyncedReason,
			"usdc-polygon":  payoutv1.DepositOptionChainNotSyncedReason,  // not synced
			"usdc-solana":   payoutv1.DepositOptionNoChainEndpointReason, // no watcher
		}
		for name, wantReason := range want {
			o := &payoutv1.DepositOption{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, o)).To(Succeed())
			res, err := r.Reconcile(ctx, request(o))
			Expect(err).NotTo(HaveOccurred())
			_, reason := readyOf(o)
			Expect(reason).To(Equal(wantReason), name)
			Expect(o.Status.Available).To(Equal(wantReason == payoutv1.DepositOptionAvailableReason), name)
			if name == "usdc-base" {
				// looked at again when the heartbeat would turn stale
				Expect(res.RequeueAfter).To(BeNumerically("~", 21*time.Second, time.Second))
			}
		}
		o := &payoutv1.DepositOption{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "usdc-polygon"}, o)).To(Succeed())
		Expect(meta.FindStatusCondition(o.Status.Conditions, "Ready").Message).To(ContainSubstring("connection refused"))

		// the heartbeat ages past the limit: unavailable
		fakeClock.Step(21 * time.Second)
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "usdc-base"}, o)).To(Succeed())
		_, err := r.Reconcile(ctx, request(o))
		Expect(err).NotTo(HaveOccurred())
		_, reason := readyOf(o)
		Expect(reason).To(Equal(payoutv1.DepositOptionChainNotSyncedReason))
		Expect(o.Status.Available).To(BeFalse())

		// the operator's switch wins over a synced watcher
		fakeClock.SetTime(now)
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "usdc-base"}, o)).To(Succeed())
		o.Spec.Enabled = false
		Expect(env.Client.Update(ctx, o)).To(Succeed())
		_, err = r.Reconcile(ctx, request(o))
		Expect(err).NotTo(HaveOccurred())
		_, reason = readyOf(o)
		Expect(reason).To(Equal(payoutv1.DepositOptionDisabledReason))
		Expect(o.Status.Available).To(BeFalse())

		// a cursor maps to the options of its network
		reqs := r.optionsOfCursor(ctx, &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: "ethereum"}})
		names := []string{}
		for _, q := range reqs {
			names = append(names, q.Name)
		}
		Expect(names).To(ConsistOf("usdc-ethereum", "usdt-ethereum"))
	})
})
