// Package sweep signs the transactions that move deposits to the treasury on EVM networks, and
// reads from a mined one what it moved.
//
// # Mechanism: EIP-7702
//
// Each deposit address's key signs an EIP-7702 authorization that delegates the address to
// SweepDelegate (SweepDelegate.sol, its creation bytecode embedded here): code that can do one
// thing, send the address's whole balance of a token to the treasury fixed in the contract's
// code. The sweeper's gas wallet then sends one type-4 transaction per batch that carries the
// authorizations and calls the delegate's sweepBatch, which calls sweep on every deposit
// address. The gas wallet pays all the gas; a deposit address never holds native coins, so
// none is stranded there (docs/architecture.md, "Treasury: how deposits are swept"; the gas
// measured per deposit is in docs/benchmarks.md).
//
// On a network without EIP-7702 (Avalanche's C-Chain today) SignPermits is the fallback: each
// deposit key signs an EIP-2612 permit for the same delegate contract, and one transaction of
// the gas wallet per batch calls its sweepPermits, which pulls every permitted value to the
// treasury. Nothing is stranded there either.
//
// The delegate is deployed through the deterministic CREATE2 deployer (Arachnid's, at
// 0x4e59b44847b379578588920ca78fbf26c0b4956c: anvil has it from genesis; on a public network
// check it is there before the first SignDeploy) with a zero salt, so its address is a function of this package's bytecode and the treasury alone:
// DelegateAddress. Sign delegates to that address and to no other, so no configuration and no
// caller can point a deposit key's authorization at other code or another treasury. SignDeploy
// signs its deployment, once per network and treasury; Deployed says whether it is there.
//
// # Signing without sending, and a re-sign after a crash
//
// Sign builds and signs a batch and broadcasts nothing: the caller stores Signed.Raw and
// Signed.Hash (with the gas wallet's nonce and the batch's deposits) before it broadcasts, as
// refunds do, and after a crash broadcasts the stored bytes again rather than signing anew.
// Tokens are never sent twice even when it does sign again: no amount is signed. sweep reads
// the address's balance when it runs and sends exactly that, so a second sweep of an address
// moves what arrived since the first (0 for a swept address), and only to the treasury. Two
// batches signed with the same gas-wallet nonce are one transaction at most on chain; signed
// with different nonces, both may be mined, and the second moves nothing of what the first
// moved. What a mined batch moved is read from its receipt (Swept): the token's Transfer events
// from each deposit address to the treasury, in base units.
//
// # Authorizations
//
// An authorization is signed for the chain id (never 0, which would make it valid on every
// chain) and the deposit account's current nonce (Nonces reads them): a fresh deposit address
// has never sent a transaction, so its nonce is 0, and applying the authorization raises it to
// 1. The delegation stays after the transaction, so a later sweep of the same address works
// even if its new authorization does not apply (a stale nonce); an account whose authorization
// never applied has no code, and sweeping it moves nothing and fails nothing else in the batch.
package sweep

import (
	"context"
	"crypto/ecdsa"
	_ "embed"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

// The delegate as compiled by hack/compile-token.sh (`make sweep-delegate`); the test compiles
// SweepDelegate.sol again and fails when these differ.
var (
	//go:embed SweepDelegate.bin
	delegateBin string
	//go:embed SweepDelegate.abi
	delegateABIJSON string
)

var (
	delegateABI  = mustABI(delegateABIJSON)
	delegateCode = common.FromHex(strings.TrimSpace(delegateBin))
)

func mustABI(j string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(j))
	if err != nil {
		panic(err)
	}
	return a
}

// Create2Deployer is the deterministic deployment proxy the delegate is deployed through: its
// input is a 32-byte salt followed by the creation code, and it creates the contract with
// CREATE2 at an address that depends on nothing else.
var Create2Deployer = common.HexToAddress("0x4e59b44847b379578588920ca78fbf26c0b4956c")

