package main_test

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/testgen"
)

// Transfer fixtures for refund, get and describe: stored as the REST facade and the transfer
// controller would store them, status through the status subresource.

func newTransferID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// named gives a transfer a fixed id, for output compared as literal text.
func named(id string) func(*payoutv1.Transfer) {
	return func(t *payoutv1.Transfer) { t.Name = id }
}

// storeTransfer stores a transfer of account with the given status and returns it as stored.
func storeTransfer(account string, status payoutv1.TransferStatus, mods ...func(*payoutv1.Transfer)) *payoutv1.Transfer {
	GinkgoHelper()
	t := testgen.Transfer(payoutv1.AccountNamespace(account), newTransferID(), append([]func(*payoutv1.Transfer){
		func(t *payoutv1.Transfer) { t.Spec.Account = account },
	}, mods...)...)
	Expect(k8s.Create(ctx, t)).To(Succeed())
	if status.Phase != "" {
		t.Status = status
		Expect(k8s.Status().Update(ctx, t)).To(Succeed())
	}
	return t
}

func getTransfer(t *payoutv1.Transfer) *payoutv1.Transfer {
	GinkgoHelper()
	got := &payoutv1.Transfer{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(t), got)).To(Succeed())
	return got
}

func arrivedDeposit() *payoutv1.ObservedDeposit {
	return &payoutv1.ObservedDeposit{
		TxHash: "0x" + strings.Repeat("ab", 32),
		From:   "0x8ba1f109551bd432803012645ac136ddd64dba72", Amount: "25000000", Token: payoutv1.TokenUSDC,
		BlockNumber: 1234, DetectedAt: testgen.Epoch,
	}
}
