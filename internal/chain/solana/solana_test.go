package solana

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go/rpc"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// These tests run the lookup against chaintest.SolanaRPCTestServer, which answers in Solana's
// documented JSON-RPC shapes: no validator can run here.

var ctx = context.Background()

var (
	platform = chaintest.SolanaAddress("platform")
	payer    = chaintest.SolanaAddress("payer")
	stranger = chaintest.SolanaAddress("stranger")
	usdtMint = chaintest.SolanaAddress("a configured usdt mint")
)

func network(urls []string, commitment string) config.Network {
	return config.Network{
		Kind: config.KindSolana, RPC: urls, GenesisHash: chaintest.SolanaMainnetGenesis, Commitment: commitment,
		Tokens: map[payoutv1.Token]*config.Token{
			payoutv1.TokenUSDC: {Contract: chaintest.SolanaUSDCMint, PlatformAddress: platform},
			payoutv1.TokenUSDT: {Contract: usdtMint},
		},
	}.WithDefaults()
}

func newChain(t *testing.T, commitment string, urls ...string) *Chain {
	t.Helper()
	c, err := NewChain(payoutv1.NetworkSolana, network(urls, commitment))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Client.Close)
	return c
}

func usdc(from, to string, units uint64) chaintest.SolanaTokenTransfer {
	return chaintest.SolanaTokenTransfer{From: from, To: to, Mint: chaintest.SolanaUSDCMint, Amount: units}
}

