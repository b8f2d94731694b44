package chaintest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/stablepay/payout-operator/internal/chain/tron/trontx"
)

// The wallet part of TronRPCTestServer: java-tron's HTTP API (tronprotocol/documentation-en,
// docs/api/http/: the account, stake-v2, smart-contract and transaction pages) as far as the
// sweeper uses it, served at HTTPURL: /wallet/triggersmartcontract, triggerconstantcontract,
// createaccount, delegateresource, undelegateresource, broadcasthex, gettransactioninfobyid,
// gettransactionbyid, getnowblock, getaccount, getaccountresource, getdelegatedresourcev2, and
// /walletsolidity/gettransactioninfobyid and getnowblock (the block tronSolidification below
// the head). Accounts hold TRX, TRC-20 balances of the contracts the server knows, staked TRX
// (Stake 2.0) and delegations; a broadcast transaction is checked (signature of its owner,
// expiration against the head block, duplicates, the owner's account and bandwidth) and executed
// in the next mined block, with Tron's fee schedule: bandwidth from delegated or staked
// bandwidth, else the free 600 a day, else burnt at 1,000 sun a byte; energy from delegated or
// staked energy, the rest burnt at 100 sun each (within the fee limit; a TRC-20 transfer uses
// TronTransferEnergy, or TronTransferEnergyFresh to an address holding none of the token);
// creating an account costs its payer 1 TRX. Resources do not recover over time here, and
// Reorg does not undo the wallet's state.

// Tron's figures the test node uses.
const (
	TronFreeBandwidth         = 600
	TronSunPerByte            = 1_000
	TronSunPerEnergy          = 100
	TronCreateAccountFee      = 1_000_000
	TronTransferEnergy        = 65_000
	TronTransferEnergyFresh   = 130_000
	tronTotalEnergyLimit      = 180_000_000_000
	tronTotalEnergyWeight     = 18_000_000_000 // TRX: 10 energy per staked TRX
	tronTotalNetLimit         = 43_200_000_000
	tronTotalNetWeight        = 43_200_000_000 // TRX: 1 bandwidth per staked TRX
	tronDefaultExpirationMill = 60_000
)

type tronAccount struct {
	trx                 int64
	frozen, acquired    [2]int64 // own staked TRX (sun) not delegated, and delegated to it, per resource
	energyUsed, netUsed int64
	freeNetUsed         int64
	delegatedTo         map[common.Address]*[2]int64
	txsByType           map[int]int
}

type tronTx struct {
	id          common.Hash
	raw         *trontx.Raw
	size        int64
	block       uint64
	included    bool
	result      string
	fee         int64
	energy, net int64
	log         *tronTestLog
}

type tronWallet struct {
	accounts map[common.Address]*tronAccount
	balances map[common.Address]map[common.Address]*big.Int // token → holder → units
	pool     []*tronTx
	txs      map[common.Hash]*tronTx
	drop     bool
	tamperTo *common.Address
	tamperBy int64
}

func (w *tronWallet) account(a common.Address) *tronAccount {
	if w.accounts[a] == nil {
		w.accounts[a] = &tronAccount{delegatedTo: map[common.Address]*[2]int64{}, txsByType: map[int]int{}}
	}
	return w.accounts[a]
}

func (w *tronWallet) exists(a common.Address) bool { return w.accounts[a] != nil }

func (w *tronWallet) balance(token, who common.Address) *big.Int {
	if w.balances[token] == nil {
		w.balances[token] = map[common.Address]*big.Int{}
	}
	if w.balances[token][who] == nil {
		w.balances[token][who] = new(big.Int)
	}
	return w.balances[token][who]
}

// SetAccount makes a an account holding trx sun and stakedEnergy and stakedBandwidth sun of
// staked TRX (Stake 2.0).
func (s *TronRPCTestServer) SetAccount(a common.Address, trx, stakedEnergy, stakedBandwidth int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	acc := s.wallet.account(a)
	acc.trx, acc.frozen[trontx.Energy], acc.frozen[trontx.Bandwidth] = trx, stakedEnergy, stakedBandwidth
}

// Exists reports whether a is an account (activated).
func (s *TronRPCTestServer) Exists(a common.Address) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wallet.exists(a)
}

// TRX is a's balance in sun.
func (s *TronRPCTestServer) TRX(a common.Address) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if acc := s.wallet.accounts[a]; acc != nil {
		return acc.trx
	}
	return 0
}