// MaxBatch bounds the deposits of one batch, so that a batch fits a block's gas limit with a
// wide margin on every network (GasLimit(MaxBatch) is under 10 M gas).
const MaxBatch = 100

// DeployGas is the gas limit of the delegate's deployment.
const DeployGas = 1_000_000

// Gas limits of a batch: GasLimit(n) = batchBaseGas + n·perDepositGas. On go-ethereum's EVM
// (docs/benchmarks.md) a batch of one fresh deposit used 60,940 gas and a batch of fifty 32,005
// per deposit, with OpenZeppelin's ERC-20; the limit leaves room for a token whose transfer costs
// more (USDC's proxy and blocklist, USDT) and for refunds that do not come.
const (
	batchBaseGas  = 50_000
	perDepositGas = 90_000
)

// GasLimit is the gas limit Sign gives a batch of n deposits when Batch.Gas is 0. Unused gas is
// not paid for; the limit only bounds the gas wallet's balance the transaction needs
// (limit × fee cap).
func GasLimit(n int) uint64 { return batchBaseGas + uint64(n)*perDepositGas }

// salt is the CREATE2 salt of the delegate: zero, so the address depends on the code alone.
var salt [32]byte

// initCode is the delegate's creation code with its constructor argument, the treasury.
func initCode(treasury common.Address) []byte {
	args, err := delegateABI.Pack("", treasury)
	if err != nil {
		panic(err) // one address argument: cannot fail
	}
	return append(append([]byte{}, delegateCode...), args...)
}

// DelegateAddress is the address of the delegate that sweeps to treasury, the same on every
// network: the CREATE2 address of its creation code through Create2Deployer.
func DelegateAddress(treasury common.Address) common.Address {
	return crypto.CreateAddress2(Create2Deployer, salt, crypto.Keccak256(initCode(treasury)))
}

// Fees are the EIP-1559 fees of a transaction, in wei per gas.
type Fees struct {
	TipCap *big.Int // maxPriorityFeePerGas
	FeeCap *big.Int // maxFeePerGas
}

func (f Fees) check() error {
	if f.TipCap == nil || f.FeeCap == nil || f.TipCap.Sign() < 0 || f.FeeCap.Sign() <= 0 {
		return errors.New("sweep: the fees are missing or not positive")
	}
	if f.FeeCap.Cmp(f.TipCap) < 0 {
		return errors.New("sweep: the fee cap is below the tip cap")
	}
	if f.FeeCap.BitLen() > 256 {
		return errors.New("sweep: the fee cap does not fit 256 bits")
	}
	return nil
}

// Deposit is one deposit address of a batch.
type Deposit struct {
	// Key is the deposit address's private key (depositkey.Private.Key of its path).
	Key *ecdsa.PrivateKey
	// Nonce is the account's nonce on chain, the one its authorization is signed for (Nonces).
	Nonce uint64
}

// Address is the deposit's address.
func (d Deposit) Address() common.Address { return crypto.PubkeyToAddress(d.Key.PublicKey) }

// Batch is what Sign needs to sign one sweep transaction.
type Batch struct {
	// ChainID of the network the transaction is for.
	ChainID *big.Int
	// Token is the token contract swept.
	Token common.Address
	// Treasury receives the tokens; the delegate at DelegateAddress(Treasury) must be deployed.
	Treasury common.Address
	// Deposits to sweep: 1 to MaxBatch distinct addresses, none of them the gas wallet.
	Deposits []Deposit
	// GasKey is the gas wallet's key: it signs and pays for the transaction.
	GasKey *ecdsa.PrivateKey
	// GasNonce is the gas wallet's nonce for this transaction.
	GasNonce uint64
	// Fees of the transaction.
	Fees Fees
	// Gas is the transaction's gas limit; 0 means GasLimit(len(Deposits)).
	Gas uint64
}

