package v1alpha1_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

var nsCounter int

func freshNamespace() string {
	nsCounter++
	name := fmt.Sprintf("payout-schema-%d", nsCounter)
	Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// expectInvalid asserts the API server refused obj with a message containing want.
func expectInvalid(err error, want string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	Expect(err.Error()).To(ContainSubstring(want))
}

var _ = Describe("every kind", func() {
	It("is created and read back unchanged", func() {
		ns := freshNamespace()
		objs := []client.Object{
			testgen.Account("roundtrip"),
			testgen.APIKey("0123456789abcdef", "roundtrip"),
			testgen.Recipient(ns, 123456789),
			testgen.Quote(ns, "5b0c3f9e-2f43-4a8c-9d4e-0d5f6a7b8c9d"),
			testgen.Transfer(ns, "0123456789abcdef01234567"),
			testgen.Claim(payoutv1.ClaimCustomerUUID, "7D0E1C55-8D0F-4D4E-9F59-3C8A5B1F2E3D", payoutv1.ObjectRef{Namespace: ns, Name: "0123456789abcdef01234567"}),
			testgen.Wallet(ns, "0x8ba1f109551bD432803012645Ac136ddd64DBA72"),
			&payoutv1.BlockedWallet{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.WalletName("0xdead000000000000000000000000000000000000")},
				Spec: payoutv1.BlockedWalletSpec{Address: "0xdead000000000000000000000000000000000000", Reason: "test"}},
			&payoutv1.DepositOption{ObjectMeta: metav1.ObjectMeta{Name: "usdc-base"},
				Spec: payoutv1.DepositOptionSpec{Token: "usdc", Network: "base", Enabled: true}},
		}
		for _, obj := range objs {
			want := obj.DeepCopyObject().(client.Object)
			Expect(env.Client.Create(ctx, obj)).To(Succeed(), "%T", obj)
			got := want.DeepCopyObject().(client.Object)
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
			Expect(equality.Semantic.DeepEqual(specOf(got), specOf(want))).To(BeTrue(),
				"%T spec changed on the way through the API server:\n%v\n%v", obj, specOf(got), specOf(want))
		}
	})
})

// specOf returns the spec of any kind of the group, for comparison.
func specOf(obj client.Object) any {
	switch o := obj.(type) {
	case *payoutv1.PayoutAccount:
		return o.Spec
	case *payoutv1.APIKey:
		return o.Spec
	case *payoutv1.Recipient:
		return o.Spec
	case *payoutv1.Quote:
		return o.Spec
	case *payoutv1.Transfer:
		return o.Spec
	case *payoutv1.Claim:
		return o.Spec
	case *payoutv1.Wallet:
		return o.Spec
	case *payoutv1.BlockedWallet:
		return o.Spec
	case *payoutv1.DepositOption:
		return o.Spec
	}
	Fail(fmt.Sprintf("unknown kind %T", obj))
	return nil
}

