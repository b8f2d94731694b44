package devchain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/go-logr/logr"

	"github.com/stablepay/payout-operator/internal/chain/token"
)

// Chain is one running dev chain.
type Chain struct {
	// Network is the EVM network this chain stands for (Base, Ethereum, ...).
	Network string
	// ChainID is its dev chain id (see the package doc).
	ChainID uint64
	// RPCURL is its JSON-RPC endpoint, http://127.0.0.1:<port>.
	RPCURL string
	// Tokens holds the address of each dev token on this chain (USDC, and USDT on ethereum).
	Tokens map[string]common.Address
	// GenesisHash identifies this chain's history among the chains of its network: a fresh
	// start makes a new one, a resume keeps it.
	GenesisHash common.Hash
	// Resumed reports whether the chain continued from the state of an earlier run.
	Resumed bool
	// Client and RPC are connected to RPCURL.
	Client *ethclient.Client
	RPC    *rpc.Client

	dir       string
	blockTime time.Duration
	cmd       *exec.Cmd
	exited    chan struct{} // closed when the anvil process has exited
	sendMu    sync.Mutex    // serializes nonce assignment and sending
}

// How long anvil may take to listen (loading a saved state of MaxStateBytes takes a few
// seconds) and to stop (it dumps its state first).
const (
	listenTimeout = time.Minute
	stopTimeout   = 30 * time.Second
)

// errInconsistent marks a resumed chain whose state does not match what Start expects.
var errInconsistent = errors.New("inconsistent chain state")

// chainMeta is what a saved state was made for; a state made for anything else is discarded.
type chainMeta struct {
	ChainID uint64 `json:"chainId"`
	Token   string `json:"token"` // sha256 of the token's creation bytecode
}

func (c *Chain) statePath() string { return filepath.Join(c.dir, "state.json") }
func (c *Chain) metaPath() string  { return filepath.Join(c.dir, "chain.json") }
func (c *Chain) logPath() string   { return filepath.Join(c.dir, "anvil.log") }

func (c *Chain) meta() chainMeta {
	sum := sha256.Sum256([]byte(token.StableTokenMetaData.Bin))
	return chainMeta{ChainID: c.ChainID, Token: hex.EncodeToString(sum[:])}
}

// start runs anvil for this chain, resuming its saved state when that is sound, and makes sure
// the tokens and balances are there. A resume that fails in any way is retried fresh.
func (c *Chain) start(ctx context.Context, o Options) error {
	c.dir, c.blockTime = chainDir(o.Dir, c.Network), o.BlockTime
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	log := o.Log.WithValues("network", c.Network, "chainId", c.ChainID)
	c.Resumed = c.resumable(log)
	if c.Resumed {
		if err := repairState(c.statePath()); err != nil {
			log.Error(err, "the saved chain cannot be repaired; starting a fresh chain")
			c.Resumed = false
		}
	}
	if !c.Resumed {
		c.discardState()
	}
	err := c.boot(ctx, o.Anvil, log)
	if err != nil && c.Resumed && ctx.Err() == nil {
		log.Error(err, "the saved chain could not be resumed; starting a fresh chain", "log", c.logPath())
		_ = c.stop()
		c.Resumed = false
		c.discardState()
		err = c.boot(ctx, o.Anvil, log)
	}
	if err != nil {
		_ = c.stop()
		return err
	}
	data, _ := json.Marshal(c.meta())
	if err := writeAtomic(c.metaPath(), data); err != nil {
		return err
	}
	log.Info("dev chain ready", "rpc", c.RPCURL, "resumed", c.Resumed, "genesis", c.GenesisHash.Hex())
	return nil
}

// resumable reports whether the saved state is one to continue from.
func (c *Chain) resumable(log logr.Logger) bool {
	st, err := os.Stat(c.statePath())
	if err != nil {
		return false
	}
	var m chainMeta
	data, err := os.ReadFile(c.metaPath())
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	switch {
	case err != nil || m != c.meta():
		log.Info("the saved chain was made for another chain id or token; starting a fresh chain")
		return false
	case st.Size() > MaxStateBytes:
		log.Info("the saved chain has grown past the resume limit; starting a fresh chain", "bytes", st.Size(), "limit", MaxStateBytes)
		return false
	}
	return true
}

// discardState moves the saved state aside (replacing the last one set aside), so that anvil
// starts a fresh chain.
func (c *Chain) discardState() {
	_ = os.Rename(c.statePath(), c.statePath()+".discarded")
	_ = os.Remove(c.metaPath())
}

// boot launches anvil, connects to it and ensures the tokens.
func (c *Chain) boot(ctx context.Context, anvil string, log logr.Logger) error {
	if err := c.launch(ctx, anvil); err != nil {
		return err
	}
	if err := c.connect(ctx); err != nil {
		return err
	}
	if c.Resumed {
		if err := c.checkHistory(ctx); err != nil {
			return err
		}
	}
	return c.ensureTokens(ctx, log)
}