// TokenBalance is who's balance of the TRC-20 token.
func (s *TronRPCTestServer) TokenBalance(token, who common.Address) *big.Int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return new(big.Int).Set(s.wallet.balance(token, who))
}

// DelegatedTo is the staked TRX (sun) from delegates to to, per resource (trontx.Bandwidth,
// trontx.Energy).
func (s *TronRPCTestServer) DelegatedTo(from, to common.Address) [2]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if acc := s.wallet.accounts[from]; acc != nil && acc.delegatedTo[to] != nil {
		return *acc.delegatedTo[to]
	}
	return [2]int64{}
}

// Included is how many transactions of contract type typ (trontx.TriggerSmartContract, ...) that
// owner signed are in blocks.
func (s *TronRPCTestServer) Included(owner common.Address, typ int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, tx := range s.wallet.txs {
		if tx.included && tx.raw.Owner == owner && tx.raw.Type == typ {
			n++
		}
	}
	return n
}

// DropTransfers makes the node accept broadcast TRC-20 transfers (TriggerSmartContract) and
// never include them (drop = true), as a node that loses them from its pool.
func (s *TronRPCTestServer) DropTransfers(drop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wallet.drop = drop
}

// TamperTransfers makes /wallet/triggersmartcontract build a TRC-20 transfer to `to` (when not
// nil) and of the amount asked plus extra: a node that hands back another transaction than the
// one asked for.
func (s *TronRPCTestServer) TamperTransfers(to *common.Address, extra int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wallet.tamperTo, s.wallet.tamperBy = to, extra
}

// HeadTime is the head block's time, in Unix seconds.
func (s *TronRPCTestServer) HeadTime() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(s.blocks[len(s.blocks)-1].timestamp)
}

type walletError struct {
	Error string `json:"Error"`
}

func addr41(s string) (common.Address, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 21 || b[0] != 0x41 {
		return common.Address{}, false
	}
	return common.BytesToAddress(b[1:]), true
}

