package mcpserver

import (
	"encoding/json"
	"testing"
)

// TestQueryText checks that an argument's URL text is what decoding it gives for every string,
// the ones its shortcut takes as they stand and the ones it leaves to the decoder, and its JSON
// for any other value.
func TestQueryText(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`"be0c0000000000000000000a"`, "be0c0000000000000000000a"},
		{`""`, ""},
		{`"a b/c?d"`, "a b/c?d"},
		{`"é"`, "é"},
		{`"a\"b"`, `a"b`},
		{`"a\\b"`, `a\b`},
		{`"\u00e9"`, "é"},
		{"\"\xff\"", "\uFFFD"},
		{`25`, "25"},
		{`true`, "true"},
		{`null`, ""},
	} {
		if got := queryText(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("queryText(%s) = %q, want %q", c.raw, got, c.want)
		}
		var s string
		if json.Unmarshal([]byte(c.raw), &s) == nil && s != c.want {
			t.Errorf("queryText(%s) = %q, decoding gives %q", c.raw, c.want, s)
		}
	}
}

// TestResultOfAnAnswerThatIsNotAnObject: a 2xx answer that is not a JSON object is a tool error,
// not structured content the SDK cannot encode (it then never answers the HTTP request).
func TestResultOfAnAnswerThatIsNotAnObject(t *testing.T) {
	for _, body := range []string{"", "not json", `["a"]`, `{"a":`, "{\"a\":1}\n{"} {
		r := result(Response{Status: 200, Body: []byte(body)})
		if !r.IsError || r.StructuredContent != nil {
			t.Errorf("%q: %+v, want a tool error without structured content", body, r)
		}
	}
	r := result(Response{Status: 200, Body: []byte(" {\"transfer\":{\"id\":\"x\"}}\n")})
	if r.IsError || string(r.StructuredContent.(json.RawMessage)) != `{"transfer":{"id":"x"}}` {
		t.Errorf("an object: %+v", r)
	}
}
