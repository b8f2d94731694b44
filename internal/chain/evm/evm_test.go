package evm

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	ethtypes "github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"k8s.io/apimachinery/pkg/types"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// These tests run against real anvil nodes (package devchain; `make anvil` installs anvil).

var ctx = context.Background()

// depositAddr is a watched address of the tests; stranger is not watched.
var (
	depositAddr = common.HexToAddress("0x00000000000000000000000000000000000d0001")
	stranger    = common.HexToAddress("0x00000000000000000000000000000000000d0002")
	transferRef = types.NamespacedName{Namespace: "payout-acme", Name: "0123456789abcdef01234567"}
)

func newScanner(t *testing.T, c *devchain.Chain, depth int64) (*Scanner, *chaintest.Book) {
	t.Helper()
	ch, err := NewChain(payoutv1.Network(c.Network), chaintest.Network(c, depth))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Client.Close)
	book := &chaintest.Book{}
	book.Add(ch.Network, depositAddr.Hex(), transferRef)
	return &Scanner{Chain: ch, Book: book}, book
}

// scanToHead runs steps until the cursor is at the newest block at depth and returns every
// deposit seen and the cursor.
func scanToHead(t *testing.T, s *Scanner, cur Cursor) ([]Step, Cursor) {
	t.Helper()
	tip, err := s.Chain.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var steps []Step
	for range 100 {
		st, err := s.StepTo(ctx, cur, tip)
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, st)
		cur = st.Cursor
		if st.CaughtUp() {
			return steps, cur
		}
	}
	t.Fatal("the scan did not catch up in 100 steps")
	return nil, cur
}

func deposits(steps []Step) int {
	n := 0
	for _, s := range steps {
		n += len(s.Deposits)
	}
	return n
}

func initCursor(t *testing.T, s *Scanner) Cursor {
	t.Helper()
	head, err := s.Chain.HeadNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := s.InitCursor(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

func TestDepositReportedAtExactlyItsDepth(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	s, _ := newScanner(t, c, 3)
	cur := initCursor(t, s)

	tx, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, depositAddr, 25_000_000)
	chaintest.Send(t, c, set.FundedKey, devchain.USDC, stranger, 1) // in block+1, not watched
	// head = block+1: two confirmations; then one more block makes three
	steps, cur := scanToHead(t, s, cur)
	if n := deposits(steps); n != 0 {
		t.Fatalf("a deposit with 2 of 3 confirmations was reported (%d)", n)
	}
	chaintest.Mine(t, c, 1)
	steps, _ = scanToHead(t, s, cur)
	if n := deposits(steps); n != 1 {
		t.Fatalf("%d deposits at depth, want 1", n)
	}
	var d = steps[len(steps)-1].Deposits[0]
	for _, st := range steps {
		if len(st.Deposits) > 0 {
			d = st.Deposits[0]
		}
	}
	if d.BlockNumber != block || d.Confirmations != 3 || d.Amount.Int64() != 25_000_000 || d.TxHash != strings.ToLower(tx.Hash().Hex()) ||
		d.To != Hex(depositAddr) || d.From != Hex(crypto.PubkeyToAddress(set.FundedKey.PublicKey)) || d.Token != payoutv1.TokenUSDC ||
		d.Transfer != transferRef || d.BlockTime.IsZero() || d.Contract != Hex(c.Tokens[devchain.USDC]) {
		t.Fatalf("deposit %+v", d)
	}
}

func TestDepositReorgedOutBeforeDepthIsNeverReported(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	s, _ := newScanner(t, c, 3)
	cur := initCursor(t, s)

	_, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, depositAddr, 25_000_000)
	chaintest.Mine(t, c, 1) // 2 confirmations
	steps, cur := scanToHead(t, s, cur)
	if deposits(steps) != 0 {
		t.Fatal("reported before depth")
	}
	// replace the deposit's block and the one on top with empty ones
	if err := c.ReorgFrom(ctx, uint64(block)); err != nil {
		t.Fatal(err)
	}
	chaintest.Mine(t, c, 5)
	steps, _ = scanToHead(t, s, cur)
	if n := deposits(steps); n != 0 {
		t.Fatalf("a reorged-out deposit was reported %d times", n)
	}
}

