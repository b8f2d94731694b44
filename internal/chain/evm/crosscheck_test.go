package evm

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// chainOf is c as a network of the given endpoints, at depth.
func chainOf(t *testing.T, c *devchain.Chain, depth int64, urls ...string) *Chain {
	t.Helper()
	n := chaintest.Network(c, depth)
	n.RPC = urls
	ch, err := NewChain(payoutv1.Network(c.Network), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Client.Close)
	return ch
}

// TestReceiptOfAnotherTransactionIsNotBelieved: an endpoint answers eth_getTransactionReceipt(h)
// with the receipt of another transaction, one that pays the platform address. Alone, the lookup
// fails (before, it reported the other transaction's payment as h's); with a second endpoint,
// the lookup moves to it and reports h's own facts.
func TestReceiptOfAnotherTransactionIsNotBelieved(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Ethereum)
	c := set.Chains[devchain.Ethereum]
	chaintest.ManualMining(t, c)
	liar := chaintest.NewRPCProxy(t, c.RPCURL)
	asked, _ := chaintest.Send(t, c, set.FundedKey, devchain.USDC, stranger, 1_000_000)
	paying, _ := chaintest.Send(t, c, set.FundedKey, devchain.USDC, chaintest.PlatformAddress, 25_000_000)
	chaintest.Mine(t, c, 3)
	liar.SwapReceipt(asked.Hash(), paying.Hash())

	alone := chainOf(t, c, 3, liar.URL)
	obs, err := alone.LookupTx(ctx, payoutv1.NetworkEthereum, asked.Hash().Hex())
	if err == nil {
		t.Fatalf("the receipt of %s was believed to be %s's: %+v", paying.Hash().Hex(), asked.Hash().Hex(), obs.Transfers)
	}
	if !strings.Contains(err.Error(), "answered the receipt of "+paying.Hash().Hex()) {
		t.Fatalf("error %q does not say which receipt was answered", err)
	}

	both := chainOf(t, c, 3, liar.URL, c.RPCURL)
	obs, err = both.LookupTx(ctx, payoutv1.NetworkEthereum, asked.Hash().Hex())
	if err != nil || !obs.AtDepth() || obs.TxHash != strings.ToLower(asked.Hash().Hex()) || len(obs.Transfers) != 1 ||
		obs.Transfers[0].To != Hex(stranger) || obs.Transfers[0].Amount.Int64() != 1_000_000 {
		t.Fatalf("lookup through the second endpoint: %+v (%v)", obs, err)
	}
	if both.Client.Endpoint() != config.Redact(c.RPCURL) {
		t.Fatalf("the lying endpoint %s is still in use", both.Client.Endpoint())
	}
}

// TestDroppedLogsAreCaughtByASecondEndpoint: the first of two endpoints answers a range's
// eth_getLogs without the deposit in it. The step fails with ErrDisagreement, naming both
// endpoints, and the cursor stays before the deposit (before, the empty answer moved it past
// for good); once the endpoint answers the logs again the deposit is reported. With one
// endpoint a step costs what it did (3 requests); with two, one more, to the second.
func TestDroppedLogsAreCaughtByASecondEndpoint(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	first, second := chaintest.NewRPCProxy(t, c.RPCURL), chaintest.NewRPCProxy(t, c.RPCURL)

	single, _ := newScanner(t, c, 2)
	cur := initCursor(t, single)
	chaintest.Mine(t, c, 1)
	before := single.Chain.Client.Requests.Load()
	st, err := single.Step(ctx, cur, chaintest.Head(t, c))
	if err != nil || st.To != st.From {
		t.Fatalf("one block with one endpoint: %+v (%v)", st, err)
	}
	if got := single.Chain.Client.Requests.Load() - before; got != 3 {
		t.Fatalf("a step with one endpoint took %d requests, want 3", got)
	}

	s := &Scanner{Chain: chainOf(t, c, 2, first.URL, second.URL), Book: single.Book}
	results := crossResults(s.Chain)
	cur = initCursor(t, s)
	_, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, depositAddr, 25_000_000)
	chaintest.Mine(t, c, 1) // at depth 2
	first.DropLogs(uint64(block), uint64(block))
	head := chaintest.Head(t, c)
	for err == nil && cur.Block < block {
		if st, err = s.Step(ctx, cur, head); err == nil {
			cur = st.Cursor
		}
	}
	if !errors.Is(err, ErrDisagreement) || cur.Block >= block {
		t.Fatalf("a range whose deposit one endpoint dropped: %v, cursor %d (the deposit is in %d)", err, cur.Block, block)
	}
	for _, want := range []string{"0 token transfers on " + config.Redact(first.URL), "1 on " + config.Redact(second.URL), "25000000 base units from"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the disagreement %q does not say %q", err, want)
		}
	}
	results.want(t, CrossDisagreed)

	first.KeepLogs()
	total0, _ := second.Requests("")
	steps, _ := scanToHead(t, s, cur)
	if n := deposits(steps); n != 1 {
		t.Fatalf("%d deposits once the endpoints agree, want 1", n)
	}
	results.want(t, CrossAgreed)
	scanned := 0
	for _, st := range steps {
		if st.To >= st.From {
			scanned++
		}
	}
	if total, _ := second.Requests(""); total-total0 != scanned {
		t.Fatalf("the second endpoint served %d requests for %d ranges, want one each", total-total0, scanned)
	}
}

