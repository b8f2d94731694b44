package devchain

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// repairState prepares a saved anvil state for loading. anvil 1.7.1 makes a new genesis block
// at every start and, when it loads a state, adds the saved blocks next to it; its next dump
// holds both genesis blocks, and a state resumed n times holds n+1 of them. Which one
// eth_getBlockByNumber(0) answers after a load then depends on the order of the saved blocks
// (measured: on the 4th of 5 resumes it was a genesis that is not block 1's parent). With only
// the chain's own genesis in the file, the loaded one replaces the new one: repairState keeps
// the genesis that is block 1's parent and drops the others. Start still checks the loaded
// chain (see checkHistory).
func repairState(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal(data, &state); err != nil {
		return err
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(state["blocks"], &blocks); err != nil {
		return fmt.Errorf("saved blocks: %w", err)
	}
	type brief struct {
		Header struct {
			Number     hexutil.Uint64 `json:"number"`
			ParentHash common.Hash    `json:"parentHash"`
		} `json:"header"`
	}
	var genesis []int
	var parent *common.Hash
	for i, raw := range blocks {
		var b brief
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("saved block: %w", err)
		}
		switch b.Header.Number {
		case 0:
			genesis = append(genesis, i)
		case 1:
			parent = &b.Header.ParentHash
		}
	}
	if len(genesis) <= 1 {
		return nil
	}
	if parent == nil {
		return fmt.Errorf("%w: %d genesis blocks and no block 1", errInconsistent, len(genesis))
	}
	keep := -1
	for _, i := range genesis {
		var b struct {
			Header types.Header `json:"header"`
		}
		if err := json.Unmarshal(blocks[i], &b); err != nil {
			return fmt.Errorf("saved genesis: %w", err)
		}
		if b.Header.Hash() == *parent {
			keep = i
		}
	}
	if keep < 0 {
		return fmt.Errorf("%w: none of %d saved genesis blocks is block 1's parent %s", errInconsistent, len(genesis), parent)
	}
	kept := blocks[:0]
	for i, raw := range blocks {
		if i == keep || !slices.Contains(genesis, i) {
			kept = append(kept, raw)
		}
	}
	if state["blocks"], err = json.Marshal(kept); err != nil {
		return err
	}
	if data, err = json.Marshal(state); err != nil {
		return err
	}
	return writeAtomic(path, data)
}
