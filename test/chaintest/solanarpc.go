package chaintest

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"strconv"

	solanago "github.com/gagliardetto/solana-go"
)

// Solana addresses the tests use.
const (
	// SolanaUSDCMint is USDC's mint on Solana mainnet.
	SolanaUSDCMint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	// SolanaMainnetGenesis is mainnet-beta's genesis hash.
	SolanaMainnetGenesis = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"

	solanaTokenProgram = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	solanaATAProgram   = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
	solanaSystem       = "11111111111111111111111111111111"
	solanaComputeBudge = "ComputeBudget111111111111111111111111111111"
)

// SolanaAddress is a made-up Solana address (32 bytes, base58) named by seed.
func SolanaAddress(seed string) string {
	sum := sha256.Sum256([]byte("solana test address " + seed))
	return solanago.PublicKeyFromBytes(sum[:]).String()
}

// SolanaRPCTestServer stands in for a Solana RPC node (agave) in tests, because no validator
// can be installed here (neither solana-test-validator nor agave are in the registries this
// machine reaches). It answers the calls of the lookup and the watcher in the shapes of Solana's
// RPC documentation (solana-foundation/solana-com, apps/docs/content/docs/en/rpc/http/:
// getTransaction.mdx with its "JsonParsed" example, getSignatureStatuses.mdx, getBlock.mdx,
// getLatestBlockhash.mdx, getSlot.mdx, getHealth.mdx, getGenesisHash.mdx) and of agave's
// jsonParsed SPL Token parser (transaction-status/src/parse_token.rs: transfer and
// transferChecked), including the refusals a node gives (getHealth's -32005 "Node is behind by N
// slots", getBlock's -32004 "Block not available for slot N").
//
// Transactions are described by AddTx and built into full jsonParsed answers: the fee payer,
// token accounts (associated token accounts of their owners unless told otherwise), a compute
// budget instruction the parser does not parse, an optional createIdempotent of the
// destination's associated token account with its inner instructions, the transfer
// instructions, and the pre- and post-token balances with owners. Commitment is modelled by
// three slots (processed, confirmed, finalized) that Advance moves: a transaction is returned by
// getTransaction at a commitment once its slot has reached that commitment's slot, and its
// signature status says processed, confirmed (with the confirmed blocks on it) or finalized.
type SolanaRPCTestServer struct {
	URL string

	rpcServer                       // mu guards the fields below
	genesis                         string
	processed, confirmed, finalized uint64
	behind                          int
	txs                             map[string]*solanaTestTx
	seq                             uint64
}

type solanaTestTx struct {
	slot   uint64
	result map[string]any
}

// SolanaTokenTransfer is one SPL Token transfer of a test transaction.
type SolanaTokenTransfer struct {
	// From and To are the owners (wallet addresses) of the source and destination token
	// accounts; From signs.
	From, To string
	Mint     string
	Amount   uint64
	// Plain uses the Token program's transfer instruction (whose parsed info names no mint)
	// instead of transferChecked.
	Plain bool
	// CreateDestination creates To's associated token account in the same transaction, so it
	// has no pre-token balance.
	CreateDestination bool
	// ToAccount, when set, is the destination token account instead of To's associated token
	// account.
	ToAccount string
	// NoOwners leaves the owner out of the token balances, as in transactions recorded before
	// balances carried owners.
	NoOwners bool
}

// SolanaTestTx describes a transaction for AddTx.
type SolanaTestTx struct {
	Slot      uint64
	Transfers []SolanaTokenTransfer
	// Failed makes the transaction fail in its last instruction (meta.err an
	// InstructionError): it moved no tokens.
	Failed bool
}