// walletRoute answers the HTTP API's paths (mu held).
func (s *TronRPCTestServer) walletRoute(path string, body []byte) (any, bool) {
	if !strings.HasPrefix(path, "/wallet/") && !strings.HasPrefix(path, "/walletsolidity/") {
		return nil, false
	}
	s.calls[path]++
	var in map[string]any
	if len(body) > 0 && json.Unmarshal(body, &in) != nil {
		return walletError{"class org.tron.core.exception.BadItemException : invalid json"}, true
	}
	str := func(k string) string { v, _ := in[k].(string); return v }
	num := func(k string) int64 { v, _ := in[k].(float64); return int64(v) }
	w := &s.wallet
	head := s.blocks[len(s.blocks)-1]
	solid := s.blocks[max(len(s.blocks)-1-tronSolidification, 0)]
	switch path {
	case "/wallet/getnowblock", "/walletsolidity/getnowblock":
		b := head
		if strings.HasPrefix(path, "/walletsolidity/") {
			b = solid
		}
		return map[string]any{"blockID": hex.EncodeToString(b.hash[:]),
			"block_header": map[string]any{"raw_data": map[string]any{"number": b.number, "timestamp": b.timestamp * 1000}}}, true
	case "/wallet/getaccount":
		a, ok := addr41(str("address"))
		if !ok {
			return walletError{"invalid address"}, true
		}
		acc := w.accounts[a]
		if acc == nil {
			return map[string]any{}, true
		}
		return map[string]any{"address": str("address"), "balance": acc.trx}, true
	case "/wallet/getaccountresource":
		a, ok := addr41(str("address"))
		if !ok {
			return walletError{"invalid address"}, true
		}
		out := map[string]any{"freeNetLimit": TronFreeBandwidth, "TotalNetLimit": tronTotalNetLimit, "TotalNetWeight": tronTotalNetWeight,
			"TotalEnergyLimit": tronTotalEnergyLimit, "TotalEnergyWeight": tronTotalEnergyWeight}
		if acc := w.accounts[a]; acc != nil {
			out["freeNetUsed"], out["NetUsed"], out["EnergyUsed"] = acc.freeNetUsed, acc.netUsed, acc.energyUsed
			out["NetLimit"], out["EnergyLimit"] = acc.limit(trontx.Bandwidth), acc.limit(trontx.Energy)
		}
		return out, true
	case "/wallet/getdelegatedresourcev2":
		from, ok1 := addr41(str("fromAddress"))
		to, ok2 := addr41(str("toAddress"))
		if !ok1 || !ok2 {
			return walletError{"invalid address"}, true
		}
		if acc := w.accounts[from]; acc != nil && acc.delegatedTo[to] != nil && (acc.delegatedTo[to][0] > 0 || acc.delegatedTo[to][1] > 0) {
			d := acc.delegatedTo[to]
			return map[string]any{"delegatedResource": []map[string]any{{"from": str("fromAddress"), "to": str("toAddress"),
				"frozen_balance_for_bandwidth": d[trontx.Bandwidth], "frozen_balance_for_energy": d[trontx.Energy]}}}, true
		}
		return map[string]any{}, true
	case "/wallet/triggerconstantcontract":
		owner, ok1 := addr41(str("owner_address"))
		contract, ok2 := addr41(str("contract_address"))
		param, err := hex.DecodeString(str("parameter"))
		if !ok1 || !ok2 || err != nil || len(param) < 32 {
			return walletError{"invalid parameters"}, true
		}
		if _, known := s.decimals[contract]; !known {
			return map[string]any{"result": map[string]any{"result": false, "message": hex.EncodeToString([]byte("No contract or not a valid smart contract"))}}, true
		}
		who := common.BytesToAddress(param[12:32])
		switch str("function_selector") {
		case "balanceOf(address)":
			return map[string]any{"result": map[string]any{"result": true}, "energy_used": 0,
				"constant_result": []string{hex.EncodeToString(common.BigToHash(w.balance(contract, who)).Bytes())}}, true
		case "transfer(address,uint256)":
			amount := new(big.Int).SetBytes(param[32:])
			if w.balance(contract, owner).Cmp(amount) < 0 {
				return map[string]any{"result": map[string]any{"result": true}, "energy_used": 400, "constant_result": []string{""}}, true
			}
			return map[string]any{"result": map[string]any{"result": true}, "energy_used": w.transferEnergy(contract, who),
				"constant_result": []string{hex.EncodeToString(common.BigToHash(big.NewInt(1)).Bytes())}}, true
		}
		return walletError{"unknown function"}, true
	case "/wallet/triggersmartcontract":
		owner, ok1 := addr41(str("owner_address"))
		contract, ok2 := addr41(str("contract_address"))
		param, err := hex.DecodeString(str("parameter"))
		if !ok1 || !ok2 || err != nil || len(param) != 64 || str("function_selector") != "transfer(address,uint256)" {
			return walletError{"invalid parameters"}, true
		}
		to, amount := common.BytesToAddress(param[12:32]), new(big.Int).SetBytes(param[32:])
		if w.tamperTo != nil {
			to = *w.tamperTo
		}
		amount.Add(amount, big.NewInt(w.tamperBy))
		var to20 [20]byte
		copy(to20[:], to[:])
		value := tronField(nil, 1, append([]byte{0x41}, owner[:]...))
		value = tronField(value, 2, append([]byte{0x41}, contract[:]...))
		value = tronField(value, 4, trontx.TransferData(to20, amount))
		tx := s.unsigned(trontx.TriggerSmartContract, "TriggerSmartContract", value, num("fee_limit"))
		return map[string]any{"result": map[string]any{"result": true}, "transaction": tx}, true
	case "/wallet/createaccount":
		owner, ok1 := addr41(str("owner_address"))
		account, ok2 := addr41(str("account_address"))
		switch {
		case !ok1 || !ok2:
			return walletError{"invalid address"}, true
		case !w.exists(owner):
			return walletError{"class org.tron.core.exception.ContractValidateException : Account[" + str("owner_address") + "] not exists"}, true
		case w.exists(account):
			return walletError{"class org.tron.core.exception.ContractValidateException : Account has existed"}, true
		}
		value := tronField(nil, 1, append([]byte{0x41}, owner[:]...))
		value = tronField(value, 2, append([]byte{0x41}, account[:]...))
		return s.unsigned(trontx.AccountCreateContract, "AccountCreateContract", value, 0), true
	case "/wallet/delegateresource", "/wallet/undelegateresource":
		owner, ok1 := addr41(str("owner_address"))
		to, ok2 := addr41(str("receiver_address"))
		res := trontx.Bandwidth
		if str("resource") == "ENERGY" {
			res = trontx.Energy
		}
		bal := num("balance")
		typ, name := trontx.DelegateResourceContract, "DelegateResourceContract"
		if path == "/wallet/undelegateresource" {
			typ, name = trontx.UnDelegateResourceContract, "UnDelegateResourceContract"
		}
		if !ok1 || !ok2 {
			return walletError{"invalid address"}, true
		}
		if err := w.validateDelegation(typ, owner, to, res, bal); err != "" {
			return walletError{"class org.tron.core.exception.ContractValidateException : " + err}, true
		}
		value := tronField(nil, 1, append([]byte{0x41}, owner[:]...))
		value = protowire.AppendTag(value, 2, protowire.VarintType)
		value = protowire.AppendVarint(value, uint64(res))
		value = protowire.AppendTag(value, 3, protowire.VarintType)
		value = protowire.AppendVarint(value, uint64(bal))
		value = tronField(value, 4, append([]byte{0x41}, to[:]...))
		return s.unsigned(typ, name, value, 0), true
	case "/wallet/broadcasthex":
		return s.broadcast(str("transaction")), true
	case "/wallet/gettransactioninfobyid", "/walletsolidity/gettransactioninfobyid":
		tx := w.txs[common.HexToHash(str("value"))]
		if tx == nil || !tx.included || (strings.HasPrefix(path, "/walletsolidity/") && tx.block > solid.number) {
			return map[string]any{}, true
		}
		return tx.info(s.blocks[tx.block]), true
	case "/wallet/gettransactionbyid":
		tx := w.txs[common.HexToHash(str("value"))]
		if tx == nil {
			return map[string]any{}, true
		}
		return map[string]any{"txID": hex.EncodeToString(tx.id[:])}, true
	}
	return walletError{"no such path " + path}, true
}