// TestReceiptWithoutItsLogsIsNotBelieved: at depth, a v2 transaction's receipt from the first
// endpoint shows none of its token transfers (a payment judged as paying nothing fails its
// transfer); the second endpoint's receipt has them, and the lookup fails with ErrDisagreement.
// Below depth nothing is asked of the second endpoint.
func TestReceiptWithoutItsLogsIsNotBelieved(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Ethereum)
	c := set.Chains[devchain.Ethereum]
	chaintest.ManualMining(t, c)
	first, second := chaintest.NewRPCProxy(t, c.RPCURL), chaintest.NewRPCProxy(t, c.RPCURL)
	ch := chainOf(t, c, 3, first.URL, second.URL)
	results := crossResults(ch)
	tx, block := chaintest.Send(t, c, set.FundedKey, devchain.USDC, chaintest.PlatformAddress, 25_000_000)
	first.DropLogs(uint64(block), uint64(block))
	if obs, err := ch.LookupTx(ctx, payoutv1.NetworkEthereum, tx.Hash().Hex()); err != nil || obs.AtDepth() {
		t.Fatalf("below depth: %+v (%v)", obs, err)
	}
	if total, _ := second.Requests(""); total != 0 {
		t.Fatalf("a lookup below depth asked the second endpoint %d times", total)
	}
	chaintest.Mine(t, c, 2)
	obs, err := ch.LookupTx(ctx, payoutv1.NetworkEthereum, tx.Hash().Hex())
	if !errors.Is(err, ErrDisagreement) {
		t.Fatalf("a receipt without its transfer at depth was believed: %+v (%v)", obs, err)
	}
	results.want(t, CrossDisagreed)
	first.KeepLogs()
	obs, err = ch.LookupTx(ctx, payoutv1.NetworkEthereum, tx.Hash().Hex())
	if err != nil || !obs.AtDepth() || len(obs.Transfers) != 1 || obs.Transfers[0].Amount.Int64() != 25_000_000 {
		t.Fatalf("once the endpoints agree: %+v (%v)", obs, err)
	}
	results.want(t, CrossAgreed)
}