// NewSolanaRPCTestServer starts a server of the cluster genesis, with the processed slot at
// 1000, confirmed at 998 and finalized at 966. It stops at the end of the test.
func NewSolanaRPCTestServer(tb interface {
	Helper()
	Cleanup(func())
}, genesis string) *SolanaRPCTestServer {
	tb.Helper()
	s := &SolanaRPCTestServer{genesis: genesis, processed: 1000, confirmed: 998, finalized: 966,
		txs: map[string]*solanaTestTx{}}
	s.URL = s.start(tb, s.handle)
	return s
}

// Slots are the newest processed, confirmed and finalized slots.
func (s *SolanaRPCTestServer) Slots() (processed, confirmed, finalized uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.processed, s.confirmed, s.finalized
}

// Advance moves the three slots by n.
func (s *SolanaRPCTestServer) Advance(n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.processed += n
	s.confirmed += n
	s.finalized += n
}

// SetBehind makes getHealth answer that the node is behind by n slots (0: healthy).
func (s *SolanaRPCTestServer) SetBehind(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behind = n
}

// Blockhash is the hash of the block of slot.
func (s *SolanaRPCTestServer) Blockhash(slot uint64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blockhash(slot)
}

func (s *SolanaRPCTestServer) blockhash(slot uint64) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s block %d", s.genesis, slot)))
	return solanago.HashFromBytes(sum[:]).String()
}

// SolanaBlockTime is the time of the block of slot, in Unix seconds (0.4 s a slot).
func SolanaBlockTime(slot uint64) int64 { return 1_700_000_000 + int64(slot)*2/5 }

// NewSignature is a fresh transaction signature the server does not know.
func (s *SolanaRPCTestServer) NewSignature() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newSignature()
}

func (s *SolanaRPCTestServer) newSignature() string {
	s.seq++
	sum := sha512.Sum512([]byte(fmt.Sprintf("%s signature %d", s.genesis, s.seq)))
	return solanago.SignatureFromBytes(sum[:]).String()
}

// AddTx adds a transaction and returns its signature.
func (s *SolanaRPCTestServer) AddTx(tx SolanaTestTx) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sig := s.newSignature()
	s.txs[sig] = &solanaTestTx{slot: tx.Slot, result: s.buildTx(sig, tx)}
	return sig
}