func lookup(t *testing.T, c *Chain, sig string) *chain.TxObservation {
	t.Helper()
	obs, err := c.LookupTx(ctx, payoutv1.NetworkSolana, sig)
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// TestRightTransfer: USDC sent to the platform owner's associated token account: found, its
// slot, block and time, the transfer with owners as To and From, at depth once finalized.
func TestRightTransfer(t *testing.T) {
	srv := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	c := newChain(t, "", srv.URL)
	_, confirmed, _ := srv.Slots()
	sig := srv.AddTx(chaintest.SolanaTestTx{Slot: confirmed - 4, Transfers: []chaintest.SolanaTokenTransfer{usdc(payer, platform, 25_000_000)}})
	obs := lookup(t, c, sig)
	want := chain.TxObservation{
		Network: payoutv1.NetworkSolana, TxHash: sig, Found: true, BlockNumber: int64(confirmed - 4),
		BlockHash: srv.Blockhash(confirmed - 4), BlockTime: time.Unix(chaintest.SolanaBlockTime(confirmed-4), 0).UTC(),
		Confirmations: 5, Required: config.SolanaFinalizedConfirmations,
	}
	if len(obs.Transfers) != 1 {
		t.Fatalf("transfers %+v", obs.Transfers)
	}
	tt := obs.Transfers[0]
	obs.Transfers = nil
	if !reflect.DeepEqual(*obs, want) {
		t.Fatalf("observation\n got %+v\nwant %+v", *obs, want)
	}
	if tt.Token != payoutv1.TokenUSDC || tt.Contract != chaintest.SolanaUSDCMint || tt.To != platform || tt.From != payer || tt.Amount.Int64() != 25_000_000 {
		t.Fatalf("transfer %+v", tt)
	}
	if tt.LogIndex != 1 {
		t.Errorf("LogIndex %d: the transfer is the second instruction (after the compute budget)", tt.LogIndex)
	}
	if obs.AtDepth() {
		t.Fatal("at depth before finalized (commitment finalized)")
	}
	srv.Advance(40)
	obs = lookup(t, c, sig)
	if !obs.AtDepth() || obs.Confirmations != config.SolanaFinalizedConfirmations {
		t.Fatalf("finalized, not at depth: %+v", obs)
	}
}

// TestNotYetAtCommitment: a transaction only processed is not returned at commitment confirmed
// (Found false); once confirmed it is found with its confirmations, and with commitment
// confirmed that is depth.
func TestNotYetAtCommitment(t *testing.T) {
	srv := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	c := newChain(t, config.CommitmentConfirmed, srv.URL)
	processed, confirmed, _ := srv.Slots()
	sig := srv.AddTx(chaintest.SolanaTestTx{Slot: processed, Transfers: []chaintest.SolanaTokenTransfer{usdc(payer, platform, 1_000_000)}})
	if obs := lookup(t, c, sig); obs.Found || obs.AtDepth() {
		t.Fatalf("a processed transaction: %+v", obs)
	}
	srv.Advance(processed - confirmed)
	obs := lookup(t, c, sig)
	if !obs.Found || obs.Confirmations != 1 || obs.Required != 1 || !obs.AtDepth() {
		t.Fatalf("just confirmed, commitment confirmed: %+v", obs)
	}
	if got := srv.Calls("getBlock"); got != 1 {
		t.Errorf("getBlock called %d times: only for a transaction found", got)
	}
}

func TestUnknownSignature(t *testing.T) {
	srv := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	c := newChain(t, "", srv.URL)
	obs := lookup(t, c, srv.NewSignature())
	if obs.Found || obs.Required != config.SolanaFinalizedConfirmations || len(obs.Transfers) != 0 {
		t.Fatalf("%+v", obs)
	}
	if _, err := c.LookupTx(ctx, payoutv1.NetworkSolana, "0x"+strings.Repeat("ab", 32)); err == nil {
		t.Error("an EVM hash was looked up on Solana")
	}
	if _, err := c.LookupTx(ctx, payoutv1.NetworkBase, srv.NewSignature()); err == nil {
		t.Error("a base lookup was answered by the solana client")
	}
}

// TestFailedTransaction: meta.err set: reverted, and nothing moved.
func TestFailedTransaction(t *testing.T) {
	srv := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	c := newChain(t, "", srv.URL)
	_, _, finalized := srv.Slots()
	sig := srv.AddTx(chaintest.SolanaTestTx{Slot: finalized, Failed: true, Transfers: []chaintest.SolanaTokenTransfer{usdc(payer, platform, 25_000_000)}})
	obs := lookup(t, c, sig)
	if !obs.Found || !obs.Reverted || len(obs.Transfers) != 0 || obs.Confirmations != config.SolanaFinalizedConfirmations || obs.AtDepth() {
		t.Fatalf("%+v", obs)
	}
}

// TestWhatTheTransactionSends: the lookup reports what was sent, to whom, of which mint; the
// other mints are not reported; the owner of the destination is To whatever the token account.
func TestWhatTheTransactionSends(t *testing.T) {
	srv := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	c := newChain(t, "", srv.URL)
	_, _, slot := srv.Slots()
	other := chaintest.SolanaAddress("some other mint")
	platformOtherAccount := chaintest.SolanaAddress("a second token account of the platform")
	cases := []struct {
		name string
		tx   []chaintest.SolanaTokenTransfer
		want []chain.TokenTransfer // Amount in Contract's units; LogIndex checked separately
	}{
		{"wrong destination", []chaintest.SolanaTokenTransfer{usdc(payer, stranger, 25_000_000)},
			[]chain.TokenTransfer{{Token: payoutv1.TokenUSDC, To: stranger, From: payer}}},
		{"wrong amount", []chaintest.SolanaTokenTransfer{usdc(payer, platform, 24_990_000)},
			[]chain.TokenTransfer{{Token: payoutv1.TokenUSDC, To: platform, From: payer}}},
		{"an unconfigured mint", []chaintest.SolanaTokenTransfer{{From: payer, To: platform, Mint: other, Amount: 25_000_000}}, nil},
		{"a configured mint of another token", []chaintest.SolanaTokenTransfer{{From: payer, To: platform, Mint: usdtMint, Amount: 25_000_000}},
			[]chain.TokenTransfer{{Token: payoutv1.TokenUSDT, To: platform, From: payer}}},
		{"plain transfer (no mint in the instruction)", []chaintest.SolanaTokenTransfer{{From: payer, To: platform, Mint: chaintest.SolanaUSDCMint, Amount: 25_000_000, Plain: true}},
			[]chain.TokenTransfer{{Token: payoutv1.TokenUSDC, To: platform, From: payer}}},
		{"destination account created in the transaction", []chaintest.SolanaTokenTransfer{{From: payer, To: platform, Mint: chaintest.SolanaUSDCMint, Amount: 25_000_000, CreateDestination: true}},
			[]chain.TokenTransfer{{Token: payoutv1.TokenUSDC, To: platform, From: payer}}},
		{"another token account of the platform", []chaintest.SolanaTokenTransfer{{From: payer, To: platform, ToAccount: platformOtherAccount, Mint: chaintest.SolanaUSDCMint, Amount: 25_000_000}},
			[]chain.TokenTransfer{{Token: payoutv1.TokenUSDC, To: platform, From: payer}}},
		{"balances without owners: the platform's associated token account", []chaintest.SolanaTokenTransfer{{From: payer, To: platform, Mint: chaintest.SolanaUSDCMint, Amount: 25_000_000, NoOwners: true}},
			[]chain.TokenTransfer{{Token: payoutv1.TokenUSDC, To: platform, From: payer}}},
		{"balances without owners: another account is not the platform", []chaintest.SolanaTokenTransfer{{From: payer, To: platform, ToAccount: platformOtherAccount, Mint: chaintest.SolanaUSDCMint, Amount: 25_000_000, NoOwners: true}},
			[]chain.TokenTransfer{{Token: payoutv1.TokenUSDC, To: platformOtherAccount, From: payer}}},
		{"two transfers", []chaintest.SolanaTokenTransfer{usdc(payer, stranger, 1), usdc(stranger, platform, 2)},
			[]chain.TokenTransfer{{Token: payoutv1.TokenUSDC, To: stranger, From: payer}, {Token: payoutv1.TokenUSDC, To: platform, From: stranger}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sig := srv.AddTx(chaintest.SolanaTestTx{Slot: slot, Transfers: tc.tx})
			obs := lookup(t, c, sig)
			if !obs.Found || obs.Reverted || !obs.AtDepth() {
				t.Fatalf("%+v", obs)
			}
			if len(obs.Transfers) != len(tc.want) {
				t.Fatalf("transfers %+v, want %d", obs.Transfers, len(tc.want))
			}
			var last int64 = -1
			for i, got := range obs.Transfers {
				w := tc.want[i]
				mint := chaintest.SolanaUSDCMint
				if w.Token == payoutv1.TokenUSDT {
					mint = usdtMint
				}
				if got.Token != w.Token || got.Contract != mint || got.To != w.To || got.From != w.From || got.Amount.Uint64() != tc.tx[i].Amount {
					t.Errorf("transfer %d: %+v, want %+v of %d", i, got, w, tc.tx[i].Amount)
				}
				if got.LogIndex <= last {
					t.Errorf("LogIndex %d after %d: not in execution order", got.LogIndex, last)
				}
				last = got.LogIndex
			}
		})
	}
}

func TestAssociatedTokenAccount(t *testing.T) {
	// The devnet transaction of Solana's getTransaction documentation ("Example Results")
	// creates the associated token account 9vLSZ1gujMzisVrK5r3ZBXLVJMrF3fp6BtAUDyD94nW2 of
	// wallet 47eFuHR9ste9kopiJ9eRxcwahmE62JovbKe5r7AjANut for mint
	// 5kR7n7QJv85NrwwXdYWZ52qkRcyvXqKWDPNooYcfDV6e under the Token program.
	if got, err := AssociatedTokenAccount("47eFuHR9ste9kopiJ9eRxcwahmE62JovbKe5r7AjANut", "5kR7n7QJv85NrwwXdYWZ52qkRcyvXqKWDPNooYcfDV6e"); err != nil ||
		got != "9vLSZ1gujMzisVrK5r3ZBXLVJMrF3fp6BtAUDyD94nW2" {
		t.Fatalf("AssociatedTokenAccount of the documented example = %s, %v", got, err)
	}
	ata, err := AssociatedTokenAccount(platform, chaintest.SolanaUSDCMint)
	if err != nil || !chain.IsSolanaAddress(ata) || ata == platform {
		t.Fatalf("AssociatedTokenAccount = %s, %v", ata, err)
	}
	again, _ := AssociatedTokenAccount(platform, chaintest.SolanaUSDCMint)
	other, _ := AssociatedTokenAccount(payer, chaintest.SolanaUSDCMint)
	if again != ata || other == ata {
		t.Fatal("not a function of owner and mint")
	}
	if _, err := AssociatedTokenAccount("0x12", chaintest.SolanaUSDCMint); err == nil {
		t.Error("an EVM address as owner")
	}
}

// TestFailoverAndGenesis: a dead first endpoint is passed over; an endpoint of another cluster
// is refused.
func TestFailoverAndGenesis(t *testing.T) {
	dead := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	dead.SetDown(true)
	devnet := chaintest.NewSolanaRPCTestServer(t, "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG")
	good := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	c := newChain(t, "", dead.URL+"/v1/SECRET", devnet.URL, good.URL)
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, _, finalized := good.Slots()
	if st.Genesis != chaintest.SolanaMainnetGenesis || st.Slot != int64(finalized) || st.Blockhash != good.Blockhash(finalized) || st.Head != 1000 {
		t.Fatalf("status %+v", st)
	}
	if c.Client.Endpoint() != config.Redact(good.URL) {
		t.Errorf("endpoint %s", c.Client.Endpoint())
	}
	// every endpoint failing: the error names each without its path
	dead2 := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	dead2.SetDown(true)
	c2 := newChain(t, "", dead2.URL+"/v1/SECRET", devnet.URL)
	_, err = c2.Status(ctx)
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "configured 5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d") {
		t.Fatalf("Status = %v", err)
	}
}