var listening = regexp.MustCompile(`Listening on (127\.0\.0\.1:[0-9]+)`)

// launch starts anvil on a port of its choosing and waits until it listens.
func (c *Chain) launch(ctx context.Context, anvil string) error {
	logFile, err := os.OpenFile(c.logPath(), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child keeps its own descriptor
	args := []string{
		"--host", "127.0.0.1",
		"--port", "0",
		"--chain-id", strconv.FormatUint(c.ChainID, 10),
		"--block-time", strconv.FormatFloat(c.blockTime.Seconds(), 'f', -1, 64),
		"--color", "never",
	}
	if c.Resumed {
		args = append(args, "--state", c.statePath()) // load the saved chain, save it on exit
	} else {
		args = append(args, "--dump-state", c.statePath(), "--timestamp", strconv.FormatInt(genesisSecond(c.Network), 10))
	}
	cmd := exec.Command(anvil, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Ctrl-C in a terminal reaches only the parent, which stops the chains in order.
		Setpgid: true,
		// anvil stops (saving its state) when the parent dies without stopping it.
		Pdeathsig: syscall.SIGTERM,
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd, c.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(c.exited) }()

	deadline := time.NewTimer(listenTimeout)
	defer deadline.Stop()
	for {
		if m := listening.FindSubmatch(readHead(c.logPath())); m != nil {
			c.RPCURL = "http://" + string(m[1])
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("anvil exited: %s", lastLines(c.logPath(), 5))
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("anvil did not listen within %v (see %s)", listenTimeout, c.logPath())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lastGenesis is the genesis second of the last fresh chain of each network in this process.
var lastGenesis = struct {
	sync.Mutex
	at map[string]int64
}{at: map[string]int64{}}

// genesisSecond returns the genesis timestamp of a fresh chain of network: now, but later than
// the last fresh one of that network in this process, waiting for the clock when needed.
// anvil's genesis hash depends only on the genesis timestamp (not on the chain id), so two fresh
// chains of one network started within a second would otherwise share their genesis hash, and
// a restart from scratch would look like the same chain to a deposit watcher. (anvil's --init,
// which could set the genesis coinbase, cannot be combined with saving the state.)
func genesisSecond(network string) int64 {
	lastGenesis.Lock()
	defer lastGenesis.Unlock()
	t := max(time.Now().Unix(), lastGenesis.at[network]+1)
	time.Sleep(time.Until(time.Unix(t, 0)))
	lastGenesis.at[network] = t
	return t
}

// connect dials the node and checks that it is the chain it should be.
func (c *Chain) connect(ctx context.Context) error {
	r, err := rpc.DialContext(ctx, c.RPCURL)
	if err != nil {
		return err
	}
	c.RPC, c.Client = r, ethclient.NewClient(r)
	id, err := c.Client.ChainID(ctx)
	if err != nil {
		return err
	}
	if !id.IsUint64() || id.Uint64() != c.ChainID {
		return fmt.Errorf("%w: chain id %s, want %d", errInconsistent, id, c.ChainID)
	}
	var genesis struct {
		Hash common.Hash `json:"hash"`
	}
	if err := c.RPC.CallContext(ctx, &genesis, "eth_getBlockByNumber", "0x0", false); err != nil {
		return err
	}
	c.GenesisHash = genesis.Hash
	return nil
}

// checkHistory checks that a resumed chain's genesis is the parent of its block 1, as anvil
// answers them.
func (c *Chain) checkHistory(ctx context.Context) error {
	var block1 struct {
		ParentHash common.Hash `json:"parentHash"`
	}
	if err := c.RPC.CallContext(ctx, &block1, "eth_getBlockByNumber", "0x1", false); err != nil {
		return err
	}
	if block1.ParentHash != c.GenesisHash {
		return fmt.Errorf("%w: block 0 is %s but block 1's parent is %s", errInconsistent, c.GenesisHash, block1.ParentHash)
	}
	return nil
}

// stop stops anvil with SIGTERM (it saves its state and exits) and waits for it.
func (c *Chain) stop() error {
	if c.Client != nil {
		c.Client.Close()
		c.Client, c.RPC = nil, nil
	}
	if c.cmd == nil {
		return nil
	}
	defer func() { c.cmd = nil }()
	select {
	case <-c.exited:
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		return nil
	case <-time.After(stopTimeout):
		_ = c.cmd.Process.Kill()
		<-c.exited
		return fmt.Errorf("anvil (pid %d) did not stop within %v and was killed", c.cmd.Process.Pid, stopTimeout)
	}
}

// pid returns anvil's process id while it runs, else 0.
func (c *Chain) pid() int {
	if c.cmd == nil {
		return 0
	}
	select {
	case <-c.exited:
		return 0
	default:
		return c.cmd.Process.Pid
	}
}

// readHead returns the first 64 KiB of a file (anvil's banner and "Listening on" line).
func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, buf)
	return buf[:n]
}

func lastLines(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte(" | ")))
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