// buildTx builds getTransaction's jsonParsed answer of tx.
func (s *SolanaRPCTestServer) buildTx(sig string, tx SolanaTestTx) map[string]any {
	type key struct {
		pubkey           string
		signer, writable bool
	}
	var keys []key
	index := map[string]int{}
	add := func(pubkey string, signer, writable bool) int {
		if i, ok := index[pubkey]; ok {
			keys[i].writable = keys[i].writable || writable
			return i
		}
		index[pubkey] = len(keys)
		keys = append(keys, key{pubkey, signer, writable})
		return len(keys) - 1
	}
	ata := func(owner, mint string) string {
		a, _, err := solanago.FindAssociatedTokenAddress(solanago.MustPublicKeyFromBase58(owner), solanago.MustPublicKeyFromBase58(mint))
		if err != nil {
			panic(err)
		}
		return a.String()
	}
	payer := tx.Transfers[0].From
	add(payer, true, true)

	type balance struct {
		mint, owner string
		pre         *uint64
		post        uint64
		noOwner     bool
	}
	balances := map[string]*balance{}
	account := func(acct, mint, owner string, pre *uint64, noOwner bool) *balance {
		b := balances[acct]
		if b == nil {
			b = &balance{mint: mint, owner: owner, pre: pre, noOwner: noOwner}
			if pre != nil {
				b.post = *pre
			}
			balances[acct] = b
		}
		return b
	}
	var instructions []map[string]any
	inner := []map[string]any{}
	// a compute budget instruction: no jsonParsed parser, so it comes as programId, accounts, data
	instructions = append(instructions, map[string]any{"accounts": []string{}, "data": "3DTZbgwsozUF", "programId": solanaComputeBudge, "stackHeight": 1})
	for _, t := range tx.Transfers {
		src := ata(t.From, t.Mint)
		add(t.From, true, false)
		add(src, false, true)
		dst := t.ToAccount
		if dst == "" {
			dst = ata(t.To, t.Mint)
		}
		add(dst, false, true)
		srcStart := uint64(1_000_000_000_000)
		sb := account(src, t.Mint, t.From, &srcStart, t.NoOwners)
		var dstPre *uint64
		if !t.CreateDestination {
			v := uint64(5_000_000)
			dstPre = &v
		}
		db := account(dst, t.Mint, t.To, dstPre, t.NoOwners)
		if t.CreateDestination {
			i := len(instructions)
			instructions = append(instructions, map[string]any{
				"parsed": map[string]any{"info": map[string]any{
					"account": dst, "mint": t.Mint, "source": payer, "systemProgram": solanaSystem,
					"tokenProgram": solanaTokenProgram, "wallet": t.To,
				}, "type": "createIdempotent"},
				"program": "spl-associated-token-account", "programId": solanaATAProgram, "stackHeight": 1,
			})
			inner = append(inner, map[string]any{"index": i, "instructions": []map[string]any{
				{"parsed": map[string]any{"info": map[string]any{"extensionTypes": []string{"immutableOwner"}, "mint": t.Mint}, "type": "getAccountDataSize"},
					"program": "spl-token", "programId": solanaTokenProgram, "stackHeight": 2},
				{"parsed": map[string]any{"info": map[string]any{"lamports": 2039280, "newAccount": dst, "owner": solanaTokenProgram, "source": payer, "space": 165}, "type": "createAccount"},
					"program": "system", "programId": solanaSystem, "stackHeight": 2},
				{"parsed": map[string]any{"info": map[string]any{"account": dst}, "type": "initializeImmutableOwner"},
					"program": "spl-token", "programId": solanaTokenProgram, "stackHeight": 2},
				{"parsed": map[string]any{"info": map[string]any{"account": dst, "mint": t.Mint, "owner": t.To}, "type": "initializeAccount3"},
					"program": "spl-token", "programId": solanaTokenProgram, "stackHeight": 2},
			}})
		}
		amount := strconv.FormatUint(t.Amount, 10)
		var parsed map[string]any
		if t.Plain {
			parsed = map[string]any{"info": map[string]any{"amount": amount, "authority": t.From, "destination": dst, "source": src}, "type": "transfer"}
		} else {
			parsed = map[string]any{"info": map[string]any{"authority": t.From, "destination": dst, "mint": t.Mint, "source": src,
				"tokenAmount": uiAmount(t.Amount)}, "type": "transferChecked"}
		}
		instructions = append(instructions, map[string]any{"parsed": parsed, "program": "spl-token", "programId": solanaTokenProgram, "stackHeight": 1})
		if !tx.Failed {
			sb.post -= t.Amount
			db.post += t.Amount
		}
	}
	for _, t := range tx.Transfers {
		add(t.Mint, false, false)
	}
	add(solanaTokenProgram, false, false)
	add(solanaATAProgram, false, false)
	add(solanaSystem, false, false)
	add(solanaComputeBudge, false, false)

	accountKeys := make([]map[string]any, len(keys))
	pre := make([]uint64, len(keys))
	post := make([]uint64, len(keys))
	for i, k := range keys {
		accountKeys[i] = map[string]any{"pubkey": k.pubkey, "signer": k.signer, "source": "transaction", "writable": k.writable}
		pre[i], post[i] = 2_039_280, 2_039_280
	}
	pre[0], post[0] = 998_528_400, 998_528_400-5_000
	var preTok, postTok []map[string]any
	for _, k := range keys {
		b := balances[k.pubkey]
		if b == nil {
			continue
		}
		entry := func(units uint64) map[string]any {
			e := map[string]any{"accountIndex": index[k.pubkey], "mint": b.mint, "programId": solanaTokenProgram, "uiTokenAmount": uiAmount(units)}
			if !b.noOwner {
				e["owner"] = b.owner
			}
			return e
		}
		if b.pre != nil {
			preTok = append(preTok, entry(*b.pre))
		}
		postTok = append(postTok, entry(b.post))
	}
	var errValue any
	status := map[string]any{"Ok": nil}
	logs := []string{"Program " + solanaComputeBudge + " invoke [1]", "Program " + solanaComputeBudge + " success"}
	if tx.Failed {
		errValue = map[string]any{"InstructionError": []any{len(instructions) - 1, map[string]any{"Custom": 1}}}
		status = map[string]any{"Err": errValue}
		logs = append(logs, "Program "+solanaTokenProgram+" invoke [1]", "Program log: Error: insufficient funds",
			"Program "+solanaTokenProgram+" failed: custom program error: 0x1")
	} else {
		logs = append(logs, "Program "+solanaTokenProgram+" invoke [1]", "Program log: Instruction: TransferChecked",
			"Program "+solanaTokenProgram+" success")
	}
	return map[string]any{
		"blockTime": SolanaBlockTime(tx.Slot),
		"meta": map[string]any{
			"computeUnitsConsumed": 6200, "costUnits": 7700, "err": errValue, "fee": 5000,
			"innerInstructions": inner, "loadedAddresses": map[string]any{"readonly": []string{}, "writable": []string{}},
			"logMessages": logs, "postBalances": post, "postTokenBalances": nonNil(postTok), "preBalances": pre,
			"preTokenBalances": nonNil(preTok), "rewards": []any{}, "status": status,
		},
		"slot": tx.Slot,
		"transaction": map[string]any{
			"message": map[string]any{
				"accountKeys": accountKeys, "addressTableLookups": []any{}, "instructions": instructions,
				"recentBlockhash": s.blockhash(tx.Slot - 3),
			},
			"signatures": []string{sig},
		},
		"version": 0,
	}
}