func TestReorgBetweenLogQueryAndHeaderCheck(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	s, _ := newScanner(t, c, 2)
	cur := initCursor(t, s)

	_, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, depositAddr, 7_000_000)
	chaintest.Mine(t, c, 1) // at depth 2
	head := chaintest.Head(t, c)
	reorged := false
	s.AfterLogs = func() {
		if reorged {
			return
		}
		reorged = true
		// the log query has seen the deposit; its block now leaves the chain
		if err := c.ReorgFrom(ctx, uint64(block)); err != nil {
			t.Error(err)
		}
	}
	var st Step
	var err error
	for st, err = s.Step(ctx, cur, head); err == nil && !st.CaughtUp() && len(st.Deposits) == 0; st, err = s.Step(ctx, st.Cursor, head) {
	}
	if !errors.Is(err, ErrChainMoved) {
		t.Fatalf("Step after a reorg under the query = %v (deposits %d), want ErrChainMoved", err, len(st.Deposits))
	}
	s.AfterLogs = nil
	steps, _ := scanToHead(t, s, cur)
	if n := deposits(steps); n != 0 {
		t.Fatalf("the reorged-out deposit was reported %d times", n)
	}
}

func TestReorgBehindTheCursorRewindsToTheCommonAncestor(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	s, _ := newScanner(t, c, 1)
	cur := initCursor(t, s)
	chaintest.Mine(t, c, 4)
	_, cur = scanToHead(t, s, cur)
	// a deposit signed now, mined into a block that replaces two already scanned ones
	tx, err := c.NewTransfer(ctx, set.FundedKey, devchain.USDC, depositAddr, big.NewInt(3_000_000))
	if err != nil {
		t.Fatal(err)
	}
	head := chaintest.Head(t, c)
	if err := c.Reorg(ctx, 2, devchain.ReorgTx{Tx: tx, BlockOffset: 1}); err != nil {
		t.Fatal(err)
	}
	// the cursor's block is replaced; the next block shows it (its parent is not the cursor)
	chaintest.Mine(t, c, 1)
	st, err := s.Step(ctx, cur, head+1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Reorg == nil || st.Reorg.Deep || st.Cursor.Block > head-2 || len(st.Deposits) != 0 {
		t.Fatalf("step after the reorg: reorg %v, cursor %d, want rewound to %d or before", st.Reorg, st.Cursor.Block, head-2)
	}
	canon, err := c.Client.HeaderByNumber(ctx, big.NewInt(st.Cursor.Block))
	if err != nil || canon.Hash() != st.Cursor.Hash {
		t.Fatalf("rewound to a block that is not canonical (%v)", err)
	}
	steps, _ := scanToHead(t, s, st.Cursor)
	if n := deposits(steps); n != 1 {
		t.Fatalf("%d deposits from the new chain, want 1", n)
	}
}

func TestLookupTxFacts(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Ethereum)
	c := set.Chains[devchain.Ethereum]
	chaintest.ManualMining(t, c)
	ch, err := NewChain(payoutv1.NetworkEthereum, chaintest.Network(c, 3))
	if err != nil {
		t.Fatal(err)
	}
	platform := chaintest.PlatformAddress
	funded := Hex(crypto.PubkeyToAddress(set.FundedKey.PublicKey))

	right, _ := chaintest.Send(t, c, set.FundedKey, devchain.USDC, platform, 25_000_000)
	otherAddr, _ := chaintest.Send(t, c, set.FundedKey, devchain.USDC, stranger, 25_000_000)
	otherAmount, _ := chaintest.Send(t, c, set.FundedKey, devchain.USDC, platform, 24_990_000)
	otherToken, _ := chaintest.Send(t, c, set.FundedKey, devchain.USDT, platform, 25_000_000)
	reverted := sendReverting(t, c, platform)
	chaintest.Mine(t, c, 3) // every one above is at depth now
	shallow, _ := chaintest.Send(t, c, set.FundedKey, devchain.USDC, platform, 25_000_000)

	type want struct {
		found, reverted, atDepth bool
		token                    payoutv1.Token
		to                       string
		amount                   int64
	}
	cases := []struct {
		name string
		hash string
		want want
	}{
		{"the right transaction", right.Hash().Hex(), want{true, false, true, payoutv1.TokenUSDC, Hex(platform), 25_000_000}},
		{"a transfer to another address", otherAddr.Hash().Hex(), want{true, false, true, payoutv1.TokenUSDC, Hex(stranger), 25_000_000}},
		{"another amount", otherAmount.Hash().Hex(), want{true, false, true, payoutv1.TokenUSDC, Hex(platform), 24_990_000}},
		{"another token", otherToken.Hash().Hex(), want{true, false, true, payoutv1.TokenUSDT, Hex(platform), 25_000_000}},
		{"reverted", reverted.Hex(), want{found: true, reverted: true}},
		{"not yet at depth", shallow.Hash().Hex(), want{true, false, false, payoutv1.TokenUSDC, Hex(platform), 25_000_000}},
		{"unknown hash", "0x" + strings.Repeat("ab", 32), want{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obs, err := ch.LookupTx(ctx, payoutv1.NetworkEthereum, tc.hash)
			if err != nil {
				t.Fatal(err)
			}
			if obs.Found != tc.want.found || obs.Reverted != tc.want.reverted || obs.AtDepth() != tc.want.atDepth || obs.Required != 3 {
				t.Fatalf("found %v reverted %v atDepth %v (confirmations %d of %d)", obs.Found, obs.Reverted, obs.AtDepth(), obs.Confirmations, obs.Required)
			}
			if !tc.want.found {
				if obs.BlockNumber != 0 || len(obs.Transfers) != 0 {
					t.Fatalf("an unknown hash has facts: %+v", obs)
				}
				return
			}
			if obs.BlockHash == "" || obs.BlockTime.IsZero() || obs.Confirmations < 1 {
				t.Fatalf("block facts: %+v", obs)
			}
			if tc.want.reverted {
				if len(obs.Transfers) != 0 {
					t.Fatalf("a reverted transaction moved %+v", obs.Transfers)
				}
				return
			}
			if len(obs.Transfers) != 1 {
				t.Fatalf("transfers %+v", obs.Transfers)
			}
			tr := obs.Transfers[0]
			if tr.Token != tc.want.token || tr.To != tc.want.to || tr.Amount.Int64() != tc.want.amount || tr.From != funded {
				t.Fatalf("transfer %+v", tr)
			}
		})
	}
	if obs, _ := ch.LookupTx(ctx, payoutv1.NetworkEthereum, shallow.Hash().Hex()); obs.Confirmations != 1 {
		t.Errorf("a transaction in the head block has %d confirmations, want 1", obs.Confirmations)
	}
}

