// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	internaljson "github.com/modelcontextprotocol/go-sdk/internal/json"
	"github.com/modelcontextprotocol/go-sdk/internal/jsonrpc2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// releaseReadBatch is readBatch as released.
func releaseReadBatch(data []byte) (msgs []jsonrpc.Message, isBatch bool, _ error) {
	var rawBatch []json.RawMessage
	if err := internaljson.Unmarshal(data, &rawBatch); err == nil {
		if len(rawBatch) == 0 {
			return nil, true, fmt.Errorf("empty batch")
		}
		for _, raw := range rawBatch {
			msg, err := jsonrpc2.DecodeMessage(raw)
			if err != nil {
				return nil, true, err
			}
			msgs = append(msgs, msg)
		}
		return msgs, true, nil
	}
	msg, err := jsonrpc2.DecodeMessage(data)
	return []jsonrpc.Message{msg}, false, err
}

const oneCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get","arguments":{"id":"be0c0000000000000000000a"}}}`

// TestReadBatchAsReleased checks that readBatch reads every kind of body as
// the release did (batches, single messages, null, whitespace, bad and cut
// data), and that a single message, which cannot be a batch, is not decoded
// as one first: it costs one decode, not a failed decode and then one.
func TestReadBatchAsReleased(t *testing.T) {
	for _, data := range []string{
		oneCall,
		" \t\r\n" + oneCall,
		`[` + oneCall + `,{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		" \n[" + oneCall + "]",
		`[]`, `null`, ` null `, `nul`, `[`, `[1]`, `[{"jsonrpc":"1.0","id":1,"method":"x"}]`,
		``, ` `, `{`, `{"jsonrpc":"2.0"`, `"text"`, `12`, `true`, `{}`, `{"jsonrpc":"2.0","id":1,"result":{}}`,
		"\xef\xbb\xbf" + oneCall, `{"jsonrpc":"2.0","id":1,"method":"x"} [`,
	} {
		msgs, isBatch, err := readBatch([]byte(data))
		wmsgs, wisBatch, werr := releaseReadBatch([]byte(data))
		if isBatch != wisBatch || fmt.Sprint(err) != fmt.Sprint(werr) || !reflect.DeepEqual(msgs, wmsgs) {
			t.Errorf("%q: readBatch gave %v, %v, %v; the release %v, %v, %v", data, msgs, isBatch, err, wmsgs, wisBatch, werr)
		}
	}

	got := testing.AllocsPerRun(100, func() { _, _, _ = readBatch([]byte(oneCall)) })
	one := testing.AllocsPerRun(100, func() { _, _ = jsonrpc2.DecodeMessage([]byte(oneCall)) })
	// readBatch adds the slice it returns to the decode.
	if got > one+1 {
		t.Errorf("readBatch of one message: %v allocations, decoding it %v", got, one)
	}
}