func nonNil(l []map[string]any) []map[string]any {
	if l == nil {
		return []map[string]any{}
	}
	return l
}

// uiAmount is a UiTokenAmount of a 6-decimal mint.
func uiAmount(units uint64) map[string]any {
	ui := float64(units) / 1e6
	s := strconv.FormatFloat(ui, 'f', -1, 64)
	return map[string]any{"amount": strconv.FormatUint(units, 10), "decimals": 6, "uiAmount": ui, "uiAmountString": s}
}

// handle answers one request (no batches: the Solana client sends none).
func (s *SolanaRPCTestServer) handle(body []byte) any {
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{Code: -32700, Message: "Parse error"}}
	}
	s.calls[req.Method]++
	id := req.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	result, rerr := s.dispatch(req)
	if rerr != nil {
		return map[string]any{"jsonrpc": "2.0", "id": id, "error": rerr}
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
}

// reqConfig reads a request's configuration object at position i (absent: empty).
func reqConfig(req rpcRequest, i int) map[string]any {
	out := map[string]any{}
	if len(req.Params) > i {
		_ = json.Unmarshal(req.Params[i], &out)
	}
	return out
}

// slotAt is the newest slot at a commitment (finalized when none is given, as agave does).
func (s *SolanaRPCTestServer) slotAt(commitment any) (uint64, *rpcError) {
	switch commitment {
	case nil, "finalized":
		return s.finalized, nil
	case "confirmed":
		return s.confirmed, nil
	case "processed":
		return s.processed, nil
	}
	return 0, &rpcError{Code: -32602, Message: fmt.Sprintf("Invalid params: unknown variant `%v`", commitment)}
}

func (s *SolanaRPCTestServer) context(slot uint64) map[string]any {
	return map[string]any{"apiVersion": "2.2.14", "slot": slot}
}

