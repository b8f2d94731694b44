package solana

import (
	"strings"
	"testing"
	"time"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/transfer"
	"github.com/stablepay/payout-operator/test/chaintest"
	"github.com/stablepay/payout-operator/test/testgen"
)

// TestTheControllerJudgesSolanaFacts hands the lookup's observations of finalized transactions
// to the transfer controller's decision (transfer.Decide), as the controller does for a v2
// transfer on Solana of 25.00 USDC from payer: the right transfer is a confirmed deposit, every
// other one fails the transfer with the reason the EVM lookup's facts would give.
func TestTheControllerJudgesSolanaFacts(t *testing.T) {
	srv := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	c := newChain(t, "", srv.URL)
	_, _, slot := srv.Slots()
	cases := []struct {
		name   string
		tx     chaintest.SolanaTestTx
		failed string // "" for a confirmed deposit
	}{
		{"right transfer", chaintest.SolanaTestTx{Transfers: []chaintest.SolanaTokenTransfer{usdc(payer, platform, 25_000_000)}}, ""},
		{"wrong amount", chaintest.SolanaTestTx{Transfers: []chaintest.SolanaTokenTransfer{usdc(payer, platform, 24_000_000)}}, "sends 24 usdc, not the transfer's 25.00"},
		{"wrong destination", chaintest.SolanaTestTx{Transfers: []chaintest.SolanaTokenTransfer{usdc(payer, stranger, 25_000_000)}}, "sends no usdc to the platform address " + platform},
		{"wrong mint", chaintest.SolanaTestTx{Transfers: []chaintest.SolanaTokenTransfer{{From: payer, To: platform, Mint: usdtMint, Amount: 25_000_000}}}, "sends usdt, not usdc"},
		{"unconfigured mint", chaintest.SolanaTestTx{Transfers: []chaintest.SolanaTokenTransfer{{From: payer, To: platform, Mint: chaintest.SolanaAddress("x"), Amount: 25_000_000}}}, "sends no usdc to the platform address"},
		{"wrong sender", chaintest.SolanaTestTx{Transfers: []chaintest.SolanaTokenTransfer{usdc(stranger, platform, 25_000_000)}}, "is sent from " + stranger + ", not from the transfer's wallet " + payer},
		{"failed transaction", chaintest.SolanaTestTx{Failed: true, Transfers: []chaintest.SolanaTokenTransfer{usdc(payer, platform, 25_000_000)}}, "reverted: it moved no funds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.tx.Slot = slot
			sig := srv.AddTx(tc.tx)
			tr := testgen.Transfer("ns", "0123456789abcdef01234567", testgen.V2(), func(tr *payoutv1.Transfer) {
				tr.Spec.SourceNetwork, tr.Spec.DepositAddress, tr.Spec.WalletAddress, tr.Spec.TxHash = payoutv1.NetworkSolana, platform, payer, sig
			})
			obs := lookup(t, c, sig)
			d := transfer.Decide(transfer.Input{
				Transfer: tr, Now: testgen.Epoch.Add(time.Minute), Tx: obs, V2Address: platform, ProviderName: "simbank",
				Recipient: transfer.RecipientState{Known: true, ID: tr.Spec.RecipientID},
				// the provider, asked by reference, holds no payout: a transfer whose deposit was
				// seen fails only then
				ProviderBefore: &transfer.ProviderPayout{},
			})
			f := d.Status.Failure
			switch {
			case tc.failed == "" && (f != nil || d.Status.Deposit == nil || d.Status.Deposit.ConfirmedAt == nil):
				t.Fatalf("not a confirmed deposit: failure %+v, deposit %+v", f, d.Status.Deposit)
			case tc.failed == "":
				if dep := d.Status.Deposit; dep.From != payer || dep.Amount != "25000000" || dep.BlockNumber != int64(slot) || dep.BlockHash != srv.Blockhash(slot) {
					t.Errorf("deposit facts %+v", dep)
				}
			case f == nil || f.Reason != payoutv1.FailureDepositMismatch || !strings.Contains(f.Message, tc.failed):
				t.Fatalf("failure %+v, want a deposit mismatch saying %q", f, tc.failed)
			}
		})
	}
}
