package main

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/shopspring/decimal"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/dev/devenv"
	"github.com/stablepay/payout-operator/internal/ledger"
	"github.com/stablepay/payout-operator/internal/ledger/gather"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// treasuryTransfers is how many v1 transfers the treasury spec pays out and sweeps.
const treasuryTransfers = 200

// startSweeper runs `payoutd --sweeper` in this process until the spec ends, with a fresh gas
// wallet funded on base, the suite's chain configuration (its deposit xprv and the dev treasury)
// and a schedule short enough for a test: a batch goes a second after its oldest deposit is due.
func startSweeper() {
	GinkgoHelper()
	gas, err := crypto.GenerateKey()
	Expect(err).NotTo(HaveOccurred())
	gasFile := filepath.Join(GinkgoT().TempDir(), "sweeper-gas-key")
	Expect(os.WriteFile(gasFile, []byte(hexutil.Encode(crypto.FromECDSA(gas))+"\n"), 0o600)).To(Succeed())
	Expect(base.RPC.CallContext(context.Background(), nil, "anvil_setBalance", crypto.PubkeyToAddress(gas.PublicKey), "0x8ac7230489e80000")).To(Succeed()) // 10 ETH
	DeferCleanup(goRun(env.Config, payoutdArgs(freeAddr(), "--sweeper", "--controllers=false", "--api=false", "--sweeper-gas-key-file", gasFile,
		"--sweep-max-age", "1s", "--sweep-max-batch", fmt.Sprint(payoutv1.MaxSweepBatch), "--sweep-interval", "500ms")))
}

// swept is a transfer of the treasury spec: overpaid sends more than its amount, dust gets a
// stranger's base unit first (a stray); both are refunded by an operator before they are swept.
type swept struct {
	acct            *account
	id, address     string
	amount, deposit string
	dust            bool
}