// TestTokenOf18DecimalsCreditsNothing: a contract whose decimals() answers 18 is configured as
// USDC. Its transfer of 25,000,000 base units (25 millionths of a millionth of a token) is not
// reported as a v2 payment (before, it read as 25 USD), no refund is signed in it, and the
// error names the token and its decimals. A configured code hash is checked too, and the
// check costs one request once.
func TestTokenOf18DecimalsCreditsNothing(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	wide := chaintest.WideToken(t, c)
	n := chaintest.Network(c, 1)
	n.Tokens[payoutv1.TokenUSDC].Contract = wide.Hex()
	ch, err := NewChain(payoutv1.NetworkBase, n)
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := chaintest.SendWide(t, c, set.FundedKey, chaintest.PlatformAddress, 25_000_000)
	obs, err := ch.LookupTx(ctx, payoutv1.NetworkBase, tx.Hash().Hex())
	if err == nil {
		t.Fatalf("a transfer of an 18-decimal token was reported: %+v", obs.Transfers)
	}
	if !strings.Contains(err.Error(), "decimals() answers 18") || !strings.Contains(err.Error(), "token usdc ("+Hex(wide)+")") {
		t.Fatalf("error %q does not name the token and its decimals", err)
	}
	w, err := NewWallet(ch, payoutv1.TokenUSDC, common.Bytes2Hex(crypto.FromECDSA(set.RefundKey)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.SignTransfer(ctx, Hex(stranger), big.NewInt(1_000_000), 0); err == nil || !strings.Contains(err.Error(), "decimals() answers 18") {
		t.Fatalf("a refund in an 18-decimal token was signed (%v)", err)
	}

	// the real tokens pass, with their code hash when one is configured; a wrong hash does not
	code, err := c.Client.CodeAt(ctx, c.Tokens[devchain.USDC], nil)
	if err != nil {
		t.Fatal(err)
	}
	good := chaintest.Network(c, 1)
	good.Tokens[payoutv1.TokenUSDC].CodeHash = crypto.Keccak256Hash(code).Hex()
	ch = chainOf(t, c, 1, c.RPCURL)
	ch.Config = good
	if _, err := ch.HeadNumber(ctx); err != nil { // the endpoint is verified
		t.Fatal(err)
	}
	before := ch.Client.Requests.Load()
	for range 2 {
		if err := ch.CheckTokens(ctx); err != nil {
			t.Fatalf("the dev tokens with their code hash: %v", err)
		}
	}
	if got := ch.Client.Requests.Load() - before; got != 1 {
		t.Fatalf("checking the tokens twice took %d requests, want 1", got)
	}
	wrong := chainOf(t, c, 1, c.RPCURL)
	wrong.Config.Tokens[payoutv1.TokenUSDC].CodeHash = crypto.Keccak256Hash(append(code, 0)).Hex()
	if err := wrong.CheckTokens(ctx); err == nil || !strings.Contains(err.Error(), "token usdc") || !strings.Contains(err.Error(), "the configured codeHash") {
		t.Fatalf("usdc with another code hash: %v", err)
	}
	n.Tokens[payoutv1.TokenUSDC].Contract = stranger.Hex()
	empty, err := NewChain(payoutv1.NetworkBase, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := empty.CheckTokens(ctx); err == nil || !strings.Contains(err.Error(), "holds no contract") {
		t.Fatalf("a token at an address without code: %v", err)
	}
}

// TestBlockAt finds the newest block at or before a time by its headers, in a handful of
// requests.
func TestBlockAt(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	ch := chainOf(t, c, 1, c.RPCURL)
	// 300 blocks 10 s apart after the chain's own
	start := chaintest.Head(t, c)
	if err := c.RPC.CallContext(ctx, nil, "anvil_mine", "0x12c", "0xa"); err != nil {
		t.Fatal(err)
	}
	head := chaintest.Head(t, c)
	timeOf := func(n int64) time.Time {
		h, err := c.Client.HeaderByNumber(ctx, big.NewInt(n))
		if err != nil {
			t.Fatal(err)
		}
		return time.Unix(int64(h.Time), 0)
	}
	for _, n := range []int64{0, start + 1, start + 17, start + 150, head - 1, head} {
		at := timeOf(n)
		before := ch.Client.Requests.Load()
		got, err := ch.BlockAt(ctx, at, head)
		if err != nil {
			t.Fatal(err)
		}
		if requests := ch.Client.Requests.Load() - before; requests > 4 {
			t.Errorf("BlockAt over %d blocks took %d requests", head, requests)
		}
		// the newest block of that time (anvil's first blocks may share a second)
		if got < n || !timeOf(got).Equal(at) || (got < head && !timeOf(got+1).After(at)) {
			t.Errorf("BlockAt(time of block %d) = %d", n, got)
		}
		if n > start+1 {
			if got, err := ch.BlockAt(ctx, at.Add(-time.Second), head); err != nil || got != n-1 {
				t.Errorf("BlockAt(a second before block %d) = %d (%v), want %d", n, got, err, n-1)
			}
		}
	}
	if got, err := ch.BlockAt(ctx, timeOf(0).Add(-time.Hour), head); err != nil || got != 0 {
		t.Errorf("BlockAt before the genesis = %d (%v), want 0", got, err)
	}
	if got, err := ch.BlockAt(ctx, timeOf(head).Add(time.Hour), head); err != nil || got != head {
		t.Errorf("BlockAt after the head = %d (%v), want %d", got, err, head)
	}
}
