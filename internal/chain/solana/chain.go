package solana

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	solanago "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/config"
)

// ErrChainMoved means a transaction's slot changed between two reads (a fork switch); the
// lookup is repeated later.
var ErrChainMoved = errors.New("the chain moved during the read")

// Chain is the Solana network: its client, mints and commitment.
type Chain struct {
	Network payoutv1.Network
	Config  config.Network
	Client  *Client
	// tokens by mint, and the platform owner address of each token (v2)
	tokens   map[string]payoutv1.Token
	platform map[payoutv1.Token]string
}

// NewChain prepares the Solana network from its configuration (kind solana, defaults applied).
func NewChain(network payoutv1.Network, n config.Network) (*Chain, error) {
	if n.Kind != config.KindSolana {
		return nil, fmt.Errorf("%s is a %s network, not solana", network, n.Kind)
	}
	n = n.WithDefaultsOf(network)
	c, err := NewClient(n.GenesisHash, n.RPC)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", network, err)
	}
	ch := &Chain{Network: network, Config: n, Client: c, tokens: map[string]payoutv1.Token{}, platform: map[payoutv1.Token]string{}}
	for tok, t := range n.Tokens {
		if !chain.IsSolanaAddress(t.Contract) {
			return nil, fmt.Errorf("%s: token %s: mint %q is not a Solana address", network, tok, t.Contract)
		}
		ch.tokens[t.Contract] = tok
		if t.PlatformAddress != "" {
			ch.platform[tok] = t.PlatformAddress
		}
	}
	return ch, nil
}

// commitment is the network's commitment in solana-go's type.
func (c *Chain) commitment() rpc.CommitmentType {
	if c.Config.Commitment == config.CommitmentConfirmed {
		return rpc.CommitmentConfirmed
	}
	return rpc.CommitmentFinalized
}

// Confirmations of a transaction from its signature status (see the package documentation):
// 0 while only processed (or unknown to the status cache), the confirmed blocks on its block
// plus one while confirmed, config.SolanaFinalizedConfirmations once rooted.
func Confirmations(st *rpc.SignatureStatusesResult) int64 {
	switch {
	case st == nil:
		return 0
	case st.ConfirmationStatus == rpc.ConfirmationStatusFinalized:
		return config.SolanaFinalizedConfirmations
	case st.ConfirmationStatus == rpc.ConfirmationStatusConfirmed && st.Confirmations == nil:
		return config.SolanaFinalizedConfirmations // null confirmations: rooted
	case st.ConfirmationStatus == rpc.ConfirmationStatusConfirmed:
		return min(int64(*st.Confirmations)+1, config.SolanaFinalizedConfirmations-1)
	}
	return 0
}

// LookupTx reports what Solana says about a v2 transaction signature: found at commitment
// confirmed or not, failed, its slot (as BlockNumber), block hash and time, confirmations now
// and required, and the transfers of configured mints in it. It only reports facts; the
// transfer controller judges them. Requests: getTransaction, getSignatureStatuses and getBlock
// (for the block hash), the last two only for a transaction found.
func (c *Chain) LookupTx(ctx context.Context, network payoutv1.Network, signature string) (*chain.TxObservation, error) {
	if network != c.Network {
		return nil, fmt.Errorf("%s lookup asked of the %s client", network, c.Network)
	}
	if !chain.IsSolanaSignature(signature) {
		return nil, fmt.Errorf("%q is not a Solana signature (base58 of 64 bytes)", signature)
	}
	sig := solanago.MustSignatureFromBase58(signature)
	obs := &chain.TxObservation{Network: c.Network, TxHash: signature, Required: c.Config.Confirmations.Blocks()}
	var tx *txResult
	zero := uint64(0)
	err := c.Client.Do(ctx, "getTransaction", func(ctx context.Context, rc *rpc.Client) error {
		return rc.RPCCallForInto(ctx, &tx, "getTransaction", []any{sig, rpc.M{
			"encoding": solanago.EncodingJSONParsed, "commitment": rpc.CommitmentConfirmed, "maxSupportedTransactionVersion": zero,
		}})
	})
	if err != nil || tx == nil {
		return obs, err // null: unknown, or not confirmed yet
	}
	if tx.Meta == nil {
		return nil, fmt.Errorf("getTransaction(%s): the node keeps no status metadata for it", signature)
	}
	var statuses *rpc.GetSignatureStatusesResult
	if err := c.Client.Do(ctx, "getSignatureStatuses", func(ctx context.Context, rc *rpc.Client) (err error) {
		statuses, err = rc.GetSignatureStatuses(ctx, true, sig)
		return err
	}); err != nil {
		return nil, err
	}
	var st *rpc.SignatureStatusesResult
	if statuses != nil && len(statuses.Value) == 1 {
		st = statuses.Value[0]
	}
	if st != nil && st.Slot != tx.Slot {
		return nil, fmt.Errorf("%s was read in slot %d, then in slot %d: %w", signature, tx.Slot, st.Slot, ErrChainMoved)
	}
	var block *rpc.GetBlockResult
	noRewards := false
	if err := c.Client.Do(ctx, "getBlock", func(ctx context.Context, rc *rpc.Client) (err error) {
		block, err = rc.GetBlockWithOpts(ctx, tx.Slot, &rpc.GetBlockOpts{
			TransactionDetails: rpc.TransactionDetailsNone, Rewards: &noRewards, Commitment: rpc.CommitmentConfirmed,
			MaxSupportedTransactionVersion: &zero,
		})
		return err
	}); err != nil {
		return nil, err
	}
	obs.Found = true
	obs.Reverted = tx.failed()
	obs.BlockNumber = int64(tx.Slot)
	obs.BlockHash = block.Blockhash.String()
	switch {
	case tx.BlockTime != nil:
		obs.BlockTime = time.Unix(*tx.BlockTime, 0).UTC()
	case block.BlockTime != nil:
		obs.BlockTime = block.BlockTime.Time().UTC()
	}
	obs.Confirmations = Confirmations(st)
	if !obs.Reverted {
		if obs.Transfers, err = c.transfers(tx); err != nil {
			return nil, fmt.Errorf("getTransaction(%s): %w", signature, err)
		}
	}
	return obs, nil
}