// TestUnhealthyNode: getHealth's error moves to the next endpoint; with every endpoint behind,
// Status reports the node's words.
func TestUnhealthyNode(t *testing.T) {
	behind := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	behind.SetBehind(42)
	good := chaintest.NewSolanaRPCTestServer(t, chaintest.SolanaMainnetGenesis)
	if _, err := newChain(t, "", behind.URL, good.URL).Status(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := newChain(t, "", behind.URL).Status(ctx)
	if err == nil || !IsNodeError(err) || !strings.Contains(err.Error(), "Node is behind by 42 slots") {
		t.Fatalf("Status = %v", err)
	}
}

func TestConfirmations(t *testing.T) {
	n := func(v uint64) *uint64 { return &v }
	for _, tc := range []struct {
		st   *rpc.SignatureStatusesResult
		want int64
	}{
		{nil, 0},
		{&rpc.SignatureStatusesResult{ConfirmationStatus: rpc.ConfirmationStatusProcessed, Confirmations: n(0)}, 0},
		{&rpc.SignatureStatusesResult{ConfirmationStatus: rpc.ConfirmationStatusConfirmed, Confirmations: n(0)}, 1},
		{&rpc.SignatureStatusesResult{ConfirmationStatus: rpc.ConfirmationStatusConfirmed, Confirmations: n(10)}, 11},
		{&rpc.SignatureStatusesResult{ConfirmationStatus: rpc.ConfirmationStatusConfirmed, Confirmations: n(31)}, 31},
		{&rpc.SignatureStatusesResult{ConfirmationStatus: rpc.ConfirmationStatusConfirmed}, 32},
		{&rpc.SignatureStatusesResult{ConfirmationStatus: rpc.ConfirmationStatusFinalized}, 32},
	} {
		if got := Confirmations(tc.st); got != tc.want {
			t.Errorf("Confirmations(%+v) = %d, want %d", tc.st, got, tc.want)
		}
	}
}
