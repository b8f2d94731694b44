// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// marshalText writes x as MarshalJSON's json.Marshal writes it, in one pass,
// where x has the common shape of a tool's answer: text content without
// _meta or annotations, structured content that is JSON already (a
// json.RawMessage), no input requests. encoding/json compacts the output of
// every json.Marshaler it calls, wherever it is nested: the structured
// content, each text block's MarshalJSON (the text escaped in it), and then
// MarshalJSON's own output once more where it is nested in another value.
// Here each is encoded once, by encoding/json (so the bytes are its own: the
// structured content compacted and validated, HTML characters escaped, invalid
// UTF-8 replaced), straight into the answer. ok is false for any other shape,
// and for structured content that is not valid JSON, so that MarshalJSON's
// usual way answers (its error included).
func (x *CallToolResult) marshalText() (data []byte, ok bool) {
	raw, isRaw := x.StructuredContent.(json.RawMessage)
	if x.StructuredContent != nil && (!isRaw || len(raw) == 0) || x.InputRequests != nil {
		return nil, false
	}
	rawExtra := compactBound(raw)
	size := 64 + len(raw) + rawExtra
	for _, c := range x.Content {
		t, isText := c.(*TextContent)
		if !isText || t == nil || len(t.Meta) > 0 || t.Annotations != nil {
			return nil, false
		}
		size += 32 + len(t.Text) + stringBound(t.Text)
	}
	var buf bytes.Buffer
	buf.Grow(size)
	enc := json.NewEncoder(&buf)
	// value writes v as json.Marshal would, without the newline of Encode.
	value := func(v any) bool {
		if enc.Encode(v) != nil {
			return false
		}
		buf.Truncate(buf.Len() - 1)
		return true
	}
	buf.WriteByte('{')
	if len(x.Meta) > 0 {
		buf.WriteString(`"_meta":`)
		if !value(map[string]any(x.Meta)) {
			return nil, false
		}
		buf.WriteByte(',')
	}
	buf.WriteString(`"content":`)
	if x.Content == nil {
		buf.WriteString("null")
	} else {
		buf.WriteByte('[')
		for i, c := range x.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(`{"type":"text","text":`)
			if !value(c.(*TextContent).Text) {
				return nil, false
			}
			buf.WriteByte('}')
		}
		buf.WriteByte(']')
	}
	if raw != nil {
		buf.WriteString(`,"structuredContent":`)
		// Without a character to escape, compacting it as encoding/json does
		// is Compact, straight into the answer.
		if rawExtra == 0 && json.Compact(&buf, raw) != nil || rawExtra > 0 && !value(raw) {
			return nil, false
		}
	}
	if x.IsError {
		buf.WriteString(`,"isError":true`)
	}
	if x.RequestState != "" {
		buf.WriteString(`,"requestState":`)
		if !value(x.RequestState) {
			return nil, false
		}
	}
	if x.resultType != "" {
		buf.WriteString(`,"resultType":`)
		if !value(string(x.resultType)) {
			return nil, false
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), true
}

// stringExtra is what encoding/json adds to a byte of a string as it escapes
// it, at most (U+2028 and U+2029, whose encoding starts with 0xE2, become
// \u2028 and \u2029; see stringBound for invalid UTF-8), and compactExtra
// what it adds to a byte of JSON as it compacts it with HTML characters
// escaped (compacting removes bytes, never adds them): the size of the answer
// is known before it is written, so that its buffer is allocated once.
var stringExtra, compactExtra [256]byte

func init() {
	for c := range 256 {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			stringExtra[c] = 1
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			stringExtra[c] = 5
		case c == 0xE2:
			stringExtra[c] = 3
		}
		switch c {
		case '<', '>', '&':
			compactExtra[c] = 5
		case 0xE2:
			compactExtra[c] = 3
		}
	}
}

// stringBound is the most that encoding/json adds to s as it writes it as a
// string.
func stringBound(s string) int {
	n, high := 0, 0
	for i := 0; i < len(s); i++ {
		n += int(stringExtra[s[i]])
		high += int(s[i] >> 7)
	}
	if high > 0 && !utf8.ValidString(s) {
		n += 5 * high // each byte of invalid UTF-8 becomes \ufffd
	}
	return n
}

// compactBound is the most that encoding/json adds to raw as it compacts it.
func compactBound(raw []byte) int {
	n := 0
	for _, c := range raw {
		n += int(compactExtra[c])
	}
	return n
}
