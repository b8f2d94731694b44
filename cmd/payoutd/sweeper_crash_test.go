package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/dev/devenv"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

// Issue 27: kill -9 of the sweeper between signing and broadcast, and after the broadcast before
// the status write, loses nothing and sends no token twice. payoutd --sweeper runs as its own
// process, built with -tags sweeperfault (sweeperfault.go): it stops at the point and the test
// SIGKILLs it there, then starts it again without the fault and reads the outcome from the chain.
//
// The spec has its own control plane: the suite's holds the other specs' deposits on base, which
// a sweeper would take into its batch too.
var _ = Describe("the sweeper killed with SIGKILL (issue 27)", Ordered, func() {
	var (
		cluster         *testenv.Env
		bin, kubeconfig string
	)
	BeforeAll(func() {
		var err error
		cluster, err = testenv.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cluster.Stop)
		bin = filepath.Join(workdir, "payoutd-sweeperfault")
		out, err := exec.Command("go", "build", "-tags", "sweeperfault", "-o", bin, ".").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		kubeconfig = adminKubeconfigOf(cluster, "sweeper-crash")
	})

	killedAt := func(point string) {
		GinkgoHelper()
		dir := GinkgoT().TempDir()
		set := devchain.StartForTest(GinkgoT(), devchain.Base)
		c := set.Chains[devchain.Base]
		chainsYAML, err := devenv.WriteChainConfig(dir, set)
		Expect(err).NotTo(HaveOccurred())
		treasury := common.HexToAddress(devenv.DevTreasury())
		gas, err := crypto.GenerateKey()
		Expect(err).NotTo(HaveOccurred())
		gasAt := crypto.PubkeyToAddress(gas.PublicKey)
		Expect(c.RPC.CallContext(context.Background(), nil, "anvil_setBalance", gasAt, hexutil.EncodeBig(big.NewInt(1e18)))).To(Succeed())
		gasFile := filepath.Join(dir, "sweeper-gas-key")
		Expect(os.WriteFile(gasFile, []byte(hex.EncodeToString(crypto.FromECDSA(gas))+"\n"), 0o600)).To(Succeed())

		ns := "sweeper-crash-" + point
		Expect(cluster.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		xprv, err := os.ReadFile(filepath.Join(dir, "keys", "deposit.xprv"))
		Expect(err).NotTo(HaveOccurred())
		keys, err := depositkey.NewPrivate(strings.TrimSpace(string(xprv)))
		Expect(err).NotTo(HaveOccurred())
		pub, err := keys.Public()
		Expect(err).NotTo(HaveOccurred())
		treasuryBefore, err := c.BalanceOf(context.Background(), devchain.USDC, treasury)
		Expect(err).NotTo(HaveOccurred())
		deps := []*payoutv1.Deposit{
			paidOutOn(cluster, c, set, pub, ns, 3_000_000),
			paidOutOn(cluster, c, set, pub, ns, 4_250_000),
		}

		marker := filepath.Join(dir, "stopped")
		k := &killer{bin: bin, kubeconfig: kubeconfig, logDir: dir,
			env: []string{"PAYOUT_SWEEPER_FAULT=" + point, "PAYOUT_SWEEPER_FAULT_FILE=" + marker},
			args: func([]string) []string {
				return []string{"--sweeper", "--controllers=false", "--api=false", "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
					"--chains-config", chainsYAML, "--sweeper-gas-key-file", gasFile, "--sweep-max-age", "1s", "--sweep-interval", "500ms"}
			}}
		k.start()
		DeferCleanup(k.kill)
		var stopped []byte
		Eventually(func() error { stopped, err = os.ReadFile(marker); return err }).WithTimeout(3 * time.Minute).Should(Succeed())
		// the moment of the kill: the batch's transaction is stored, the one the process holds
		// the batches of this spec's deposits (a cluster-scoped batch lists its deposits' namespaces)
		batchesHere := func() []payoutv1.SweepBatch {
			GinkgoHelper()
			all := &payoutv1.SweepBatchList{}
			Expect(cluster.Client.List(context.Background(), all)).To(Succeed())
			var here []payoutv1.SweepBatch
			for _, b := range all.Items {
				for _, it := range b.Spec.Items {
					if it.Namespace == ns {
						here = append(here, b)
						break
					}
				}
			}
			return here
		}
		batches := batchesHere()
		Expect(batches).To(HaveLen(1))
		signed := batches[0]
		Expect(signed.Status.State).To(Equal(payoutv1.SweepBatchSigned), "at the kill the batch's transaction must be stored and not yet recorded as sent")
		Expect(signed.Status.SignedTx).To(Equal(hexutil.Encode(stopped)), "the stored transaction is the one being broadcast")
		onChain := func() bool {
			_, pending, err := c.Client.TransactionByHash(context.Background(), common.HexToHash(signed.Status.TxHash))
			return err == nil && !pending
		}
		if point == faultAfterBroadcast {
			Eventually(onChain).WithTimeout(30*time.Second).Should(BeTrue(), "the node took it before the kill")
		} else {
			Expect(onChain()).To(BeFalse(), "the node never saw it before the kill")
		}
		k.kill()
		GinkgoWriter.Printf("sweeper killed at %s with batch %s signed (nonce %d, %s)\n", point, signed.Name, *signed.Status.Nonce, signed.Status.TxHash)

		// started again without the fault: it finishes the batch
		k.env = nil
		k.start()
		Eventually(func() bool {
			for _, d := range deps {
				sw := &payoutv1.Sweep{}
				if cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(d), sw) != nil || sw.Status.State != payoutv1.SweepConfirmed {
					return false
				}
			}
			return true
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(BeTrue())

		// one batch, its one transaction: the hash and the bytes stored before the kill
		batches = batchesHere()
		Expect(batches).To(HaveLen(1))
		b := batches[0]
		Expect(b.Name).To(Equal(signed.Name))
		Expect(b.Status.State).To(Equal(payoutv1.SweepBatchConfirmed))
		Expect(b.Status.TxHash).To(Equal(signed.Status.TxHash))
		Expect(b.Status.SignedTx).To(Equal(signed.Status.SignedTx))
		rc, err := c.Client.TransactionReceipt(context.Background(), common.HexToHash(b.Status.TxHash))
		Expect(err).NotTo(HaveOccurred())
		Expect(rc.Status).To(Equal(uint64(1)))
		// the gas wallet's nonces: the delegate's deployment and the batch, each used once
		nonce, err := c.Client.NonceAt(context.Background(), gasAt, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(nonce).To(Equal(uint64(2)), "the gas wallet sent the delegate's deployment and one batch")
		Expect(*b.Status.Nonce).To(BeEquivalentTo(1), "the batch holds the nonce after the deployment")
		// every deposit in the treasury to the base unit; the deposit addresses hold nothing
		want := new(big.Int)
		for _, d := range deps {
			units, _ := new(big.Int).SetString(d.Spec.Amount, 10)
			want.Add(want, units)
			left, err := c.BalanceOf(context.Background(), devchain.USDC, common.HexToAddress(d.Spec.To))
			Expect(err).NotTo(HaveOccurred())
			Expect(left.Sign()).To(BeZero(), "deposit address %s holds %s base units", d.Spec.To, left)
			sw := &payoutv1.Sweep{}
			Expect(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(d), sw)).To(Succeed())
			Expect(sw.Status.Moved).To(Equal(d.Spec.Amount))
			Expect(sw.Status.TxHash).To(Equal(b.Status.TxHash))
		}
		after, err := c.BalanceOf(context.Background(), devchain.USDC, treasury)
		Expect(err).NotTo(HaveOccurred())
		Expect(new(big.Int).Sub(after, treasuryBefore)).To(Equal(want), "the treasury received every deposit, once")
		report := fmt.Sprintf("sweeper SIGKILLed %s: batch %s of %d deposits (%s base units) sent once as %s, gas wallet nonce 2, deposit addresses at zero",
			point, b.Name, len(deps), want, b.Status.TxHash)
		AddReportEntry("sweeper crash "+point, report)
		GinkgoWriter.Println(report)
	}

	It("loses nothing and sends nothing twice when killed between signing and broadcast", func() { killedAt(faultBeforeBroadcast) })
	It("loses nothing and sends nothing twice when killed after the broadcast, before the status write", func() { killedAt(faultAfterBroadcast) })
})

// paidOutOn stores in cluster a completed v1 transfer of namespace ns whose deposit address (of
// pub) received units on chain c, recorded as the watcher records it, and returns its Deposit.
func paidOutOn(cluster *testenv.Env, c *devchain.Chain, set *devchain.Set, pub *depositkey.Public, ns string, units int64) *payoutv1.Deposit {
	GinkgoHelper()
	id := fmt.Sprintf("%024x", time.Now().UnixNano())
	addr, path, err := pub.DepositAddress(payoutv1.NetworkBase, id)
	Expect(err).NotTo(HaveOccurred())
	tx, err := c.SendTransfer(context.Background(), set.FundedKey, devchain.USDC, common.HexToAddress(addr), big.NewInt(units))
	Expect(err).NotTo(HaveOccurred())
	rc, err := c.WaitMined(context.Background(), tx.Hash())
	Expect(err).NotTo(HaveOccurred())
	wallet := evm.Hex(crypto.PubkeyToAddress(set.FundedKey.PublicKey))
	t := testgen.Transfer(ns, id, func(t *payoutv1.Transfer) {
		t.Spec.DepositAddress, t.Spec.DepositPath, t.Spec.WalletAddress = addr, path, wallet
		usd := payoutv1.USDAmount(fmt.Sprintf("%d.%02d", units/1e6, units%1e6/1e4)) // units are whole cents
		t.Spec.Amount, t.Spec.Quote.SourceAmount = usd, usd
	})
	Expect(cluster.Client.Create(context.Background(), t)).To(Succeed())
	logIndex := int64(rc.Logs[len(rc.Logs)-1].Index)
	dep := &payoutv1.Deposit{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: payoutv1.DepositName(payoutv1.NetworkBase, tx.Hash().Hex(), logIndex),
			Labels: map[string]string{payoutv1.DepositTransferLabel: id}},
		Spec: payoutv1.DepositSpec{Transfer: id, Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, Contract: evm.Hex(c.Tokens[devchain.USDC]),
			To: addr, From: wallet, Amount: fmt.Sprint(units), TxHash: strings.ToLower(tx.Hash().Hex()), LogIndex: logIndex,
			BlockNumber: rc.BlockNumber.Int64(), BlockHash: strings.ToLower(rc.BlockHash.Hex()), BlockTime: metav1.Now(), Confirmations: 3},
	}
	Expect(cluster.Client.Create(context.Background(), dep)).To(Succeed())
	at := metav1.Now()
	t.Status.Deposit = &payoutv1.DepositFacts{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC, TxHash: dep.Spec.TxHash, LogIndex: logIndex,
		From: wallet, Amount: dep.Spec.Amount, BlockNumber: dep.Spec.BlockNumber, BlockHash: dep.Spec.BlockHash, Confirmations: 3, SeenAt: at, ConfirmedAt: &at}
	t.Status.Payout = &payoutv1.PayoutFacts{Reference: id, Provider: "simbank", State: payoutv1.PayoutCompleted, RequestedAt: at}
	t.Status.Phase = payoutv1.PhaseCompleted
	Expect(cluster.Client.Status().Update(context.Background(), t)).To(Succeed())
	return dep
}