func tronField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// unsigned is a transaction as the node builds it: the head as reference block, expiring 60 s
// after the head's time.
func (s *TronRPCTestServer) unsigned(typ int, name string, value []byte, feeLimit int64) map[string]any {
	head := s.blocks[len(s.blocks)-1]
	param := tronField(nil, 1, []byte("type.googleapis.com/protocol."+name))
	param = tronField(param, 2, value)
	contract := protowire.AppendTag(nil, 1, protowire.VarintType)
	contract = protowire.AppendVarint(contract, uint64(typ))
	contract = tronField(contract, 2, param)
	raw := tronField(nil, 1, head.hash[6:8])
	raw = tronField(raw, 4, head.hash[8:16])
	raw = protowire.AppendTag(raw, 8, protowire.VarintType)
	raw = protowire.AppendVarint(raw, head.timestamp*1000+tronDefaultExpirationMill)
	raw = tronField(raw, 11, contract)
	raw = protowire.AppendTag(raw, 14, protowire.VarintType)
	raw = protowire.AppendVarint(raw, head.timestamp*1000)
	if feeLimit > 0 {
		raw = protowire.AppendTag(raw, 18, protowire.VarintType)
		raw = protowire.AppendVarint(raw, uint64(feeLimit))
	}
	id := trontx.TxIDOf(raw)
	return map[string]any{"visible": false, "txID": hex.EncodeToString(id[:]), "raw_data_hex": hex.EncodeToString(raw)}
}

func (a *tronAccount) limit(res int) int64 {
	stake := (a.frozen[res] + a.acquired[res]) / 1_000_000
	if res == trontx.Energy {
		return stake * tronTotalEnergyLimit / tronTotalEnergyWeight
	}
	return stake * tronTotalNetLimit / tronTotalNetWeight
}

func (w *tronWallet) transferEnergy(token, to common.Address) int64 {
	if w.balance(token, to).Sign() > 0 {
		return TronTransferEnergy
	}
	return TronTransferEnergyFresh
}

func (w *tronWallet) validateDelegation(typ int, owner, to common.Address, res int, bal int64) string {
	switch {
	case !w.exists(owner):
		return "Account does not exist"
	case typ == trontx.DelegateResourceContract && !w.exists(to):
		return fmt.Sprintf("Account [41%x] does not exist", to)
	case typ == trontx.DelegateResourceContract && bal < 1_000_000:
		return "delegateBalance must be greater than or equal to 1 TRX"
	case typ == trontx.DelegateResourceContract && w.account(owner).frozen[res] < bal:
		return "delegateBalance must be less than or equal to available FreezeV2 balance"
	case typ == trontx.UnDelegateResourceContract && (w.account(owner).delegatedTo[to] == nil || w.account(owner).delegatedTo[to][res] < bal):
		return "insufficient delegatedFrozenBalance"
	}
	return ""
}

