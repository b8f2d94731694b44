// Package trontx reads, checks and signs Tron transactions (protocol.Transaction of java-tron's
// Tron.proto) with only the protobuf wire format: the sweeper asks a node to build each of its
// transactions, and never signs one before Check has decoded its raw_data and found exactly what
// it asked for.
package trontx

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"google.golang.org/protobuf/encoding/protowire"
)

// The contract types of protocol.Transaction.Contract.ContractType (java-tron's Tron.proto) the
// sweeper signs.
const (
	AccountCreateContract      = 0
	TriggerSmartContract       = 31
	DelegateResourceContract   = 57
	UnDelegateResourceContract = 58
)

// Resource codes of protocol.ResourceCode.
const (
	Bandwidth = 0
	Energy    = 1
)

// typeURL is the google.protobuf.Any type URL of each contract type.
var typeURL = map[int]string{
	AccountCreateContract:      "type.googleapis.com/protocol.AccountCreateContract",
	TriggerSmartContract:       "type.googleapis.com/protocol.TriggerSmartContract",
	DelegateResourceContract:   "type.googleapis.com/protocol.DelegateResourceContract",
	UnDelegateResourceContract: "type.googleapis.com/protocol.UnDelegateResourceContract",
}

// Raw is what the sweeper reads of a node's unsigned transaction (protocol.Transaction.raw):
// its one contract, decoded, and its expiration. Every field of raw_data and of the contract
// that the sweeper does not expect makes Decode refuse the transaction.
type Raw struct {
	Type       int
	Owner      [20]byte
	Expiration time.Time
	FeeLimit   int64
	// TriggerSmartContract: the contract called and the call data (no TRX or TRC-10 value).
	Contract [20]byte
	Data     []byte
	// AccountCreateContract: the account created; Delegate/UnDelegateResourceContract: the
	// receiver, the resource and the amount of staked TRX (sun).
	Account  [20]byte
	Resource int
	Balance  int64
	Lock     bool
}

// Decode reads raw, the bytes of protocol.Transaction.raw (raw_data_hex). It accepts exactly one
// contract of a type the sweeper signs, with the fields that type has, and no memo, scripts or
// authorities: a node that adds anything else to the transaction gets it refused.
func Decode(raw []byte) (*Raw, error) {
	out := &Raw{Type: -1}
	contracts := 0
	err := fields(raw, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType, num == 4 && typ == protowire.BytesType: // ref_block_bytes, ref_block_hash
		case num == 3 && typ == protowire.VarintType: // ref_block_num
		case num == 8 && typ == protowire.VarintType:
			out.Expiration = time.UnixMilli(int64(n))
		case num == 14 && typ == protowire.VarintType: // timestamp
		case num == 18 && typ == protowire.VarintType:
			out.FeeLimit = int64(n)
		case num == 11 && typ == protowire.BytesType:
			contracts++
			return decodeContract(v, out)
		default:
			return fmt.Errorf("the transaction has field %d, which the sweeper never signs", num)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if contracts != 1 {
		return nil, fmt.Errorf("the transaction has %d contracts, not one", contracts)
	}
	return out, nil
}

func decodeContract(b []byte, out *Raw) error {
	var param []byte
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			out.Type = int(n)
		case num == 2 && typ == protowire.BytesType:
			param = v
		case num == 5 && typ == protowire.VarintType && n == 0: // Permission_id: the owner's
		default:
			return fmt.Errorf("the contract has field %d, which the sweeper never signs", num)
		}
		return nil
	})
	if err != nil {
		return err
	}
	url, ok := typeURL[out.Type]
	if !ok {
		return fmt.Errorf("contract type %d is not one the sweeper signs", out.Type)
	}
	var value []byte
	err = fields(param, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType && string(v) == url:
		case num == 2 && typ == protowire.BytesType:
			value = v
		default:
			return fmt.Errorf("the contract's parameter is not a %s", url)
		}
		return nil
	})
	if err != nil {
		return err
	}
	addr := func(dst *[20]byte, v []byte) error {
		if len(v) != 21 || v[0] != 0x41 {
			return errors.New("an address of the contract is not 0x41 and 20 bytes")
		}
		copy(dst[:], v[1:])
		return nil
	}
	return fields(value, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			return addr(&out.Owner, v)
		case out.Type == TriggerSmartContract && num == 2 && typ == protowire.BytesType:
			return addr(&out.Contract, v)
		case out.Type == TriggerSmartContract && num == 4 && typ == protowire.BytesType:
			out.Data = append([]byte(nil), v...)
		case out.Type == TriggerSmartContract && (num == 3 || num == 5 || num == 6) && typ == protowire.VarintType && n == 0:
			// call_value, call_token_value, token_id: zero (proto3 omits them; a node may not)
		case out.Type == AccountCreateContract && num == 2 && typ == protowire.BytesType:
			return addr(&out.Account, v)
		case out.Type == AccountCreateContract && num == 3 && typ == protowire.VarintType && n == 0: // type Normal
		case (out.Type == DelegateResourceContract || out.Type == UnDelegateResourceContract) && num == 2 && typ == protowire.VarintType:
			out.Resource = int(n)
		case (out.Type == DelegateResourceContract || out.Type == UnDelegateResourceContract) && num == 3 && typ == protowire.VarintType:
			out.Balance = int64(n)
		case (out.Type == DelegateResourceContract || out.Type == UnDelegateResourceContract) && num == 4 && typ == protowire.BytesType:
			return addr(&out.Account, v)
		case out.Type == DelegateResourceContract && num == 5 && typ == protowire.VarintType:
			out.Lock = n != 0
		default:
			return fmt.Errorf("the contract has field %d, which the sweeper never signs", num)
		}
		return nil
	})
}