// Signed is a signed transaction, not broadcast: what the caller stores before it broadcasts.
type Signed struct {
	// Raw is the transaction's binary encoding, for eth_sendRawTransaction.
	Raw []byte
	// Hash is the transaction hash.
	Hash common.Hash
	// Nonce is the gas wallet's nonce the transaction uses.
	Nonce uint64
	// Deposits are the batch's deposit addresses, in the batch's order.
	Deposits []common.Address
}

// Sign builds and signs the batch's sweep transaction: an EIP-7702 transaction from the gas
// wallet to the delegate carrying one authorization per deposit (delegating it to
// DelegateAddress(Treasury)) and calling sweepBatch(Token, deposits). It reads nothing from the
// chain and broadcasts nothing.
func Sign(b Batch) (*Signed, error) {
	if err := checkBatch(b.ChainID, b.Token, b.Treasury, b.GasKey, len(b.Deposits), b.Fees); err != nil {
		return nil, err
	}
	gasWallet := crypto.PubkeyToAddress(b.GasKey.PublicKey)
	delegate := DelegateAddress(b.Treasury)
	chainID := uint256.MustFromBig(b.ChainID)
	seen := map[common.Address]bool{}
	addrs := make([]common.Address, len(b.Deposits))
	auths := make([]types.SetCodeAuthorization, len(b.Deposits))
	for i, d := range b.Deposits {
		if d.Key == nil {
			return nil, fmt.Errorf("sweep: deposit %d has no key", i)
		}
		a := d.Address()
		switch {
		case seen[a]:
			return nil, fmt.Errorf("sweep: deposit %s is twice in the batch", a.Hex())
		case a == gasWallet:
			// the sender's own authorization would need its nonce after this transaction's
			return nil, fmt.Errorf("sweep: deposit %s is the gas wallet", a.Hex())
		}
		seen[a], addrs[i] = true, a
		auth, err := types.SignSetCode(d.Key, types.SetCodeAuthorization{ChainID: *chainID, Address: delegate, Nonce: d.Nonce})
		if err != nil {
			return nil, fmt.Errorf("sweep: signing the authorization of %s: %w", a.Hex(), err)
		}
		auths[i] = auth
	}
	data := PackSweepBatch(b.Token, addrs)
	gas := b.Gas
	if gas == 0 {
		gas = GasLimit(len(b.Deposits))
	}
	tx := types.NewTx(&types.SetCodeTx{
		ChainID:   chainID,
		Nonce:     b.GasNonce,
		GasTipCap: uint256.MustFromBig(b.Fees.TipCap),
		GasFeeCap: uint256.MustFromBig(b.Fees.FeeCap),
		Gas:       gas,
		To:        delegate,
		Value:     new(uint256.Int),
		Data:      data,
		AuthList:  auths,
	})
	return sign(tx, b.ChainID, b.GasKey, addrs)
}

// checkBatch refuses what would make an unsafe or unminable batch transaction.
func checkBatch(chainID *big.Int, token, treasury common.Address, gasKey *ecdsa.PrivateKey, deposits int, fees Fees) error {
	if chainID == nil || chainID.Sign() <= 0 || chainID.BitLen() > 256 {
		return errors.New("sweep: no chain id (an authorization for chain 0 is valid on every chain)")
	}
	if token == (common.Address{}) || treasury == (common.Address{}) {
		return errors.New("sweep: the token and the treasury are required")
	}
	if gasKey == nil {
		return errors.New("sweep: no gas wallet key")
	}
	if deposits == 0 || deposits > MaxBatch {
		return fmt.Errorf("sweep: a batch has 1 to %d deposits, not %d", MaxBatch, deposits)
	}
	return fees.check()
}