var _ = Describe("CEL and schema rules", func() {
	var ns string
	BeforeEach(func() { ns = freshNamespace() })

	It("refuses a v2 transfer on a token other than USDC", func() {
		t := testgen.Transfer(ns, "aaaaaaaaaaaaaaaaaaaaaaa1", testgen.V2(), func(t *payoutv1.Transfer) { t.Spec.SourceToken = payoutv1.TokenUSDT })
		expectInvalid(env.Client.Create(ctx, t), "v2 transfers take USDC only")
	})

	It("refuses a v2 transfer on tron and a v1 transfer from a non-EVM wallet", func() {
		t := testgen.Transfer(ns, "aaaaaaaaaaaaaaaaaaaaaaa2", testgen.V2(), func(t *payoutv1.Transfer) { t.Spec.SourceNetwork = payoutv1.NetworkTron })
		expectInvalid(env.Client.Create(ctx, t), "v2 transfers are not available on tron")
		t = testgen.Transfer(ns, "aaaaaaaaaaaaaaaaaaaaaaa3", func(t *payoutv1.Transfer) {
			t.Spec.WalletAddress = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
		})
		expectInvalid(env.Client.Create(ctx, t), "v1 wallet addresses are EVM addresses")
	})

	It("refuses changes to immutable fields", func() {
		t := testgen.Transfer(ns, "aaaaaaaaaaaaaaaaaaaaaaa4")
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		t.Spec.Amount = "26.00"
		expectInvalid(env.Client.Update(ctx, t), "amount is immutable")

		r := testgen.Recipient(ns, 42)
		Expect(env.Client.Create(ctx, r)).To(Succeed())
		r.Spec.AccountHolderName = "Somebody Else"
		expectInvalid(env.Client.Update(ctx, r), "accountHolderName is immutable")

		// an optional field is immutable in its presence too
		r = testgen.Recipient(ns, 48, func(r *payoutv1.Recipient) { r.Spec.Country = "" })
		Expect(env.Client.Create(ctx, r)).To(Succeed())
		r.Spec.Country = "FR"
		expectInvalid(env.Client.Update(ctx, r), "country is immutable")
		r = testgen.Recipient(ns, 49, func(r *payoutv1.Recipient) { r.Spec.Wallet = "0x8ba1f109551bd432803012645ac136ddd64dba72" })
		Expect(env.Client.Create(ctx, r)).To(Succeed())
		r.Spec.Wallet = ""
		expectInvalid(env.Client.Update(ctx, r), "wallet is immutable")
		// the one change allowed: retirement
		r.Spec.Wallet = "0x8ba1f109551bd432803012645ac136ddd64dba72"
		replacement := int64(50)
		r.Spec.Deactivated, r.Spec.ReplacedBy = true, &replacement
		Expect(env.Client.Update(ctx, r)).To(Succeed())

		q := testgen.Quote(ns, "11111111-2222-4333-8444-555555555555")
		Expect(env.Client.Create(ctx, q)).To(Succeed())
		q.Spec.TargetAmount = "99.99"
		expectInvalid(env.Client.Update(ctx, q), "a quote is immutable")
	})

	It("keeps a wallet's proof of control once written (issue 28)", func() {
		w := testgen.Wallet(ns, "0x1111111111111111111111111111111111111111")
		w.Spec.KYCVerified = false
		Expect(env.Client.Create(ctx, w)).To(Succeed())
		proof := &payoutv1.WalletProof{Message: "signed text", Signature: "0x" + strings.Repeat("ab", 65),
			Signer: "0x1111111111111111111111111111111111111111", ProvenAt: metav1.Now()}
		w.Spec.Proof = proof.DeepCopy()
		Expect(env.Client.Update(ctx, w)).To(Succeed())
		w.Spec.Proof.Message = "other text"
		expectInvalid(env.Client.Update(ctx, w), "proof of control is immutable")
		w.Spec.Proof = nil
		expectInvalid(env.Client.Update(ctx, w), "proof of control is immutable")
		// the rest of the record still changes: the KYC vendor's answer comes after the proof
		w.Spec.Proof, w.Spec.KYCVerified = proof.DeepCopy(), true
		Expect(env.Client.Update(ctx, w)).To(Succeed())
	})

	It("sets a v2 transaction hash once and never overwrites it", func() {
		t := testgen.Transfer(ns, "aaaaaaaaaaaaaaaaaaaaaaa5", testgen.V2())
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		t.Spec.TxHash = "0x" + strings.Repeat("ab", 32)
		Expect(env.Client.Update(ctx, t)).To(Succeed())
		t.Spec.TxHash = "0x" + strings.Repeat("cd", 32)
		expectInvalid(env.Client.Update(ctx, t), "txHash is set once")
		t.Spec.TxHash = "0x" + strings.Repeat("AB", 32)
		expectInvalid(env.Client.Update(ctx, t), "spec.txHash")
	})

	It("refuses a status write that drops a list item's field an older release does not know", func() {
		// what the previous release (hack/previous-release) writes back of this release's lists: a
		// merge patch replaces a list whole, and its types have no network and refund on a stray
		// deposit, no state and decidedAt on a notification (docs/operations/upgrade.md)
		t := testgen.Transfer(ns, "aaaaaaaaaaaaaaaaaaaaaaa9")
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		stray := func(tx string) payoutv1.StrayDeposit {
			return payoutv1.StrayDeposit{TxHash: "0x" + strings.Repeat(tx, 32), Token: payoutv1.TokenUSDC, Amount: "1", Reason: "from another wallet"}
		}
		first := stray("ab")
		first.Network = payoutv1.NetworkBase
		first.Refund = &payoutv1.StrayRefundFacts{Name: "r", Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, TxHash: "0x" + strings.Repeat("ef", 32), ConfirmedAt: testgen.Epoch}
		t.Status.StrayDeposits = []payoutv1.StrayDeposit{first}
		t.Status.Notifications = []payoutv1.NotificationRecord{{Kind: payoutv1.NotificationPayoutSent, State: payoutv1.NotificationPending, To: "a@example.com", DecidedAt: &testgen.Epoch}}
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())

		older := func(status string) error {
			return env.Client.Status().Patch(ctx, t.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"status":`+status+`}`)))
		}
		expectInvalid(older(`{"strayDeposits":[
			{"txHash":"0x`+strings.Repeat("ab", 32)+`","token":"usdc","amount":"1","reason":"from another wallet"},
			{"txHash":"0x`+strings.Repeat("cd", 32)+`","token":"usdc","amount":"2","reason":"from another wallet"}]}`),
			"a stray deposit, once listed, stays listed with its network and its refund")
		expectInvalid(older(`{"strayDeposits":null}`), "a stray deposit, once listed")
		expectInvalid(older(`{"notifications":[
			{"kind":"PayoutSent","to":"a@example.com"},{"kind":"Failed","to":"a@example.com","sentAt":"2026-01-01T00:00:00Z"}]}`),
			"a notification, once listed, stays listed with its state and decidedAt")

		// this release appends, keeping every field
		t.Status.StrayDeposits = append(t.Status.StrayDeposits, stray("cd"))
		t.Status.Notifications[0].State = payoutv1.NotificationSent
		t.Status.Notifications = append(t.Status.Notifications, payoutv1.NotificationRecord{Kind: payoutv1.NotificationFailed, State: payoutv1.NotificationPending, To: "a@example.com", DecidedAt: &testgen.Epoch})
		Expect(env.Client.Status().Update(ctx, t)).To(Succeed())
	})

	It("keeps one-way switches one-way", func() {
		k := testgen.APIKey("fedcba9876543210", "acme", func(k *payoutv1.APIKey) { k.Spec.Revoked = true })
		Expect(env.Client.Create(ctx, k)).To(Succeed())
		k.Spec.Revoked = false
		expectInvalid(env.Client.Update(ctx, k), "a revoked key cannot be reinstated")

		r := testgen.Recipient(ns, 43, func(r *payoutv1.Recipient) { r.Spec.Deactivated = true })
		Expect(env.Client.Create(ctx, r)).To(Succeed())
		r.Spec.Deactivated = false
		expectInvalid(env.Client.Update(ctx, r), "cannot be reactivated")

		// a recipient's deletion facts: each set once, never withdrawn nor changed, and only on a
		// deactivated recipient
		d := testgen.Recipient(ns, 44)
		Expect(env.Client.Create(ctx, d)).To(Succeed())
		d.Spec.Deletion = &payoutv1.RecipientDeletion{AfterTransfer: "aaaaaaaaaaaaaaaaaaaaaaa7"}
		expectInvalid(env.Client.Update(ctx, d), "a deleted recipient is deactivated")
		d.Spec.Deactivated = true
		Expect(env.Client.Update(ctx, d)).To(Succeed())
		at := metav1.NewMicroTime(testgen.Epoch.Time)
		d.Spec.Deletion.At = &at
		Expect(env.Client.Update(ctx, d)).To(Succeed(), "a deletion through the API after the automatic one")
		d.Spec.Deletion.AfterTransfer = "aaaaaaaaaaaaaaaaaaaaaaa8"
		expectInvalid(env.Client.Update(ctx, d), "deletion.afterTransfer is set once")
		d.Spec.Deletion.AfterTransfer = ""
		expectInvalid(env.Client.Update(ctx, d), "deletion.afterTransfer is set once")
		d.Spec.Deletion.AfterTransfer = "aaaaaaaaaaaaaaaaaaaaaaa7"
		later := metav1.NewMicroTime(testgen.Epoch.Add(time.Second))
		d.Spec.Deletion.At = &later
		expectInvalid(env.Client.Update(ctx, d), "deletion.at is set once")
		d.Spec.Deletion.At = nil
		expectInvalid(env.Client.Update(ctx, d), "deletion.at is set once")
		d.Spec.Deletion = nil
		expectInvalid(env.Client.Update(ctx, d), "is set once and cannot be withdrawn")

		t := testgen.Transfer(ns, "aaaaaaaaaaaaaaaaaaaaaaa6")
		Expect(env.Client.Create(ctx, t)).To(Succeed())
		t.Spec.Cancellation = &payoutv1.TransferCancellation{Reason: payoutv1.FailureRecipientDeleted, Message: "recipient deleted", RequestedAt: testgen.Epoch}
		Expect(env.Client.Update(ctx, t)).To(Succeed())
		t.Spec.Cancellation = nil
		expectInvalid(env.Client.Update(ctx, t), "a cancellation request is set once")
		t.Spec.Cancellation = &payoutv1.TransferCancellation{Reason: payoutv1.FailureRecipientDeleted, Message: "other", RequestedAt: testgen.Epoch}
		expectInvalid(env.Client.Update(ctx, t), "a cancellation request is set once")
	})

	It("refuses bad decimals", func() {
		for _, bad := range []payoutv1.USDAmount{"1.234", "abc", "-5", "1,5", "01.00", "1e3", "10000000"} {
			q := testgen.Quote(ns, "11111111-2222-4333-8444-666666666666", func(q *payoutv1.Quote) { q.Spec.SourceAmount = bad })
			expectInvalid(env.Client.Create(ctx, q), "spec.sourceAmount")
		}
		pct := payoutv1.Decimal("1.5.0")
		a := testgen.Account("bad-decimal", func(a *payoutv1.PayoutAccount) { a.Spec.ServiceFee.Percent = &pct })
		expectInvalid(env.Client.Create(ctx, a), "spec.serviceFee.percent")
		// a service fee of 100% or more cannot be priced (pricing.CheckServiceFeePercent)
		for i, bad := range []payoutv1.Decimal{"150", "100", "100.0", "100.000000000000000001", "999"} {
			pct = bad
			a := testgen.Account(fmt.Sprintf("big-fee-%d", i), func(a *payoutv1.PayoutAccount) { a.Spec.ServiceFee.Percent = &pct })
			expectInvalid(env.Client.Create(ctx, a), "percent must be below 100")
		}
		for i, ok := range []payoutv1.Decimal{"0", "1.5", "99.99", "99.999999999999999999"} {
			pct := ok
			a := testgen.Account(fmt.Sprintf("fee-%d", i), func(a *payoutv1.PayoutAccount) { a.Spec.ServiceFee.Percent = &pct })
			Expect(env.Client.Create(ctx, a)).To(Succeed(), "percent %s", ok)
		}
	})

	It("checks each account type's own details", func() {
		r := testgen.Recipient(ns, 44, func(r *payoutv1.Recipient) { r.Spec.Details.IBAN = "" })
		expectInvalid(env.Client.Create(ctx, r), "an iban recipient needs details.iban")
		r = testgen.Recipient(ns, 45, func(r *payoutv1.Recipient) {
			r.Spec.Type, r.Spec.Currency, r.Spec.Details = "email_recipient", "GBP", payoutv1.RecipientDetails{Email: "x@example.com"}
			r.Spec.Country = ""
		})
		expectInvalid(env.Client.Create(ctx, r), "an email_recipient is EUR only")
		r = testgen.Recipient(ns, 46, func(r *payoutv1.Recipient) {
			r.Spec.Type, r.Spec.Currency, r.Spec.Country = "aba", "USD", "US"
			r.Spec.Details = payoutv1.RecipientDetails{LegalType: "PRIVATE", ABARTN: "026009593", AccountNumber: "12345678",
				Address: &payoutv1.PostalAddress{Country: "USA"}}
		})
		expectInvalid(env.Client.Create(ctx, r), "spec.details.address.country")
		r = testgen.Recipient(ns, 47, func(r *payoutv1.Recipient) { r.Name = "48" })
		expectInvalid(env.Client.Create(ctx, r), "a recipient is named by its id")
	})

	It("checks account settings", func() {
		lo, hi := payoutv1.USDAmount("100"), payoutv1.USDAmount("10")
		a := testgen.Account("limits-inverted", func(a *payoutv1.PayoutAccount) { a.Spec.AmountLimits = payoutv1.AmountLimits{Min: &lo, Max: &hi} })
		expectInvalid(env.Client.Create(ctx, a), "min must not exceed max")
		a = testgen.Account("bad-cidr", func(a *payoutv1.PayoutAccount) { a.Spec.AllowedIPs = []string{"192.0.2.0/24", "not-a-cidr"} })
		expectInvalid(env.Client.Create(ctx, a), "allowedIPs entries must be CIDRs")
		a = testgen.Account(strings.Repeat("a", 51))
		expectInvalid(env.Client.Create(ctx, a), "at most 50 characters")

		// a create that leaves the switches out gets the local-run contract's defaults
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": payoutv1.GroupVersion.String(), "kind": "PayoutAccount",
			"metadata": map[string]any{"name": "defaults"},
			"spec":     map[string]any{"email": "d@example.com"},
		}}
		Expect(env.Client.Create(ctx, u)).To(Succeed())
		got := &payoutv1.PayoutAccount{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "defaults"}, got)).To(Succeed())
		Expect(got.Spec).To(Equal(payoutv1.PayoutAccountSpec{
			Email: "d@example.com", KYCRequired: false, V1Enabled: true, V2WalletScreening: true,
			V2FeeStructure: false, SmartWalletDeployed: true, Quotas: payoutv1.Quotas{}.Limits(),
		}))
	})

	It("takes a quote with a provider charge or a fixed fee unless it is a v2-offloader quote", func() {
		charge, fixed, zero := payoutv1.Decimal("3.00"), payoutv1.Decimal("2.50"), payoutv1.Decimal("0.00")
		// v2Offloader is omitted when false: the rule must not read it without has()
		q := testgen.Quote(ns, "11111111-2222-4333-8444-888888888881", func(q *payoutv1.Quote) {
			q.Spec.ProviderCharge, q.Spec.ServiceFeeFixed = &charge, &fixed
		})
		Expect(env.Client.Create(ctx, q)).To(Succeed())
		q = testgen.Quote(ns, "11111111-2222-4333-8444-888888888882", func(q *payoutv1.Quote) {
			q.Spec.V2Offloader, q.Spec.ServiceFeeFixed = true, &zero
		})
		Expect(env.Client.Create(ctx, q)).To(Succeed())
		q = testgen.Quote(ns, "11111111-2222-4333-8444-888888888883", func(q *payoutv1.Quote) {
			q.Spec.V2Offloader, q.Spec.ProviderCharge = true, &charge
		})
		expectInvalid(env.Client.Create(ctx, q), "v2-offloader quotes carry no provider charge and no fixed fee")
		q = testgen.Quote(ns, "11111111-2222-4333-8444-888888888884", func(q *payoutv1.Quote) {
			q.Spec.V2Offloader, q.Spec.ServiceFeeFixed = true, &fixed
		})
		expectInvalid(env.Client.Create(ctx, q), "v2-offloader quotes carry no provider charge and no fixed fee")
	})

	It("keeps the fee breakdown whole", func() {
		q := testgen.Quote(ns, "11111111-2222-4333-8444-777777777777", func(q *payoutv1.Quote) { q.Spec.FeeFxAmount = nil })
		expectInvalid(env.Client.Create(ctx, q), "the fee breakdown is present or absent as a whole")
	})

	It("gives a v1 transfer an expiry and a v2 transfer none", func() {
		t := testgen.Transfer(ns, "aaaaaaaaaaaaaaaaaaaaaaa9", func(t *payoutv1.Transfer) { t.Spec.ExpiresAt = nil })
		expectInvalid(env.Client.Create(ctx, t), "a v1 transfer has an expiry")
		t = testgen.Transfer(ns, "aaaaaaaaaaaaaaaaaaaaaaa9", testgen.V2())
		Expect(env.Client.Create(ctx, t)).To(Succeed())
	})
})