// fields calls f with each field of the protobuf message b: its number, wire type, its bytes
// (length-delimited) or value (varint).
func fields(b []byte, f func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errors.New("the transaction is not a protobuf message")
		}
		b = b[n:]
		var v []byte
		var u uint64
		switch typ {
		case protowire.VarintType:
			u, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("the transaction has field %d of wire type %d, which the sweeper never signs", num, typ)
		}
		if n < 0 {
			return errors.New("the transaction is not a protobuf message")
		}
		b = b[n:]
		if err := f(num, typ, v, u); err != nil {
			return err
		}
	}
	return nil
}

// transferSelector is the 4-byte selector of TRC-20 transfer(address,uint256).
var transferSelector = crypto.Keccak256([]byte("transfer(address,uint256)"))[:4]

// TransferData is the call data of transfer(to, amount).
func TransferData(to [20]byte, amount *big.Int) []byte {
	out := append([]byte{}, transferSelector...)
	out = append(out, make([]byte, 12)...)
	out = append(out, to[:]...)
	return append(out, amountWord(amount)...)
}

func amountWord(a *big.Int) []byte {
	w := make([]byte, 32)
	return a.FillBytes(w)
}

// Expect is what the sweeper asked the node to build; Check compares the node's transaction
// with it.
type Expect struct {
	Type  int
	Owner [20]byte
	// Contract and Data of a TriggerSmartContract.
	Contract [20]byte
	Data     []byte
	// Account, Resource and Balance of the other types.
	Account  [20]byte
	Resource int
	Balance  int64
	// MaxFeeLimit bounds a TriggerSmartContract's fee limit (sun).
	MaxFeeLimit int64
}

// MaxExpiration is how far past now the sweeper accepts a transaction's expiration: java-tron
// builds them 60 s ahead; Tron refuses any past 24 hours.
const MaxExpiration = 10 * time.Minute

// Check decodes raw and refuses it unless it is exactly e, expiring after now and within
// MaxExpiration: what a node built for another recipient, amount, owner or contract is never
// signed.
func Check(raw []byte, e Expect, now time.Time) (*Raw, error) {
	r, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Type != e.Type:
		return nil, fmt.Errorf("the node built contract type %d, not %d", r.Type, e.Type)
	case r.Owner != e.Owner:
		return nil, fmt.Errorf("the node built a transaction of %s, not %s", hex.EncodeToString(r.Owner[:]), hex.EncodeToString(e.Owner[:]))
	case !r.Expiration.After(now) || r.Expiration.After(now.Add(MaxExpiration)):
		return nil, fmt.Errorf("the node's transaction expires at %s, not within %s of %s", r.Expiration.UTC().Format(time.RFC3339), MaxExpiration, now.UTC().Format(time.RFC3339))
	}
	switch e.Type {
	case TriggerSmartContract:
		switch {
		case r.Contract != e.Contract:
			return nil, fmt.Errorf("the node's transaction calls %s, not the token %s", hex.EncodeToString(r.Contract[:]), hex.EncodeToString(e.Contract[:]))
		case !bytes.Equal(r.Data, e.Data):
			return nil, fmt.Errorf("the node's transaction calls %s, not transfer to the treasury of the amount asked (%s)", hex.EncodeToString(r.Data), hex.EncodeToString(e.Data))
		case r.FeeLimit <= 0 || r.FeeLimit > e.MaxFeeLimit:
			return nil, fmt.Errorf("the node's transaction has a fee limit of %d sun, not up to %d", r.FeeLimit, e.MaxFeeLimit)
		}
	default:
		switch {
		case r.Account != e.Account:
			return nil, fmt.Errorf("the node's transaction is for %s, not %s", hex.EncodeToString(r.Account[:]), hex.EncodeToString(e.Account[:]))
		case r.Resource != e.Resource || r.Balance != e.Balance || r.Lock:
			return nil, fmt.Errorf("the node's transaction moves %d sun of resource %d (lock %t), not %d of %d", r.Balance, r.Resource, r.Lock, e.Balance, e.Resource)
		case r.FeeLimit != 0:
			return nil, errors.New("the node's transaction has a fee limit, which this contract does not take")
		}
	}
	return r, nil
}

// TxIDOf is the transaction id of raw: sha256 of protocol.Transaction.raw.
func TxIDOf(raw []byte) [32]byte { return sha256.Sum256(raw) }

// Sign signs raw with key (secp256k1 over its txID, r || s || v) and returns the serialized
// protocol.Transaction (raw_data and the signature), what /wallet/broadcasthex takes, and its
// txID in 64 hex digits.
func Sign(raw []byte, key *ecdsa.PrivateKey) ([]byte, string, error) {
	id := TxIDOf(raw)
	sig, err := crypto.Sign(id[:], key)
	if err != nil {
		return nil, "", err
	}
	var tx []byte
	tx = protowire.AppendTag(tx, 1, protowire.BytesType)
	tx = protowire.AppendBytes(tx, raw)
	tx = protowire.AppendTag(tx, 2, protowire.BytesType)
	tx = protowire.AppendBytes(tx, sig)
	return tx, hex.EncodeToString(id[:]), nil
}

// RawOf is the raw_data of a signed transaction from Sign, and its signatures.
func RawOf(tx []byte) (raw []byte, sigs [][]byte, err error) {
	err = fields(tx, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			raw = v
		case num == 2 && typ == protowire.BytesType:
			sigs = append(sigs, v)
		default:
			return fmt.Errorf("the signed transaction has field %d", num)
		}
		return nil
	})
	if err == nil && raw == nil {
		err = errors.New("the signed transaction has no raw_data")
	}
	return raw, sigs, err
}
