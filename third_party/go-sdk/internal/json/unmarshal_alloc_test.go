// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package json

import (
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"testing"
)

// TestUnmarshalAllocates checks that decoding a small message allocates about its own size,
// not a Decoder's 32 KiB read buffer: the server decodes every message several times, the
// first time as a batch (an array), which fails.
func TestUnmarshalAllocates(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_transfer","arguments":{"transfer_id":"be0c0000000000000000000a"}}}`)
	var before, after runtimeMem
	before.read()
	const runs = 100
	for range runs {
		var msg struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := Unmarshal(data, &msg); err != nil || msg.Method != "tools/call" {
			t.Fatalf("Unmarshal: %v %+v", err, msg)
		}
		var batch []json.RawMessage
		if err := Unmarshal(data, &batch); err == nil {
			t.Fatalf("Unmarshal of an object as an array: no error")
		}
	}
	after.read()
	if per := (after.bytes - before.bytes) / runs; per > 4096 {
		t.Errorf("Unmarshal of %d bytes allocated %d bytes", len(data), per)
	}
}

// TestUnmarshalErrorsUnchanged checks that empty and cut data keep the Decoder's errors.
func TestUnmarshalErrorsUnchanged(t *testing.T) {
	var v map[string]any
	if err := Unmarshal([]byte("  "), &v); !errors.Is(err, io.EOF) {
		t.Errorf("empty data: %v, want io.EOF", err)
	}
	if err := Unmarshal([]byte(`{"a":`), &v); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut data: %v, want io.ErrUnexpectedEOF", err)
	}
	if err := Unmarshal([]byte(`{"a":1} {`), &v); err != nil || v["a"] != 1.0 {
		t.Errorf("trailing data: %v %v, want the first value as the Decoder reads it", err, v)
	}
}

type runtimeMem struct{ bytes uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.bytes = s.TotalAlloc
}