func (s *SolanaRPCTestServer) dispatch(req rpcRequest) (any, *rpcError) {
	switch req.Method {
	case "getGenesisHash":
		return s.genesis, nil
	case "getHealth":
		if s.behind > 0 {
			return nil, &rpcError{Code: -32005, Message: fmt.Sprintf("Node is behind by %d slots", s.behind), Data: map[string]any{"numSlotsBehind": s.behind}}
		}
		return "ok", nil
	case "getSlot":
		return s.slotAt(reqConfig(req, 0)["commitment"])
	case "getLatestBlockhash":
		slot, err := s.slotAt(reqConfig(req, 0)["commitment"])
		if err != nil {
			return nil, err
		}
		return map[string]any{"context": s.context(slot), "value": map[string]any{"blockhash": s.blockhash(slot), "lastValidBlockHeight": slot + 150}}, nil
	case "getTransaction":
		var sig string
		if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &sig) != nil {
			return nil, &rpcError{Code: -32602, Message: "Invalid params: invalid type"}
		}
		cfg := reqConfig(req, 1)
		if cfg["encoding"] != "jsonParsed" {
			return nil, &rpcError{Code: -32602, Message: "this test server answers jsonParsed only"}
		}
		if cfg["commitment"] == "processed" {
			return nil, &rpcError{Code: -32602, Message: "Method does not support commitment below `confirmed`"}
		}
		if v, ok := cfg["maxSupportedTransactionVersion"].(float64); !ok || v != 0 {
			return nil, &rpcError{Code: -32015, Message: "Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0"}
		}
		upTo, err := s.slotAt(cfg["commitment"])
		if err != nil {
			return nil, err
		}
		tx := s.txs[sig]
		if tx == nil || tx.slot > upTo {
			return nil, nil
		}
		return tx.result, nil
	case "getSignatureStatuses":
		var sigs []string
		if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &sigs) != nil {
			return nil, &rpcError{Code: -32602, Message: "Invalid params: invalid type"}
		}
		history, _ := reqConfig(req, 1)["searchTransactionHistory"].(bool)
		values := make([]any, len(sigs))
		for i, sig := range sigs {
			tx := s.txs[sig]
			if tx == nil || tx.slot > s.processed || (!history && tx.slot+300 < s.finalized) {
				continue // unknown, or out of the recent status cache
			}
			meta := tx.result["meta"].(map[string]any)
			st := map[string]any{"slot": tx.slot, "err": meta["err"], "status": meta["status"]}
			switch {
			case tx.slot <= s.finalized:
				st["confirmations"], st["confirmationStatus"] = nil, "finalized"
			case tx.slot <= s.confirmed:
				st["confirmations"], st["confirmationStatus"] = s.confirmed-tx.slot, "confirmed"
			default:
				st["confirmations"], st["confirmationStatus"] = 0, "processed"
			}
			values[i] = st
		}
		return map[string]any{"context": s.context(s.processed), "value": values}, nil
	case "getBlock":
		var slot uint64
		if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &slot) != nil {
			return nil, &rpcError{Code: -32602, Message: "Invalid params: invalid type"}
		}
		cfg := reqConfig(req, 1)
		upTo, err := s.slotAt(cfg["commitment"])
		if err != nil {
			return nil, err
		}
		if slot > upTo {
			return nil, &rpcError{Code: -32004, Message: fmt.Sprintf("Block not available for slot %d", slot)}
		}
		block := map[string]any{
			"blockHeight": slot - 10, "blockTime": SolanaBlockTime(slot), "blockhash": s.blockhash(slot),
			"parentSlot": slot - 1, "previousBlockhash": s.blockhash(slot - 1),
		}
		if cfg["transactionDetails"] != "none" {
			return nil, &rpcError{Code: -32602, Message: "this test server answers transactionDetails none only"}
		}
		if cfg["rewards"] != false {
			block["rewards"] = []any{}
		}
		return block, nil
	}
	return nil, &rpcError{Code: -32601, Message: "Method not found"}
}