func broadcastRefusal(code, msg string) map[string]any {
	return map[string]any{"result": false, "code": code, "message": hex.EncodeToString([]byte(msg))}
}

// broadcast checks a signed transaction and puts it in the pool for the next block.
func (s *TronRPCTestServer) broadcast(h string) map[string]any {
	w := &s.wallet
	b, err := hex.DecodeString(h)
	if err != nil {
		return broadcastRefusal("OTHER_ERROR", "not hex")
	}
	raw, sigs, err := trontx.RawOf(b)
	if err != nil {
		return broadcastRefusal("OTHER_ERROR", err.Error())
	}
	r, err := trontx.Decode(raw)
	if err != nil {
		return broadcastRefusal("OTHER_ERROR", err.Error())
	}
	id := trontx.TxIDOf(raw)
	if len(sigs) != 1 || len(sigs[0]) != 65 {
		return broadcastRefusal("SIGERROR", "Validate signature error: one signature of 65 bytes")
	}
	sig := append([]byte(nil), sigs[0]...)
	if sig[64] >= 27 {
		sig[64] -= 27
	}
	pub, err := crypto.SigToPub(id[:], sig)
	if err != nil || crypto.PubkeyToAddress(*pub) != common.Address(r.Owner) {
		return broadcastRefusal("SIGERROR", "Validate signature error: not signed by the owner")
	}
	head := s.blocks[len(s.blocks)-1]
	if r.Expiration.UnixMilli() <= int64(head.timestamp)*1000 {
		return broadcastRefusal("TRANSACTION_EXPIRATION_ERROR", "Transaction expired")
	}
	if w.txs[id] != nil {
		return broadcastRefusal("DUP_TRANSACTION_ERROR", "Dup transaction")
	}
	owner := common.Address(r.Owner)
	if !w.exists(owner) {
		return broadcastRefusal("CONTRACT_VALIDATE_ERROR", fmt.Sprintf("Validate TriggerSmartContract error, no OwnerAccount 41%x", owner))
	}
	tx := &tronTx{id: id, raw: r, size: int64(len(b))}
	if msg := w.validate(tx); msg != "" {
		return broadcastRefusal("CONTRACT_VALIDATE_ERROR", msg)
	}
	if !w.canPayBandwidth(w.account(owner), tx.size) {
		return broadcastRefusal("BANDWITH_ERROR", "Account resource insufficient error.")
	}
	if !w.drop || r.Type != trontx.TriggerSmartContract { // a dropped one is forgotten: the node does not know it afterwards
		w.txs[id] = tx
		w.pool = append(w.pool, tx)
	}
	return map[string]any{"result": true, "txid": hex.EncodeToString(id[:])}
}

func (w *tronWallet) validate(tx *tronTx) string {
	r := tx.raw
	owner, to := common.Address(r.Owner), common.Address(r.Account)
	switch r.Type {
	case trontx.AccountCreateContract:
		if w.exists(to) {
			return "Account has existed"
		}
		if w.account(owner).trx < TronCreateAccountFee {
			return "Validate CreateAccountActuator error, insufficient fee."
		}
	case trontx.DelegateResourceContract, trontx.UnDelegateResourceContract:
		return w.validateDelegation(r.Type, owner, to, r.Resource, r.Balance)
	}
	return ""
}

func (w *tronWallet) canPayBandwidth(acc *tronAccount, size int64) bool {
	return acc.limit(trontx.Bandwidth)-acc.netUsed >= size || TronFreeBandwidth-acc.freeNetUsed >= size || acc.trx >= size*TronSunPerByte
}