// Status is what the network's watcher reports of the node.
type Status struct {
	// Genesis is the genesis hash of the node's cluster.
	Genesis string
	// Slot and Blockhash are the newest slot at the network's commitment and its block's hash.
	Slot      int64
	Blockhash string
	// Head is the newest slot the node has processed.
	Head int64
}

// Status reads the node's state: healthy first (getHealth; an unhealthy node's error, such as
// "Node is behind by 42 slots", moves to the next endpoint, and is the error while every
// endpoint is unhealthy), then the genesis hash, the newest slot and blockhash at the network's
// commitment (getLatestBlockhash) and the newest processed slot (getSlot).
func (c *Chain) Status(ctx context.Context) (Status, error) {
	var s Status
	if err := c.Client.DoOrSkip(ctx, "getHealth", func(ctx context.Context, rc *rpc.Client) error {
		_, err := rc.GetHealth(ctx)
		return err
	}); err != nil {
		return s, err
	}
	if err := c.Client.Do(ctx, "getGenesisHash", func(ctx context.Context, rc *rpc.Client) error {
		h, err := rc.GetGenesisHash(ctx)
		s.Genesis = h.String()
		return err
	}); err != nil {
		return s, err
	}
	if err := c.Client.Do(ctx, "getLatestBlockhash", func(ctx context.Context, rc *rpc.Client) error {
		r, err := rc.GetLatestBlockhash(ctx, c.commitment())
		if err == nil && (r == nil || r.Value == nil) {
			err = errors.New("empty answer")
		}
		if err != nil {
			return err
		}
		s.Slot, s.Blockhash = int64(r.Context.Slot), r.Value.Blockhash.String()
		return nil
	}); err != nil {
		return s, err
	}
	err := c.Client.Do(ctx, "getSlot", func(ctx context.Context, rc *rpc.Client) error {
		head, err := rc.GetSlot(ctx, rpc.CommitmentProcessed)
		s.Head = int64(head)
		return err
	})
	return s, err
}

// txResult is the part of getTransaction's jsonParsed answer the lookup reads (Solana RPC
// documentation, getTransaction, "JsonParsed" example).
type txResult struct {
	Slot      uint64 `json:"slot"`
	BlockTime *int64 `json:"blockTime"`
	Meta      *struct {
		Err               json.RawMessage    `json:"err"`
		InnerInstructions []innerInstruction `json:"innerInstructions"`
		PreTokenBalances  []tokenBalance     `json:"preTokenBalances"`
		PostTokenBalances []tokenBalance     `json:"postTokenBalances"`
	} `json:"meta"`
	Transaction struct {
		Message struct {
			AccountKeys []struct {
				Pubkey string `json:"pubkey"`
			} `json:"accountKeys"`
			Instructions []parsedInstruction `json:"instructions"`
		} `json:"message"`
	} `json:"transaction"`
}

type innerInstruction struct {
	Index        int                 `json:"index"`
	Instructions []parsedInstruction `json:"instructions"`
}

// parsedInstruction is an instruction as jsonParsed gives it: parsed by its program's parser
// (program, parsed.type, parsed.info), or not (programId, accounts, data).
type parsedInstruction struct {
	Program   string          `json:"program"`
	ProgramID string          `json:"programId"`
	Parsed    json.RawMessage `json:"parsed"`
}

type tokenBalance struct {
	AccountIndex  int    `json:"accountIndex"`
	Mint          string `json:"mint"`
	Owner         string `json:"owner"`
	UITokenAmount struct {
		Amount string `json:"amount"`
	} `json:"uiTokenAmount"`
}

func (tx *txResult) failed() bool {
	return len(tx.Meta.Err) > 0 && string(tx.Meta.Err) != "null"
}

