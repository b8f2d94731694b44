package tron

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"k8s.io/apimachinery/pkg/types"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/evm"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// These tests run package evm's scanner and lookup on a Tron chain against
// chaintest.TronRPCTestServer, which answers in java-tron's documented JSON-RPC shapes: no Tron
// node can run here.

var ctx = context.Background()

var (
	watched = common.HexToAddress("0x1111111111111111111111111111111111111111")
	sender  = common.HexToAddress("0x2222222222222222222222222222222222222222")
	other   = common.HexToAddress("0x3333333333333333333333333333333333333333")
)

func network(url string, depth config.Depth) config.Network {
	n := config.Network{
		Kind: config.KindTron, RPC: []string{url}, ChainID: chaintest.TronMainnetChainID, Confirmations: depth,
		Tokens: map[payoutv1.Token]*config.Token{payoutv1.TokenUSDT: {Contract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"}},
	}
	n.PollInterval.Duration = 50 * time.Millisecond
	return n.WithDefaults()
}

func newScanner(t *testing.T, srv *chaintest.TronRPCTestServer, depth config.Depth) (*evm.Scanner, *chaintest.Book) {
	t.Helper()
	ch, err := NewChain(payoutv1.NetworkTron, network(srv.URL, depth))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Client.Close)
	book := &chaintest.Book{}
	book.Add(payoutv1.NetworkTron, chain.TronAddress(watched), types.NamespacedName{Namespace: "ns", Name: "0123456789abcdef01234567"})
	return &evm.Scanner{Chain: ch, Book: book}, book
}

// scanTo runs steps until the cursor has caught up with head; it returns the deposits found.
func scanTo(t *testing.T, s *evm.Scanner, cur evm.Cursor, head int64) (evm.Cursor, []chain.DepositObserved, []*evm.Reorg) {
	t.Helper()
	var deps []chain.DepositObserved
	var reorgs []*evm.Reorg
	for range 100 {
		st, err := s.Step(ctx, cur, head)
		if err != nil {
			t.Fatal(err)
		}
		deps = append(deps, st.Deposits...)
		if st.Reorg != nil {
			reorgs = append(reorgs, st.Reorg)
		}
		cur = st.Cursor
		if st.CaughtUp() {
			return cur, deps, reorgs
		}
	}
	t.Fatal("the scanner did not catch up in 100 steps")
	return cur, nil, nil
}

func TestSpelling(t *testing.T) {
	if got := Spelling.Address(chaintest.TronUSDT); got != "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t" {
		t.Errorf("Address = %s", got)
	}
	a, err := Spelling.ParseAddress("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
	if err != nil || a != chaintest.TronUSDT {
		t.Errorf("ParseAddress = %s, %v", a.Hex(), err)
	}
	if _, err := Spelling.ParseAddress("0xa614f803b6fd780986a42c78ec9c7f77e6ded13c"); err == nil {
		t.Error("a configured Tron contract in 0x form is refused (the configuration validates Base58Check)")
	}
	// a Nile testnet transaction id of TRON's eth_getLogs documentation
	const id = "01b4cde4197b9d1a1ff09ef5d2b1d939d3ec2401b3f002ebd0802c0f30a6e4ca"
	for _, s := range []string{id, "0x" + id, strings.ToUpper(id)} {
		h, err := ParseTxID(s)
		if err != nil || TxID(h) != id {
			t.Errorf("ParseTxID(%s) = %s, %v", s, TxID(h), err)
		}
	}
	if _, err := ParseTxID(id[:62]); err == nil {
		t.Error("62 hex digits accepted as a transaction id")
	}
	if _, err := NewChain(payoutv1.NetworkTron, config.Network{Kind: config.KindEVM, RPC: []string{"http://x"}}); err == nil {
		t.Error("an EVM network accepted as tron")
	}
}

// TestDepositAtDepthAndNotBefore: a TRC-20 Transfer to a watched address is reported once its
// block has the configured confirmations, spelled the Tron way; transfers to other addresses
// are counted but not reported.
func TestDepositAtDepthAndNotBefore(t *testing.T) {
	srv := chaintest.NewTronRPCTestServer(t, chaintest.TronMainnetChainID, 10)
	s, _ := newScanner(t, srv, 3)
	cur, err := s.InitCursor(ctx, srv.Head())
	if err != nil {
		t.Fatal(err)
	}
	cur, _, _ = scanTo(t, s, cur, srv.Head())

	tx := srv.Transfer(chaintest.TronUSDT, sender, watched, 25_000_000)
	srv.Transfer(chaintest.TronUSDT, sender, other, 1_000_000)
	srv.Transfer(common.HexToAddress("0x4444444444444444444444444444444444444444"), sender, watched, 7) // not a configured token
	srv.Mine(1)
	block := srv.Head()
	srv.Mine(1) // two confirmations of three
	cur, deps, _ := scanTo(t, s, cur, srv.Head())
	if len(deps) != 0 {
		t.Fatalf("a deposit with 2 of 3 confirmations was reported: %+v", deps)
	}
	if cur.Block != block-1 {
		t.Fatalf("cursor at %d, want %d (the last block at depth)", cur.Block, block-1)
	}
	srv.Mine(1)
	st, err := s.Step(ctx, cur, srv.Head())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Deposits) != 1 || st.Logs != 2 {
		t.Fatalf("step %+v", st)
	}
	d := st.Deposits[0]
	want := chain.DepositObserved{
		Network: payoutv1.NetworkTron, Token: payoutv1.TokenUSDT, Contract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
		To: chain.TronAddress(watched), From: chain.TronAddress(sender), TxHash: TxID(tx), LogIndex: 0,
		BlockNumber: block, BlockHash: TxID(srv.BlockHash(block)), BlockTime: time.Unix(1_700_000_000+3*block, 0).UTC(),
		Confirmations: 3, Transfer: types.NamespacedName{Namespace: "ns", Name: "0123456789abcdef01234567"},
	}
	if d.Amount == nil || d.Amount.Int64() != 25_000_000 {
		t.Fatalf("amount %v", d.Amount)
	}
	d.Amount = nil
	if d != want {
		t.Fatalf("deposit\n got %+v\nwant %+v", d, want)
	}
	if !strings.HasPrefix(d.To, "T") || strings.HasPrefix(d.TxHash, "0x") || len(d.BlockHash) != 64 {
		t.Errorf("not spelled the Tron way: %+v", d)
	}
}

// TestReorgRewinds: blocks the cursor scanned leave the chain; the next step rewinds to the
// newest remembered block still on it, and a deposit of a replaced block is never reported.
func TestReorgRewinds(t *testing.T) {
	srv := chaintest.NewTronRPCTestServer(t, chaintest.TronMainnetChainID, 5)
	s, _ := newScanner(t, srv, 1)
	cur, err := s.InitCursor(ctx, srv.Head())
	if err != nil {
		t.Fatal(err)
	}
	cur, _, _ = scanTo(t, s, cur, srv.Head())
	for range 3 { // three scanned blocks, each remembered
		srv.Mine(1)
		cur, _, _ = scanTo(t, s, cur, srv.Head())
	}
	before := cur
	srv.Transfer(chaintest.TronUSDT, sender, watched, 1)
	srv.Reorg(2) // replaces the newest two scanned blocks (the transfer was never mined)
	srv.Transfer(chaintest.TronUSDT, sender, watched, 5_000_000)
	srv.Mine(1)
	cur, deps, reorgs := scanTo(t, s, cur, srv.Head())
	if len(reorgs) != 1 || reorgs[0].From.Number != before.Block || reorgs[0].To.Number != before.Block-2 || reorgs[0].Deep {
		t.Fatalf("reorgs %+v (cursor was at %d)", reorgs, before.Block)
	}
	if len(deps) != 1 || deps[0].Amount.Int64() != 5_000_000 || deps[0].BlockNumber != srv.Head() {
		t.Fatalf("deposits after the reorg: %+v", deps)
	}
	if cur.Block != srv.Head() || cur.Hash != srv.BlockHash(srv.Head()) {
		t.Fatalf("cursor %d %s", cur.Block, cur.Hash)
	}
}

// TestRangeLimit: java-tron refuses eth_getLogs over its maxBlockRange; the scanner halves its
// range and catches up.
func TestRangeLimit(t *testing.T) {
	srv := chaintest.NewTronRPCTestServer(t, chaintest.TronMainnetChainID, 2)
	srv.SetMaxBlockRange(4)
	s, _ := newScanner(t, srv, 1)
	cur, err := s.InitCursor(ctx, srv.Head())
	if err != nil {
		t.Fatal(err)
	}
	srv.Mine(40)
	srv.Transfer(chaintest.TronUSDT, sender, watched, 3_000_000)
	srv.Mine(1)
	var refused int
	var deps []chain.DepositObserved
	for range 100 {
		st, err := s.Step(ctx, cur, srv.Head())
		if err != nil {
			if !evm.IsNodeError(err) || !strings.Contains(err.Error(), "exceed max block range: 4") {
				t.Fatal(err)
			}
			refused++
			continue
		}
		deps = append(deps, st.Deposits...)
		cur = st.Cursor
		if st.CaughtUp() {
			break
		}
	}
	if refused == 0 || len(deps) != 1 || cur.Block != srv.Head() {
		t.Fatalf("refused %d times, deposits %+v, cursor %d of %d", refused, deps, cur.Block, srv.Head())
	}
}

// TestLookupByTxID: the v2 lookup works on Tron too (v2 is not offered on Tron by the
// specification; the lookup is the same code).
func TestLookupByTxID(t *testing.T) {
	srv := chaintest.NewTronRPCTestServer(t, chaintest.TronMainnetChainID, 3)
	ch, err := NewChain(payoutv1.NetworkTron, network(srv.URL, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Client.Close()
	tx := srv.Transfer(chaintest.TronUSDT, sender, watched, 9_000_000)
	srv.Mine(2)
	obs, err := ch.LookupTx(ctx, payoutv1.NetworkTron, TxID(tx))
	if err != nil {
		t.Fatal(err)
	}
	if !obs.Found || obs.Reverted || !obs.AtDepth() || obs.TxHash != TxID(tx) || len(obs.Transfers) != 1 {
		t.Fatalf("observation %+v", obs)
	}
	tt := obs.Transfers[0]
	if tt.To != chain.TronAddress(watched) || tt.From != chain.TronAddress(sender) || tt.Contract != "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t" || tt.Amount.Int64() != 9_000_000 {
		t.Fatalf("transfer %+v", tt)
	}
	unknown, err := ch.LookupTx(ctx, payoutv1.NetworkTron, strings.Repeat("ab", 32))
	if err != nil || unknown.Found {
		t.Fatalf("unknown id: %+v, %v", unknown, err)
	}
}

// TestWrongChainRefused: an endpoint serving another Tron network (Nile) is not used.
func TestWrongChainRefused(t *testing.T) {
	srv := chaintest.NewTronRPCTestServer(t, 0xcd8690dc, 3)
	ch, err := NewChain(payoutv1.NetworkTron, network(srv.URL, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Client.Close()
	_, err = ch.HeadNumber(ctx)
	if err == nil || !strings.Contains(err.Error(), "chain id 3448148188, configured 728126428") {
		t.Fatalf("HeadNumber = %v", err)
	}
	if errors.Is(err, evm.ErrChainMoved) {
		t.Fatal("not a reorg")
	}
}

// TestTokenChecks: the TRC-20 contract must answer decimals() with 6, and, when a code hash is
// configured, have that code; a USDT contract that answers 18 credits nothing (its lookup is
// refused, naming the contract in Tron's spelling).
func TestTokenChecks(t *testing.T) {
	srv := chaintest.NewTronRPCTestServer(t, chaintest.TronMainnetChainID, 3)
	tx := srv.Transfer(chaintest.TronUSDT, sender, watched, 9_000_000)
	srv.Mine(2)
	n := network(srv.URL, 2)
	n.Tokens[payoutv1.TokenUSDT].CodeHash = crypto.Keccak256Hash(chaintest.TronTokenCode).Hex()
	ch, err := NewChain(payoutv1.NetworkTron, n)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Client.Close()
	if err := ch.CheckTokens(ctx); err != nil {
		t.Fatalf("USDT with 6 decimals and its code hash: %v", err)
	}

	srv.SetDecimals(chaintest.TronUSDT, 18)
	ch, err = NewChain(payoutv1.NetworkTron, network(srv.URL, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Client.Close()
	obs, err := ch.LookupTx(ctx, payoutv1.NetworkTron, TxID(tx))
	if err == nil || !strings.Contains(err.Error(), "token usdt (TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t): decimals() answers 18") {
		t.Fatalf("lookup in an 18-decimal USDT: %+v (%v)", obs, err)
	}
}