// SignDeploy signs the deployment of the delegate that sweeps to treasury, through
// Create2Deployer, by the gas wallet with nonce: once per network and treasury (Deployed says
// whether it is there). Deploying it twice is harmless: the second creation fails and the
// first stays.
func SignDeploy(chainID *big.Int, treasury common.Address, gasKey *ecdsa.PrivateKey, nonce uint64, fees Fees) (*Signed, error) {
	if chainID == nil || chainID.Sign() <= 0 {
		return nil, errors.New("sweep: no chain id")
	}
	if treasury == (common.Address{}) {
		return nil, errors.New("sweep: no treasury")
	}
	if gasKey == nil {
		return nil, errors.New("sweep: no gas wallet key")
	}
	if err := fees.check(); err != nil {
		return nil, err
	}
	to := Create2Deployer
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID: chainID, Nonce: nonce, GasTipCap: fees.TipCap, GasFeeCap: fees.FeeCap, Gas: DeployGas,
		To: &to, Data: append(salt[:], initCode(treasury)...),
	})
	return sign(tx, chainID, gasKey, nil)
}

func sign(tx *types.Transaction, chainID *big.Int, key *ecdsa.PrivateKey, deposits []common.Address) (*Signed, error) {
	signed, err := types.SignTx(tx, types.NewPragueSigner(chainID), key)
	if err != nil {
		return nil, err
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return &Signed{Raw: raw, Hash: signed.Hash(), Nonce: tx.Nonce(), Deposits: deposits}, nil
}

// Reader is the part of an ethclient.Client the chain reads below use.
type Reader interface {
	CodeAt(ctx context.Context, account common.Address, blockNumber *big.Int) ([]byte, error)
	NonceAt(ctx context.Context, account common.Address, blockNumber *big.Int) (uint64, error)
}

// Deployed reports whether the delegate that sweeps to treasury is deployed (at the latest
// block). Code at DelegateAddress can only be the delegate's: a CREATE2 address is the hash of
// the creation code, treasury included.
func Deployed(ctx context.Context, r Reader, treasury common.Address) (bool, error) {
	code, err := r.CodeAt(ctx, DelegateAddress(treasury), nil)
	if err != nil {
		return false, err
	}
	return len(code) > 0, nil
}

// Nonces reads the accounts' nonces at the latest block, for their authorizations.
func Nonces(ctx context.Context, r Reader, accounts []common.Address) ([]uint64, error) {
	out := make([]uint64, len(accounts))
	for i, a := range accounts {
		n, err := r.NonceAt(ctx, a, nil)
		if err != nil {
			return nil, fmt.Errorf("sweep: the nonce of %s: %w", a.Hex(), err)
		}
		out[i] = n
	}
	return out, nil
}

// transferTopic is the topic of ERC-20's Transfer(address,address,uint256).
var transferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

// Swept returns what a mined sweep moved: per account, the base units of token its receipt's
// Transfer events carried from the account to treasury. A reverted transaction moved nothing
// (an empty map). Only events emitted by the token contract count; an account absent from the
// map moved nothing. The caller waits for the confirmations it requires before it counts them.
func Swept(r *types.Receipt, token, treasury common.Address) (map[common.Address]*big.Int, error) {
	out := map[common.Address]*big.Int{}
	if r == nil {
		return nil, errors.New("sweep: no receipt")
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return out, nil
	}
	for _, l := range r.Logs {
		if l.Address != token || len(l.Topics) != 3 || l.Topics[0] != transferTopic {
			continue
		}
		if common.BytesToAddress(l.Topics[2].Bytes()) != treasury {
			continue
		}
		if len(l.Data) != 32 {
			return nil, fmt.Errorf("sweep: a Transfer event of %s in %s has %d bytes of data, not 32", token.Hex(), r.TxHash.Hex(), len(l.Data))
		}
		from := common.BytesToAddress(l.Topics[1].Bytes())
		if out[from] == nil {
			out[from] = new(big.Int)
		}
		out[from].Add(out[from], new(big.Int).SetBytes(l.Data))
	}
	return out, nil
}

// PackSweep is the call data of sweep(token), which anyone may send to a delegated deposit
// address: it sends the address's balance of token to the treasury.
func PackSweep(token common.Address) []byte {
	data, err := delegateABI.Pack("sweep", token)
	if err != nil {
		panic(err) // an address argument: cannot fail
	}
	return data
}

// PackSweepBatch is the call data of sweepBatch(token, accounts), sent to the delegate.
func PackSweepBatch(token common.Address, accounts []common.Address) []byte {
	data, err := delegateABI.Pack("sweepBatch", token, accounts)
	if err != nil {
		panic(err) // an address and an address array: cannot fail
	}
	return data
}

// Gas limits of a permit batch: PermitGasLimit(n) = batchBaseGas + n·perPermitGas (a permit
// writes the allowance and the owner's permit nonce; the pull spends the allowance again).
const perPermitGas = 130_000

// PermitGasLimit is the gas limit SignPermits gives a batch of n permits when PermitBatch.Gas is
// 0.
func PermitGasLimit(n int) uint64 { return batchBaseGas + uint64(n)*perPermitGas }

// PermitDeposit is one deposit address of a permit batch.
type PermitDeposit struct {
	// Key is the deposit address's private key.
	Key *ecdsa.PrivateKey
	// Nonce is the owner's permit nonce at the token (nonces(owner); ReadPermits reads it).
	Nonce *big.Int
	// Value is what the permit allows and the batch pulls, in base units: the address's
	// balance when it is signed. A deposit arriving later stays for a later sweep.
	Value *big.Int
	// Deadline is the permit's expiry, a Unix time.
	Deadline *big.Int
}

// Address is the deposit's address.
func (d PermitDeposit) Address() common.Address { return crypto.PubkeyToAddress(d.Key.PublicKey) }

// PermitBatch is what SignPermits needs: a sweep for a network without EIP-7702, through the
// same delegate contract (deployed by SignDeploy), whose sweepPermits uses each deposit's
// EIP-2612 permit (signed for the delegate as the spender) and pulls the value to the treasury.
type PermitBatch struct {
	// ChainID of the network.
	ChainID *big.Int
	// Token is the token contract; it must implement EIP-2612 (USDC does).
	Token common.Address
	// DomainSeparator is the token's EIP-712 DOMAIN_SEPARATOR() (ReadPermits reads it).
	DomainSeparator common.Hash
	// Treasury receives the tokens; the delegate at DelegateAddress(Treasury) must be deployed.
	Treasury common.Address
	// Deposits to sweep: 1 to MaxBatch distinct addresses.
	Deposits []PermitDeposit
	// GasKey, GasNonce and Fees are the gas wallet's, as in Batch.
	GasKey   *ecdsa.PrivateKey
	GasNonce uint64
	Fees     Fees
	// Gas is the transaction's gas limit; 0 means PermitGasLimit(len(Deposits)).
	Gas uint64
}

// permitTypeHash is EIP-2612's Permit type hash.
var permitTypeHash = crypto.Keccak256([]byte("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"))

// permitArg is sweepPermits' Permit struct, as the ABI packer takes it.
type permitArg struct {
	Owner    common.Address
	Value    *big.Int
	Deadline *big.Int
	V        uint8
	R        [32]byte
	S        [32]byte
}

// SignPermits builds and signs a permit batch: each deposit key signs an EIP-2612 permit of
// its Value for the delegate, and the gas wallet's transaction calls the delegate's
// sweepPermits, which pulls every permitted value to the treasury. It reads nothing from the
// chain and broadcasts nothing; the caller stores Signed before it broadcasts, as for Sign. A
// batch signed again after a crash moves nothing twice: a permit's nonce is spent when it is
// used, so the same permit fails the second time and its deposit is skipped. What moved is
// read with Swept, as for a 7702 batch.
func SignPermits(b PermitBatch) (*Signed, error) {
	if err := checkBatch(b.ChainID, b.Token, b.Treasury, b.GasKey, len(b.Deposits), b.Fees); err != nil {
		return nil, err
	}
	if b.DomainSeparator == (common.Hash{}) {
		return nil, errors.New("sweep: no domain separator of the token")
	}
	delegate := DelegateAddress(b.Treasury)
	seen := map[common.Address]bool{}
	addrs := make([]common.Address, len(b.Deposits))
	permits := make([]permitArg, len(b.Deposits))
	for i, d := range b.Deposits {
		if d.Key == nil || d.Nonce == nil || d.Value == nil || d.Deadline == nil {
			return nil, fmt.Errorf("sweep: deposit %d lacks its key, permit nonce, value or deadline", i)
		}
		if d.Value.Sign() <= 0 {
			return nil, fmt.Errorf("sweep: deposit %d permits %s base units: nothing to sweep", i, d.Value)
		}
		a := d.Address()
		if seen[a] {
			return nil, fmt.Errorf("sweep: deposit %s is twice in the batch", a.Hex())
		}
		seen[a], addrs[i] = true, a
		structHash := crypto.Keccak256(permitTypeHash, common.LeftPadBytes(a.Bytes(), 32), common.LeftPadBytes(delegate.Bytes(), 32),
			math.U256Bytes(new(big.Int).Set(d.Value)), math.U256Bytes(new(big.Int).Set(d.Nonce)), math.U256Bytes(new(big.Int).Set(d.Deadline)))
		sig, err := crypto.Sign(crypto.Keccak256([]byte("\x19\x01"), b.DomainSeparator.Bytes(), structHash), d.Key)
		if err != nil {
			return nil, fmt.Errorf("sweep: signing the permit of %s: %w", a.Hex(), err)
		}
		p := permitArg{Owner: a, Value: d.Value, Deadline: d.Deadline, V: sig[64] + 27}
		copy(p.R[:], sig[:32])
		copy(p.S[:], sig[32:64])
		permits[i] = p
	}
	data, err := delegateABI.Pack("sweepPermits", b.Token, permits)
	if err != nil {
		return nil, err
	}
	gas := b.Gas
	if gas == 0 {
		gas = PermitGasLimit(len(b.Deposits))
	}
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID: b.ChainID, Nonce: b.GasNonce, GasTipCap: b.Fees.TipCap, GasFeeCap: b.Fees.FeeCap, Gas: gas,
		To: &delegate, Data: data,
	})
	return sign(tx, b.ChainID, b.GasKey, addrs)
}