// tokenTransferInfo is the info of a parsed transfer or transferChecked instruction of the SPL
// Token programs (agave, transaction-status/src/parse_token.rs): transfer has amount,
// transferChecked mint and tokenAmount; the signer is authority, or multisigAuthority.
type tokenTransferInfo struct {
	Source            string `json:"source"`
	Destination       string `json:"destination"`
	Mint              string `json:"mint"`
	Amount            string `json:"amount"`
	Authority         string `json:"authority"`
	MultisigAuthority string `json:"multisigAuthority"`
	TokenAmount       *struct {
		Amount string `json:"amount"`
	} `json:"tokenAmount"`
}

// tokenPrograms are the programs whose transfers are read, by jsonParsed's program names.
var tokenPrograms = map[string]bool{"spl-token": true, "spl-token-2022": true}

// transfers lists the transfers of configured mints in tx, in execution order: each top-level
// instruction, then the instructions it invoked. LogIndex is an instruction's position in that
// order (counting every instruction), unique within the transaction.
func (c *Chain) transfers(tx *txResult) ([]chain.TokenTransfer, error) {
	keys := tx.Transaction.Message.AccountKeys
	type account struct{ mint, owner string }
	accounts := map[string]account{}
	for _, list := range [][]tokenBalance{tx.Meta.PreTokenBalances, tx.Meta.PostTokenBalances} {
		for _, b := range list {
			if b.AccountIndex < 0 || b.AccountIndex >= len(keys) {
				return nil, fmt.Errorf("a token balance of account index %d, of %d accounts", b.AccountIndex, len(keys))
			}
			a := accounts[keys[b.AccountIndex].Pubkey]
			if a.mint == "" {
				a.mint = b.Mint
			}
			if a.owner == "" {
				a.owner = b.Owner
			}
			accounts[keys[b.AccountIndex].Pubkey] = a
		}
	}
	inner := map[int][]parsedInstruction{}
	for _, ii := range tx.Meta.InnerInstructions {
		inner[ii.Index] = append(inner[ii.Index], ii.Instructions...)
	}
	var order []parsedInstruction
	for i, ix := range tx.Transaction.Message.Instructions {
		order = append(order, ix)
		order = append(order, inner[i]...)
	}
	var out []chain.TokenTransfer
	for seq, ix := range order {
		if !tokenPrograms[ix.Program] || len(ix.Parsed) == 0 || ix.Parsed[0] != '{' {
			continue
		}
		var p struct {
			Type string            `json:"type"`
			Info tokenTransferInfo `json:"info"`
		}
		if err := json.Unmarshal(ix.Parsed, &p); err != nil {
			return nil, fmt.Errorf("instruction %d of %s: %w", seq, ix.Program, err)
		}
		if p.Type != "transfer" && p.Type != "transferChecked" {
			continue
		}
		info := p.Info
		amount := info.Amount
		if info.TokenAmount != nil {
			amount = info.TokenAmount.Amount
		}
		mint := info.Mint
		if mint == "" { // transfer names no mint: the token accounts' balances do
			mint = accounts[info.Destination].mint
			if mint == "" {
				mint = accounts[info.Source].mint
			}
		}
		tok, watched := c.tokens[mint]
		if !watched {
			continue
		}
		units, ok := new(big.Int).SetString(amount, 10)
		if !ok || units.Sign() < 0 {
			return nil, fmt.Errorf("instruction %d: amount %q is not a token amount", seq, amount)
		}
		to := accounts[info.Destination].owner
		if to == "" {
			to = c.ownerByATA(info.Destination, mint, tok)
		}
		from := accounts[info.Source].owner
		if from == "" {
			from = info.Authority
		}
		if from == "" {
			from = info.MultisigAuthority
		}
		out = append(out, chain.TokenTransfer{Token: tok, Contract: mint, From: from, To: to, Amount: units, LogIndex: int64(seq)})
	}
	return out, nil
}

// ownerByATA names the owner of a destination token account the transaction's balances do not
// (transactions recorded before token balances carried owners): the platform address when the
// account is its associated token account of the mint; otherwise the token account itself,
// which no owner address equals.
func (c *Chain) ownerByATA(account, mint string, tok payoutv1.Token) string {
	owner := c.platform[tok]
	if owner == "" {
		return account
	}
	if ata, err := AssociatedTokenAccount(owner, mint); err == nil && ata == account {
		return owner
	}
	return account
}

// AssociatedTokenAccount is the associated token account of owner for mint under the SPL Token
// program: the account wallets send a mint's tokens to when given the owner's address.
func AssociatedTokenAccount(owner, mint string) (string, error) {
	o, err := solanago.PublicKeyFromBase58(owner)
	if err != nil {
		return "", fmt.Errorf("owner %q: %w", owner, err)
	}
	m, err := solanago.PublicKeyFromBase58(mint)
	if err != nil {
		return "", fmt.Errorf("mint %q: %w", mint, err)
	}
	ata, _, err := solanago.FindAssociatedTokenAddress(o, m)
	if err != nil {
		return "", err
	}
	return ata.String(), nil
}
