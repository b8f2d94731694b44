package main_test

import (
	"crypto/rand"
	"encoding/hex"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
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

func arrivedDeposit() *payoutv1.DepositFacts { return testgen.Deposit() }

// failure is the Failure fact of a failed transfer.
func failure(reason payoutv1.FailureReason, message string) *payoutv1.TransferFailure {
	return &payoutv1.TransferFailure{Reason: reason, Message: message, At: testgen.Epoch}
}