var _ = Describe("the treasury", longest, func() {
	It("sweeps 200 paid-out transfers' deposits to the treasury, and the ledger says where every unit is", func() {
		began := time.Now()
		url := startInProcess(env.Config)
		treasury := common.HexToAddress(devenv.DevTreasury())
		before, err := base.BalanceOf(context.Background(), devchain.USDC, treasury)
		Expect(err).NotTo(HaveOccurred())
		Expect(before.Sign()).To(BeZero(), "only the sweeper sends to the dev treasury, and only this spec runs one")
		startSweeper()
		stranger, strangerAt := freshWallet(1_000_000)

		// 20 accounts of 10 transfers each keep every key within its per-minute limits.
		const accounts = 20
		var plan []*swept
		var mu sync.Mutex
		inAccounts(url, accounts, func(acct *account, a int) {
			rid := acct.recipient("Treasury Payee")
			for i := range treasuryTransfers / accounts {
				p := &swept{acct: acct, amount: fmt.Sprintf("%d.%02d", 10+rand.IntN(30), rand.IntN(100))}
				p.deposit = p.amount
				switch {
				case i == 2 || i == 6: // 20 %: overpaid by 0.37 (a stray part, refunded)
					p.deposit = decimal.RequireFromString(p.amount).Add(decimal.New(37, -2)).StringFixed(2)
				case i == 4 && a%2 == 0: // 5 %: a stranger's dust first (a stray, refunded)
					p.dust = true
				}
				tr := acct.must(200, "POST", "/api/payouts/transfer", transferBody(acct.quote(p.amount), p.amount, rid, true))["transfer"].(map[string]any)
				p.id, p.address = tr["id"].(string), tr["deposit_address"].(string)
				if p.dust {
					_, err := base.Transfer(context.Background(), stranger, devchain.USDC, common.HexToAddress(p.address), big.NewInt(1))
					Expect(err).NotTo(HaveOccurred())
				}
				deposit(p.address, p.deposit)
				mu.Lock()
				plan = append(plan, p)
				mu.Unlock()
			}
		})
		Expect(plan).To(HaveLen(treasuryTransfers))
		created := time.Since(began)

		// Every transfer is paid out through the simulated bank (read from the API server: the
		// facade's GET transfer allows 30 calls a minute per key).
		Eventually(func() []string {
			var open []string
			for _, p := range plan {
				t := &payoutv1.Transfer{}
				if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: payoutv1.AccountNamespace(p.acct.name), Name: p.id}, t); err != nil || t.Status.Phase != payoutv1.PhaseCompleted {
					open = append(open, p.id+" "+string(t.Status.Phase))
				}
			}
			return open
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(BeEmpty())
		paid := time.Since(began)

		// An operator refunds every stray part: the overpayments' excess and the stranger's dust.
		refunded := 0
		for _, p := range plan {
			if p.deposit == p.amount && !p.dust {
				continue
			}
			_, owed, err := admin.RequestRefund(context.Background(), env.Client, p.id, "treasury-e2e")
			Expect(err).NotTo(HaveOccurred(), p.id)
			Expect(owed).To(HaveLen(1), "%s owes one stray part", p.id)
			refunded++
		}
		Eventually(func() int {
			var list payoutv1.RefundList
			Expect(env.Client.List(context.Background(), &list, client.MatchingLabels{})).To(Succeed())
			n := 0
			for _, rf := range list.Items {
				if rf.Spec.RequestedBy == "treasury-e2e" && rf.Status.State == payoutv1.RefundConfirmed {
					n++
				}
			}
			return n
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Equal(refunded))

		// Every deposit of the plan is swept: its Sweep is Confirmed.
		byNS := map[string]bool{}
		for _, p := range plan {
			byNS[payoutv1.AccountNamespace(p.acct.name)] = true
		}
		Eventually(func() []string {
			var open []string
			for ns := range byNS {
				var deps payoutv1.DepositList
				Expect(env.Client.List(context.Background(), &deps, client.InNamespace(ns))).To(Succeed())
				for _, d := range deps.Items {
					sw := &payoutv1.Sweep{}
					if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(&d), sw); err != nil || sw.Status.State != payoutv1.SweepConfirmed {
						open = append(open, ns+"/"+d.Name+" "+string(sw.Status.State))
					}
				}
			}
			return open
		}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(BeEmpty())
		sweptAt := time.Since(began)

		// Read from the chain: every deposit address is empty of the token and of native gas.
		var want int64
		for _, p := range plan {
			at := common.HexToAddress(p.address)
			units, err := base.BalanceOf(context.Background(), devchain.USDC, at)
			Expect(err).NotTo(HaveOccurred())
			Expect(units.Sign()).To(BeZero(), "%s still holds %s base units at %s", p.id, units, p.address)
			wei, err := base.Client.BalanceAt(context.Background(), at, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(wei.Sign()).To(BeZero(), "%s holds %s wei of native gas (stranded)", p.address, wei)
			want += decimal.RequireFromString(p.amount).Shift(6).IntPart()
		}
		// The stranger got their dust back.
		strangerNow, err := base.BalanceOf(context.Background(), devchain.USDC, strangerAt)
		Expect(err).NotTo(HaveOccurred())
		Expect(strangerNow.Int64()).To(Equal(int64(1_000_000)), "the stranger's dust came back")

		// The ledger, built from the stored facts with the chain's balances of every deposit
		// address, balances; its swept is what the treasury holds, to the base unit.
		ch, err := evm.NewChain(payoutv1.NetworkBase, chaintest.Network(base, int64(devchain.Confirmations)))
		Expect(err).NotTo(HaveOccurred())
		checker := &gather.Checker{Client: env.Client, Balances: gather.EVMBalances(map[payoutv1.Network]*evm.Chain{payoutv1.NetworkBase: ch}), Clock: clock.RealClock{}}
		r, err := checker.Check(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Failures).To(BeEmpty(), "the ledger balances")
		var line *ledger.TokenLine
		for i := range r.Tokens {
			if r.Tokens[i].Network == string(payoutv1.NetworkBase) && r.Tokens[i].Token == string(payoutv1.TokenUSDC) {
				line = &r.Tokens[i]
			}
		}
		Expect(line).NotTo(BeNil())
		held, err := base.BalanceOf(context.Background(), devchain.USDC, treasury)
		Expect(err).NotTo(HaveOccurred())
		Expect(held).To(Equal(line.Swept), "the treasury holds what the ledger says was swept")
		Expect(held.Int64()).To(BeNumerically(">=", want), "the treasury holds at least this spec's %d transfers' amounts", len(plan))
		Expect(line.OnChain).To(Equal(line.Closing), "the deposit addresses hold on chain what the ledger says")

		report := fmt.Sprintf("%d transfers (%d overpaid, %d with a stranger's dust), %d strays refunded; created and deposited in %s, paid out by %s, swept by %s; "+
			"treasury %s base units = ledger swept %s (this spec's amounts %d); ledger received %s, refunded %s, closing %s, on chain %s",
			len(plan), count(plan, func(p *swept) bool { return p.deposit != p.amount }), count(plan, func(p *swept) bool { return p.dust }), refunded,
			created.Round(time.Second), paid.Round(time.Second), sweptAt.Round(time.Second), held, line.Swept, want, line.Received, line.Refunded, line.Closing, line.OnChain)
		AddReportEntry("treasury", report)
		GinkgoWriter.Println(report)
	})
})