// execute runs the pool's transactions in block number (mu held) and returns the TRC-20 logs
// they made.
func (s *TronRPCTestServer) execute(number uint64) []tronTestLog {
	w := &s.wallet
	var logs []tronTestLog
	for _, tx := range w.pool {
		tx.block, tx.included, tx.result = number, true, "SUCCESS"
		acc := w.account(common.Address(tx.raw.Owner))
		acc.txsByType[tx.raw.Type]++
		// bandwidth: staked or delegated, else free, else burnt
		switch {
		case acc.limit(trontx.Bandwidth)-acc.netUsed >= tx.size:
			acc.netUsed += tx.size
		case TronFreeBandwidth-acc.freeNetUsed >= tx.size:
			acc.freeNetUsed += tx.size
		case acc.trx >= tx.size*TronSunPerByte:
			acc.trx -= tx.size * TronSunPerByte
			tx.fee += tx.size * TronSunPerByte
		default:
			tx.result = "FAILED"
			continue
		}
		tx.net = tx.size
		if msg := w.validate(tx); msg != "" {
			tx.result = "FAILED"
			continue
		}
		r := tx.raw
		to := common.Address(r.Account)
		switch r.Type {
		case trontx.AccountCreateContract:
			acc.trx -= TronCreateAccountFee
			tx.fee += TronCreateAccountFee
			w.account(to)
		case trontx.DelegateResourceContract:
			acc.frozen[r.Resource] -= r.Balance
			if acc.delegatedTo[to] == nil {
				acc.delegatedTo[to] = &[2]int64{}
			}
			acc.delegatedTo[to][r.Resource] += r.Balance
			w.account(to).acquired[r.Resource] += r.Balance
		case trontx.UnDelegateResourceContract:
			acc.delegatedTo[to][r.Resource] -= r.Balance
			acc.frozen[r.Resource] += r.Balance
			rcv := w.account(to)
			rcv.acquired[r.Resource] -= r.Balance
			rcv.energyUsed = min(rcv.energyUsed, rcv.limit(trontx.Energy))
			rcv.netUsed = min(rcv.netUsed, rcv.limit(trontx.Bandwidth))
		case trontx.TriggerSmartContract:
			if l := s.transfer(tx, acc); l != nil {
				logs = append(logs, *l)
			}
		}
	}
	w.pool = nil
	return logs
}

// transfer runs a TRC-20 transfer: energy from the owner's, the rest burnt from its TRX within
// the fee limit (OUT_OF_ENERGY when that is not enough: nothing moves, what it could burn is
// burnt), then the token moves (REVERT when the owner holds less).
func (s *TronRPCTestServer) transfer(tx *tronTx, acc *tronAccount) *tronTestLog {
	w := &s.wallet
	r := tx.raw
	contract := common.Address(r.Contract)
	if _, known := s.decimals[contract]; !known || len(r.Data) != 68 || hex.EncodeToString(r.Data[:4]) != "a9059cbb" {
		tx.result = "REVERT"
		return nil
	}
	owner, to, amount := common.Address(r.Owner), common.BytesToAddress(r.Data[16:36]), new(big.Int).SetBytes(r.Data[36:])
	need := w.transferEnergy(contract, to)
	own := min(max(acc.limit(trontx.Energy)-acc.energyUsed, 0), need)
	burn := (need - own) * TronSunPerEnergy
	if burn > min(acc.trx, r.FeeLimit) {
		spent := min(acc.trx, r.FeeLimit)
		acc.trx -= spent
		acc.energyUsed += own
		tx.fee += spent
		tx.energy = own + spent/TronSunPerEnergy
		tx.result = "OUT_OF_ENERGY"
		return nil
	}
	acc.trx -= burn
	acc.energyUsed += own
	tx.fee += burn
	tx.energy = need
	if w.balance(contract, owner).Cmp(amount) < 0 {
		tx.result = "REVERT"
		return nil
	}
	w.balance(contract, owner).Sub(w.balance(contract, owner), amount)
	w.balance(contract, to).Add(w.balance(contract, to), amount)
	l := &tronTestLog{contract: contract, from: owner, to: to, amount: amount, txID: tx.id}
	tx.log = l
	return l
}

// info is the transaction's /wallet/gettransactioninfobyid answer.
func (tx *tronTx) info(b *tronTestBlock) map[string]any {
	out := map[string]any{"id": hex.EncodeToString(tx.id[:]), "blockNumber": b.number, "blockTimeStamp": b.timestamp * 1000, "fee": tx.fee,
		"receipt": map[string]any{"net_usage": tx.net, "energy_usage_total": tx.energy}}
	rc := out["receipt"].(map[string]any)
	switch {
	case tx.result == "FAILED":
		out["result"] = "FAILED"
	case tx.raw.Type == trontx.TriggerSmartContract:
		rc["result"] = tx.result
		if tx.result != "SUCCESS" {
			out["result"] = "FAILED"
		}
	}
	if tx.log != nil {
		l := tx.log
		out["log"] = []map[string]any{{"address": hex.EncodeToString(l.contract[:]),
			"topics": []string{hex.EncodeToString(transferTopic[:]), hex.EncodeToString(common.BytesToHash(l.from[:]).Bytes()), hex.EncodeToString(common.BytesToHash(l.to[:]).Bytes())},
			"data":   hex.EncodeToString(common.BigToHash(l.amount).Bytes())}}
	}
	return out
}
