package tron

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/chain/tron/trontx"
)

// Node is a client of java-tron's HTTP API (the FullNode's /wallet/... and the solidified
// /walletsolidity/... services), which the sweeper uses to build, broadcast and follow its
// transactions: the Ethereum-compatible JSON-RPC builds and sends none. Addresses go to it in
// its hex form (41 and 20 bytes, "visible": false).
type Node struct {
	// URL is the HTTP API's root (java-tron's port 8090), without /wallet.
	URL    string
	Client *http.Client
}

// Hex41 is an account id in the HTTP API's hex form.
func Hex41(id [20]byte) string { return "41" + hex.EncodeToString(id[:]) }

func (n *Node) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(n.URL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c := n.Client
	if c == nil {
		c = &http.Client{Timeout: 20 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
	}
	// java-tron answers a refused request with 200 and {"Error": "..."}
	var e struct {
		Error string `json:"Error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s: %s", path, e.Error)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Unsigned is a transaction a node built: its id and the bytes of its raw_data.
type Unsigned struct {
	TxID string `json:"txID"`
	Hex  string `json:"raw_data_hex"`
}

// Raw is the decoded raw_data, checked against the id the node gave.
func (u Unsigned) Raw() ([]byte, error) {
	raw, err := hex.DecodeString(u.Hex)
	if err != nil || len(raw) == 0 {
		return nil, errors.New("the node's transaction has no raw_data_hex")
	}
	if id := trontx.TxIDOf(raw); !strings.EqualFold(hex.EncodeToString(id[:]), u.TxID) {
		return nil, fmt.Errorf("the node's txID %s is not the hash of its raw_data", u.TxID)
	}
	return raw, nil
}

// TriggerTransfer asks the node to build owner's call of token's transfer(to, amount) with a fee
// limit (sun) (/wallet/triggersmartcontract).
func (n *Node) TriggerTransfer(ctx context.Context, owner, token, to [20]byte, amount *big.Int, feeLimit int64) (Unsigned, error) {
	var out struct {
		Result struct {
			Result  bool   `json:"result"`
			Message string `json:"message"`
		} `json:"result"`
		Transaction Unsigned `json:"transaction"`
	}
	param := hex.EncodeToString(trontx.TransferData(to, amount)[4:])
	err := n.post(ctx, "/wallet/triggersmartcontract", map[string]any{
		"owner_address": Hex41(owner), "contract_address": Hex41(token), "function_selector": "transfer(address,uint256)",
		"parameter": param, "fee_limit": feeLimit, "call_value": 0, "visible": false,
	}, &out)
	if err != nil {
		return Unsigned{}, err
	}
	if !out.Result.Result {
		return Unsigned{}, fmt.Errorf("/wallet/triggersmartcontract: %s", decodeMessage(out.Result.Message))
	}
	return out.Transaction, nil
}

// EstimateTransfer is the energy owner's transfer(to, amount) of token uses now
// (/wallet/triggerconstantcontract: the call run on the node, not sent).
func (n *Node) EstimateTransfer(ctx context.Context, owner, token, to [20]byte, amount *big.Int) (int64, error) {
	out, err := n.constant(ctx, owner, token, "transfer(address,uint256)", hex.EncodeToString(trontx.TransferData(to, amount)[4:]))
	if err != nil {
		return 0, err
	}
	return out.EnergyUsed, nil
}

// TokenBalance is who's balance of the TRC-20 token (balanceOf, run on the node).
func (n *Node) TokenBalance(ctx context.Context, token, who [20]byte) (*big.Int, error) {
	var word [32]byte
	copy(word[12:], who[:])
	out, err := n.constant(ctx, who, token, "balanceOf(address)", hex.EncodeToString(word[:]))
	if err != nil {
		return nil, err
	}
	if len(out.ConstantResult) != 1 {
		return nil, errors.New("balanceOf: no result")
	}
	b, err := hex.DecodeString(out.ConstantResult[0])
	if err != nil || len(b) != 32 {
		return nil, errors.New("balanceOf: the result is not one word")
	}
	return new(big.Int).SetBytes(b), nil
}

type constantResult struct {
	Result struct {
		Result  bool   `json:"result"`
		Message string `json:"message"`
	} `json:"result"`
	EnergyUsed     int64    `json:"energy_used"`
	ConstantResult []string `json:"constant_result"`
}

func (n *Node) constant(ctx context.Context, owner, contract [20]byte, selector, param string) (*constantResult, error) {
	var out constantResult
	err := n.post(ctx, "/wallet/triggerconstantcontract", map[string]any{
		"owner_address": Hex41(owner), "contract_address": Hex41(contract), "function_selector": selector,
		"parameter": param, "visible": false,
	}, &out)
	if err != nil {
		return nil, err
	}
	if !out.Result.Result {
		return nil, fmt.Errorf("/wallet/triggerconstantcontract %s: %s", selector, decodeMessage(out.Result.Message))
	}
	return &out, nil
}

// CreateAccount asks the node to build owner's creation of account (/wallet/createaccount): the
// owner pays the fee, the new account holds nothing.
func (n *Node) CreateAccount(ctx context.Context, owner, account [20]byte) (Unsigned, error) {
	var out Unsigned
	err := n.post(ctx, "/wallet/createaccount", map[string]any{"owner_address": Hex41(owner), "account_address": Hex41(account), "visible": false}, &out)
	return out, err
}

// Delegate asks the node to build owner's (un)delegation of balance sun of staked TRX's resource
// to receiver (/wallet/delegateresource without a lock, /wallet/undelegateresource).
func (n *Node) Delegate(ctx context.Context, undo bool, owner, receiver [20]byte, resource int, balance int64) (Unsigned, error) {
	path, in := "/wallet/delegateresource", map[string]any{"owner_address": Hex41(owner), "receiver_address": Hex41(receiver),
		"balance": balance, "resource": resourceName(resource), "visible": false}
	if undo {
		path = "/wallet/undelegateresource"
	} else {
		in["lock"] = false
	}
	var out Unsigned
	err := n.post(ctx, path, in, &out)
	return out, err
}

func resourceName(r int) string {
	if r == trontx.Energy {
		return "ENERGY"
	}
	return "BANDWIDTH"
}

// BroadcastError is a node's refusal of a transaction (/wallet/broadcasthex), with its code
// (TRANSACTION_EXPIRATION_ERROR, DUP_TRANSACTION_ERROR, CONTRACT_VALIDATE_ERROR, ...).
type BroadcastError struct {
	Code, Message string
}

func (e *BroadcastError) Error() string { return e.Code + ": " + e.Message }

// Broadcast sends a signed transaction (serialized protocol.Transaction). A node that has it
// already answers DUP_TRANSACTION_ERROR, which is success here.
func (n *Node) Broadcast(ctx context.Context, tx []byte) error {
	var out struct {
		Result  bool   `json:"result"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := n.post(ctx, "/wallet/broadcasthex", map[string]any{"transaction": hex.EncodeToString(tx)}, &out); err != nil {
		return err
	}
	if out.Result || out.Code == "DUP_TRANSACTION_ERROR" {
		return nil
	}
	return &BroadcastError{Code: out.Code, Message: decodeMessage(out.Message)}
}

// decodeMessage: java-tron hex-encodes the message of a refusal.
func decodeMessage(m string) string {
	if b, err := hex.DecodeString(m); err == nil && len(b) > 0 {
		return string(b)
	}
	return m
}

// Info is what /wallet/gettransactioninfobyid says of a transaction; ID is empty while the node
// knows none.
type Info struct {
	ID             string `json:"id"`
	BlockNumber    int64  `json:"blockNumber"`
	BlockTimeStamp int64  `json:"blockTimeStamp"`
	Fee            int64  `json:"fee"`
	Result         string `json:"result"` // "FAILED" when the transaction failed
	Receipt        struct {
		Result           string `json:"result"` // SUCCESS, REVERT, OUT_OF_ENERGY, ...
		EnergyUsageTotal int64  `json:"energy_usage_total"`
		EnergyFee        int64  `json:"energy_fee"`
		NetUsage         int64  `json:"net_usage"`
		NetFee           int64  `json:"net_fee"`
	} `json:"receipt"`
	Log []struct {
		Address string   `json:"address"`
		Topics  []string `json:"topics"`
		Data    string   `json:"data"`
	} `json:"log"`
}

// Failed reports whether the transaction was included and failed: it moved nothing.
func (i *Info) Failed() bool {
	return i.Result == "FAILED" || (i.Receipt.Result != "" && i.Receipt.Result != "SUCCESS")
}

// Info looks up txID on the full node, or with solid on the solidified chain only.
func (n *Node) Info(ctx context.Context, txID string, solid bool) (*Info, error) {
	path := "/wallet/gettransactioninfobyid"
	if solid {
		path = "/walletsolidity/gettransactioninfobyid"
	}
	var out Info
	if err := n.post(ctx, path, map[string]any{"value": txID}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Block is a block's height and time.
type Block struct {
	Number int64
	Time   time.Time
}

// NowBlock is the head block, or with solid the latest solidified block.
func (n *Node) NowBlock(ctx context.Context, solid bool) (Block, error) {
	path := "/wallet/getnowblock"
	if solid {
		path = "/walletsolidity/getnowblock"
	}
	var out struct {
		BlockID string `json:"blockID"`
		Header  struct {
			RawData struct {
				Number    int64 `json:"number"`
				Timestamp int64 `json:"timestamp"`
			} `json:"raw_data"`
		} `json:"block_header"`
	}
	if err := n.post(ctx, path, map[string]any{}, &out); err != nil {
		return Block{}, err
	}
	if out.BlockID == "" {
		return Block{}, fmt.Errorf("%s: no block", path)
	}
	return Block{Number: out.Header.RawData.Number, Time: time.UnixMilli(out.Header.RawData.Timestamp)}, nil
}

// Account is what the sweeper reads of an account: whether it exists (has been activated) and
// its TRX (sun).
type Account struct {
	Exists  bool
	Balance int64
}

// Account reads who's account (/wallet/getaccount answers {} for an account that does not exist).
func (n *Node) Account(ctx context.Context, who [20]byte) (Account, error) {
	var out struct {
		Address string `json:"address"`
		Balance int64  `json:"balance"`
	}
	if err := n.post(ctx, "/wallet/getaccount", map[string]any{"address": Hex41(who), "visible": false}, &out); err != nil {
		return Account{}, err
	}
	return Account{Exists: out.Address != "", Balance: out.Balance}, nil
}

// Resources are an account's bandwidth and energy now (/wallet/getaccountresource), and the
// network's totals that convert staked TRX into them.
type Resources struct {
	FreeNetLimit      int64 `json:"freeNetLimit"`
	FreeNetUsed       int64 `json:"freeNetUsed"`
	NetLimit          int64 `json:"NetLimit"`
	NetUsed           int64 `json:"NetUsed"`
	EnergyLimit       int64 `json:"EnergyLimit"`
	EnergyUsed        int64 `json:"EnergyUsed"`
	TotalNetLimit     int64 `json:"TotalNetLimit"`
	TotalNetWeight    int64 `json:"TotalNetWeight"`
	TotalEnergyLimit  int64 `json:"TotalEnergyLimit"`
	TotalEnergyWeight int64 `json:"TotalEnergyWeight"`
}

// Energy is the energy the account can use now.
func (r Resources) Energy() int64 { return max(r.EnergyLimit-r.EnergyUsed, 0) }

// Bandwidth is the bandwidth the account can use now: a transaction is paid from its staked (or
// delegated) bandwidth or, failing that, wholly from its free bandwidth.
func (r Resources) Bandwidth() int64 {
	return max(r.NetLimit-r.NetUsed, r.FreeNetLimit-r.FreeNetUsed, 0)
}

// StakeFor is the staked TRX (sun) whose delegation gives units of resource, at the network's
// totals now (units × weight / limit, in whole TRX, rounded up, at least the 1 TRX minimum of a
// delegation).
func (r Resources) StakeFor(resource int, units int64) (int64, error) {
	limit, weight := r.TotalNetLimit, r.TotalNetWeight
	if resource == trontx.Energy {
		limit, weight = r.TotalEnergyLimit, r.TotalEnergyWeight
	}
	if limit <= 0 || weight <= 0 {
		return 0, errors.New("the node reports no network totals of staked resources")
	}
	trx := new(big.Int).Mul(big.NewInt(units), big.NewInt(weight))
	trx.Add(trx, big.NewInt(limit-1))
	trx.Quo(trx, big.NewInt(limit))
	if !trx.IsInt64() || trx.Int64() > 1<<40 {
		return 0, errors.New("the stake needed overflows")
	}
	return max(trx.Int64(), 1) * 1_000_000, nil
}

// Resources reads who's resources.
func (n *Node) Resources(ctx context.Context, who [20]byte) (Resources, error) {
	var out Resources
	err := n.post(ctx, "/wallet/getaccountresource", map[string]any{"address": Hex41(who), "visible": false}, &out)
	return out, err
}

// Delegated is the staked TRX (sun) from delegated to to, per resource
// (/wallet/getdelegatedresourcev2).
func (n *Node) Delegated(ctx context.Context, from, to [20]byte) (map[int]int64, error) {
	var out struct {
		Delegated []struct {
			Bandwidth int64 `json:"frozen_balance_for_bandwidth"`
			Energy    int64 `json:"frozen_balance_for_energy"`
		} `json:"delegatedResource"`
	}
	if err := n.post(ctx, "/wallet/getdelegatedresourcev2", map[string]any{"fromAddress": Hex41(from), "toAddress": Hex41(to), "visible": false}, &out); err != nil {
		return nil, err
	}
	res := map[int]int64{}
	for _, d := range out.Delegated {
		res[trontx.Bandwidth] += d.Bandwidth
		res[trontx.Energy] += d.Energy
	}
	return res, nil
}