// Caller is the part of an ethclient.Client ReadPermits uses.
type Caller interface {
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
}

// ReadPermits reads what a permit batch needs from the token at the latest block: its
// DOMAIN_SEPARATOR() and, per owner, the permit nonce (nonces) and the balance (balanceOf).
func ReadPermits(ctx context.Context, c Caller, token common.Address, owners []common.Address) (sep common.Hash, nonces, balances []*big.Int, err error) {
	call := func(data []byte) ([]byte, error) {
		out, err := c.CallContract(ctx, ethereum.CallMsg{To: &token, Data: data}, nil)
		if err == nil && len(out) != 32 {
			err = fmt.Errorf("sweep: token %s answered %d bytes, not 32", token.Hex(), len(out))
		}
		return out, err
	}
	out, err := call(crypto.Keccak256([]byte("DOMAIN_SEPARATOR()"))[:4])
	if err != nil {
		return sep, nil, nil, fmt.Errorf("sweep: DOMAIN_SEPARATOR of %s: %w", token.Hex(), err)
	}
	sep = common.BytesToHash(out)
	for _, o := range owners {
		arg := common.LeftPadBytes(o.Bytes(), 32)
		n, err := call(append(crypto.Keccak256([]byte("nonces(address)"))[:4:4], arg...))
		if err != nil {
			return sep, nil, nil, fmt.Errorf("sweep: the permit nonce of %s: %w", o.Hex(), err)
		}
		bal, err := call(append(crypto.Keccak256([]byte("balanceOf(address)"))[:4:4], arg...))
		if err != nil {
			return sep, nil, nil, fmt.Errorf("sweep: the balance of %s: %w", o.Hex(), err)
		}
		nonces, balances = append(nonces, new(big.Int).SetBytes(n)), append(balances, new(big.Int).SetBytes(bal))
	}
	return sep, nonces, balances, nil
}
