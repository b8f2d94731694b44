package main_test

import (
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// The sweeps are written by the sweeper (internal/sweeper, tested on anvil); here they are
// stored as it leaves them, and the plugin reports where the deposits' tokens are. The specs
// use USDT on Polygon, which no other spec of this suite records.
var _ = Describe("treasury", Serial, func() {
	It("shows per network and token what is swept, pending, held and stranded", func() {
		ns := payoutv1.AccountNamespace(newAccount("treasury"))
		deposit := func(i int, units string) *payoutv1.Deposit {
			GinkgoHelper()
			hash := fmt.Sprintf("0x%064x", i)
			d := &payoutv1.Deposit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: payoutv1.DepositName(payoutv1.NetworkPolygon, hash, 0)},
				Spec: payoutv1.DepositSpec{Transfer: fmt.Sprintf("%024x", i), Network: payoutv1.NetworkPolygon, Token: payoutv1.TokenUSDT,
					Contract: "0x" + strings.Repeat("11", 20), To: fmt.Sprintf("0x%040x", i), From: "0x" + strings.Repeat("22", 20), Amount: units,
					TxHash: hash, BlockNumber: 7, BlockHash: "0x" + strings.Repeat("33", 32), BlockTime: metav1.Now(), Confirmations: 3}}
			Expect(k8s.Create(ctx, d)).To(Succeed())
			return d
		}
		sweep := func(d *payoutv1.Deposit, st payoutv1.SweepStatus) {
			GinkgoHelper()
			sw := &payoutv1.Sweep{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: d.Name},
				Spec: payoutv1.SweepSpec{Transfer: d.Spec.Transfer, Network: d.Spec.Network, Token: d.Spec.Token, Address: d.Spec.To, Path: "1/2/3/4",
					Amount: d.Spec.Amount, DepositTxHash: d.Spec.TxHash, Reason: payoutv1.SweepPaidOut}}
			Expect(k8s.Create(ctx, sw)).To(Succeed())
			path := []payoutv1.SweepStatus{{State: payoutv1.SweepPending}}
			if st.State == payoutv1.SweepConfirmed {
				path = append(path, payoutv1.SweepStatus{State: payoutv1.SweepBatched, Batch: "polygon-usdt-1"})
				st.Batch = "polygon-usdt-1"
			}
			for _, s := range append(path, st) {
				sw.Status = s
				Expect(k8s.Status().Update(ctx, sw)).To(Succeed())
			}
		}
		now := metav1.Now()
		sweep(deposit(1, "25000000"), payoutv1.SweepStatus{State: payoutv1.SweepConfirmed, TxHash: "0xabc", Moved: "25000000", ConfirmedAt: &now})
		sweep(deposit(2, "1500000"), payoutv1.SweepStatus{State: payoutv1.SweepPending})
		sweep(deposit(3, "2000000"), payoutv1.SweepStatus{State: payoutv1.SweepPending, ReleasedBatches: []string{"a", "b", "c"}})
		deposit(4, "100")

		out := succeeds("treasury")
		Expect(out).To(MatchRegexp(`NETWORK\s+TOKEN\s+SWEPT\s+PENDING\s+HELD\s+STRANDED\s+DEPOSITS\s+NOTE\n`))
		Expect(out).To(MatchRegexp(`polygon\s+usdt\s+25\s+1\.5\s+0\.0001\s+2\s+4\s*\n`))
		// Solana's deposits are v2 payments to the platform's address, the treasury itself
		Expect(out).To(MatchRegexp(`solana\s+usdc\s+-\s+-\s+-\s+-\s+0\s+not swept: v2 payments arrive at the platform's address, which is the treasury\n`))

		var rows []map[string]any
		Expect(json.Unmarshal([]byte(succeeds("treasury", "-o", "json")), &rows)).To(Succeed())
		Expect(rows).To(ContainElement(And(HaveKeyWithValue("network", "polygon"), HaveKeyWithValue("token", "usdt"), HaveKeyWithValue("swept", "25"))))
		Expect(rows).To(ContainElement(And(HaveKeyWithValue("network", "solana"), HaveKeyWithValue("swept", "-"), HaveKey("note"))))
	})
})
