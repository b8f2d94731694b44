package main_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The recovery object is written by payoutd's check (internal/recovery, tested end to end in
// cmd/payoutd's restore test); here it is stored as the check leaves it, and the plugin reads
// and switches it.
var _ = Describe("recover", Serial, func() {
	store := func(st payoutv1.RecoveryStatus) *payoutv1.Recovery {
		GinkgoHelper()
		rec := &payoutv1.Recovery{ObjectMeta: metav1.ObjectMeta{Name: payoutv1.RecoveryName}}
		Expect(k8s.Create(ctx, rec)).To(Succeed())
		DeferCleanup(func() {
			err := k8s.Delete(ctx, rec)
			Expect(err == nil || apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		})
		rec.Status = st
		Expect(k8s.Status().Update(ctx, rec)).To(Succeed())
		return rec
	}
	reload := func() *payoutv1.Recovery {
		GinkgoHelper()
		rec := &payoutv1.Recovery{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: payoutv1.RecoveryName}, rec)).To(Succeed())
		return rec
	}

	It("says so when payoutd has not checked yet", func() {
		fails("error: no recovery check yet: payoutd's controllers write it when they start (recovery "+payoutv1.RecoveryName+")\n", "recover")
	})

	It("shows a check that requires an operator, what to redo, and resumes that check only", func() {
		now := metav1.Now()
		store(payoutv1.RecoveryStatus{State: payoutv1.RecoveryRequired, CheckID: "c-42", CheckedAt: &now, NewestRecord: &now,
			Findings: []payoutv1.RecoveryFinding{{Kind: "LostTransfer", Subject: "0123456789abcdef01234567", Message: "the provider pays it; no transfer holds it"}},
			Redo:     []string{"revoke again the API keys revoked since then (kubectl payout apikey revoke)"}})

		out := succeeds("recover")
		Expect(out).To(MatchRegexp(`State:\s+Required\n`))
		Expect(out).To(MatchRegexp(`Check:\s+c-42\n`))
		Expect(out).To(MatchRegexp(`Money:\s+waits: money waits for an operator: recovery check c-42`))
		Expect(out).To(MatchRegexp(`LostTransfer\s+0123456789abcdef01234567\s+the provider pays it; no transfer holds it`))
		Expect(out).To(ContainSubstring("  - revoke again the API keys revoked since then (kubectl payout apikey revoke)\n"))

		r := kubectlPayout("recover", "--pause", "--resume")
		Expect(r.Code).NotTo(BeZero())
		Expect(r.Stderr).To(ContainSubstring("--pause and --resume exclude each other"))

		Expect(succeeds("recover", "--resume")).To(Equal("Resumed after check c-42: money moves\n"))
		Expect(reload().Spec.Acknowledged).To(Equal("c-42"))
		Expect(succeeds("recover")).To(MatchRegexp(`Money:\s+moves\n`))

		Expect(succeeds("recover", "--pause")).To(Equal("Paused: no payout is created and no refund signed until kubectl payout recover --resume\n"))
		Expect(reload().Spec.Paused).To(BeTrue())
		Expect(succeeds("recover")).To(MatchRegexp(`Money:\s+waits: money is paused by an operator`))
		succeeds("recover", "--resume")
		Expect(reload().Spec.Paused).To(BeFalse())
	})

	It("refuses to acknowledge a check that has not finished", func() {
		store(payoutv1.RecoveryStatus{State: payoutv1.RecoveryChecking, CheckID: "c-43", Message: "asking the provider"})
		fails("error: the check of this start has not finished (asking the provider): there is nothing to acknowledge yet\n", "recover", "--resume")
		Expect(reload().Spec.Acknowledged).To(BeEmpty())
	})
})