// sendReverting mines a USDC transfer from a wallet without tokens (it reverts) and returns its
// hash.
func sendReverting(t *testing.T, c *devchain.Chain, to common.Address) common.Hash {
	t.Helper()
	from := crypto.PubkeyToAddress(chaintest.EmptyKey.PublicKey)
	nonce, err := c.Client.PendingNonceAt(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	data := append(append(common.CopyBytes(transferSelector), common.LeftPadBytes(to.Bytes(), 32)...), common.LeftPadBytes(big.NewInt(1).Bytes(), 32)...)
	token := c.Tokens[devchain.USDC]
	tx, err := ethtypes.SignTx(ethtypes.NewTx(&ethtypes.DynamicFeeTx{
		ChainID: new(big.Int).SetUint64(c.ChainID), Nonce: nonce, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(100e9), Gas: 100_000,
		To: &token, Data: data,
	}), ethtypes.LatestSignerForChainID(new(big.Int).SetUint64(c.ChainID)), chaintest.EmptyKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Client.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	chaintest.Mine(t, c, 1)
	r, err := c.WaitMined(ctx, tx.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != ethtypes.ReceiptStatusFailed {
		t.Fatal("the transfer without funds did not revert")
	}
	return tx.Hash()
}

func TestFailover(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base, devchain.Ethereum)
	base, eth := set.Chains[devchain.Base], set.Chains[devchain.Ethereum]
	n := chaintest.Network(base, 1)
	// a dead endpoint, then a node of another chain, then the right one
	n.RPC = []string{"http://127.0.0.1:1", eth.RPCURL, base.RPCURL}
	ch, err := NewChain(payoutv1.NetworkBase, n)
	if err != nil {
		t.Fatal(err)
	}
	head, err := ch.HeadNumber(ctx)
	if err != nil {
		t.Fatalf("failover to the third endpoint: %v", err)
	}
	if head < 1 || ch.Client.Endpoint() != config.Redact(base.RPCURL) {
		t.Fatalf("head %d from %s, want the base node %s", head, ch.Client.Endpoint(), base.RPCURL)
	}
	// the next calls stay on the working endpoint without retrying the failed ones
	before := ch.Client.Requests.Load()
	if _, err := ch.HeadNumber(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ch.Client.Requests.Load() - before; got != 1 {
		t.Errorf("a call on a verified endpoint took %d requests", got)
	}

	// every endpoint down: an error that says so, not a hang, and never the URL's secret path
	dead, _ := NewChain(payoutv1.NetworkBase, func() config.Network { d := n; d.RPC = []string{"http://127.0.0.1:1/v2/SECRETKEY"}; return d }())
	_, err = dead.HeadNumber(ctx)
	if err == nil {
		t.Fatal("a dead endpoint answered")
	}
	if strings.Contains(err.Error(), "SECRETKEY") || !strings.Contains(err.Error(), "http://127.0.0.1:1") {
		t.Fatalf("error text %q", err)
	}
	if _, err := dead.HeadNumber(ctx); !errors.Is(err, ErrNoEndpoint) || strings.Contains(err.Error(), "SECRETKEY") {
		t.Fatalf("while backing off: %v, want ErrNoEndpoint", err)
	}
}

// refundWalletOnAnvil is a Base dev chain that mines on request, read at depth, and the refund
// key's USDC wallet on it.
func refundWalletOnAnvil(t *testing.T, depth int64) (*devchain.Set, *devchain.Chain, *Chain, *Wallet) {
	t.Helper()
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	ch, err := NewChain(payoutv1.NetworkBase, chaintest.Network(c, depth))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWallet(ch, payoutv1.TokenUSDC, common.Bytes2Hex(crypto.FromECDSA(set.RefundKey)))
	if err != nil {
		t.Fatal(err)
	}
	return set, c, ch, w
}

func TestWalletSignsOnceBroadcastsTwice(t *testing.T) {
	set, c, ch, w := refundWalletOnAnvil(t, 2)
	if w.Address() != Hex(crypto.PubkeyToAddress(set.RefundKey.PublicKey)) {
		t.Fatal(w.Address())
	}
	before, _ := c.BalanceOf(ctx, devchain.USDC, stranger)
	nonce, err := w.PendingNonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := w.SignTransfer(ctx, Hex(stranger), big.NewInt(12_345_678), nonce)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := w.Broadcast(ctx, signed.Raw); err != nil {
			t.Fatalf("broadcast of the same bytes: %v", err)
		}
	}
	chaintest.Mine(t, c, 1)
	if err := w.Broadcast(ctx, signed.Raw); err == nil {
		t.Log("a node accepted a mined transaction again")
	}
	chaintest.Mine(t, c, 1)
	obs, err := w.Receipt(ctx, signed.Hash.Hex())
	if err != nil || !obs.Found || obs.Reverted || obs.Confirmations != 2 || obs.Required != 2 {
		t.Fatalf("receipt: %+v, err %v", obs, err)
	}
	after, _ := c.BalanceOf(ctx, devchain.USDC, stranger)
	if got := new(big.Int).Sub(after, before).Int64(); got != 12_345_678 {
		t.Fatalf("the recipient got %d", got)
	}
	next, _ := w.PendingNonce(ctx)
	if next != nonce+1 {
		t.Fatalf("nonce %d → %d", nonce, next)
	}

	// more than the wallet holds: nothing signed, a message naming the shortfall
	_, err = w.SignTransfer(ctx, Hex(stranger), new(big.Int).Mul(devchain.MintAmount, big.NewInt(10)), next)
	if !errors.Is(err, ErrInsufficientFunds) || !strings.Contains(err.Error(), w.Address()) {
		t.Fatalf("SignTransfer beyond the balance: %v", err)
	}
	empty, _ := NewWallet(ch, payoutv1.TokenUSDC, common.Bytes2Hex(crypto.FromECDSA(chaintest.EmptyKey)))
	if _, err := empty.SignTransfer(ctx, Hex(stranger), big.NewInt(1), 0); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("SignTransfer from an empty wallet: %v", err)
	}
	if _, err := NewWallet(ch, payoutv1.TokenUSDC, "not a key"); err == nil || strings.Contains(err.Error(), "not a key") {
		t.Fatalf("NewWallet with a bad key: %v", err)
	}
}

// TestTokenBalances: the balances of more owners than one batch takes, in their order, as the
// token contract answers them, after a transfer moved some.
func TestTokenBalances(t *testing.T) {
	_, c, ch, w := refundWalletOnAnvil(t, 1)
	fresh := common.BytesToAddress(crypto.Keccak256([]byte("ledger")))
	nonce, err := w.PendingNonce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := w.SignTransfer(ctx, Hex(fresh), big.NewInt(7_000_001), nonce)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Broadcast(ctx, signed.Raw); err != nil {
		t.Fatal(err)
	}
	chaintest.Mine(t, c, 1)
	owners := make([]string, 0, 150)
	for i := range 148 {
		owners = append(owners, Hex(common.BigToAddress(big.NewInt(int64(1000+i)))))
	}
	owners = append(owners, Hex(fresh), w.Address())
	got, err := ch.TokenBalances(ctx, payoutv1.TokenUSDC, owners)
	if err != nil {
		t.Fatal(err)
	}
	if got[148].Int64() != 7_000_001 {
		t.Errorf("the fresh address holds %s, want 7000001", got[148])
	}
	want, _ := c.BalanceOf(ctx, devchain.USDC, common.HexToAddress(w.Address()))
	if got[149].Cmp(want) != 0 {
		t.Errorf("the wallet holds %s, the contract says %s", got[149], want)
	}
	for i, b := range got[:148] {
		if b.Sign() != 0 {
			t.Errorf("owner %d holds %s", i, b)
		}
	}
	if _, err := ch.TokenBalances(ctx, payoutv1.Token("dai"), owners[:1]); err == nil {
		t.Error("a token the network does not configure was read")
	}
}
