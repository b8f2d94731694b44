package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// body is a JSON request object read field by field, so that every error names its field, a
// wrong type is never coerced, and no field is silently dropped.
type body struct {
	fields map[string]json.RawMessage
	read   map[string]bool
}

// decodeBody reads the request body as one JSON object.
func decodeBody(r *http.Request) (*body, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apierror.Errorf(apierror.TooLarge, "request body too large: at most %d bytes", tooLarge.Limit)
		}
		return nil, apierror.Errorf(apierror.Invalid, "could not read the request body")
	}
	return parseBody(data)
}

// parseBody parses data as one JSON object with unique keys.
func parseBody(data []byte) (*body, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, apierror.Errorf(apierror.Invalid, "request body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, malformed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, apierror.Errorf(apierror.Invalid, "request body must be a JSON object")
	}
	b := &body{fields: map[string]json.RawMessage{}, read: map[string]bool{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, malformed(err)
		}
		if _, dup := b.fields[name]; dup {
			return nil, apierror.FieldErrorf(name, "appears more than once")
		}
		b.fields[name] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, apierror.Errorf(apierror.Invalid, "malformed JSON: data after the object")
	}
	return b, nil
}

func malformed(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return apierror.Errorf(apierror.Invalid, "malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return apierror.Errorf(apierror.Invalid, "malformed JSON: unexpected end of the body")
	}
	return apierror.Errorf(apierror.Invalid, "malformed JSON")
}

// raw returns a field's JSON, nil when absent or null (null means "not given").
func (b *body) raw(name string) json.RawMessage {
	b.read[name] = true
	v, ok := b.fields[name]
	if !ok || string(v) == "null" {
		return nil
	}
	return v
}

// str reads a string field; ok is false when it is absent.
func (b *body) str(name string) (s string, ok bool, err error) {
	v := b.raw(name)
	if v == nil {
		return "", false, nil
	}
	if v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", false, apierror.FieldErrorf(name, "must be a string")
	}
	return s, true, nil
}

// requiredStr reads a string field that must be present and not blank.
func (b *body) requiredStr(name string) (string, error) {
	s, ok, err := b.str(name)
	if err != nil {
		return "", err
	}
	if !ok || strings.TrimSpace(s) == "" {
		return "", apierror.FieldErrorf(name, "is required")
	}
	return s, nil
}

// number reads a JSON number exactly, as a decimal; a numeric string is refused, since the
// interface says number.
func (b *body) number(name string) (d decimal.Decimal, ok bool, err error) {
	v := b.raw(name)
	if v == nil {
		return decimal.Decimal{}, false, nil
	}
	var n json.Number
	if !isJSONNumber(v) || json.Unmarshal(v, &n) != nil {
		return decimal.Decimal{}, false, apierror.FieldErrorf(name, "must be a number")
	}
	d, err = decimal.NewFromString(n.String())
	if err != nil {
		return decimal.Decimal{}, false, apierror.FieldErrorf(name, "must be a number")
	}
	return d, true, nil
}

// integer reads a JSON integer within the exact range of JSON numbers.
func (b *body) integer(name string) (n int64, ok bool, err error) {
	v := b.raw(name)
	if v == nil {
		return 0, false, nil
	}
	n, err = strconv.ParseInt(string(v), 10, 64)
	if err != nil || n > 1<<53-1 || n < -(1<<53-1) {
		return 0, false, apierror.FieldErrorf(name, "must be an integer")
	}
	return n, true, nil
}

// boolean reads a JSON boolean.
func (b *body) boolean(name string) (v bool, ok bool, err error) {
	r := b.raw(name)
	if r == nil {
		return false, false, nil
	}
	switch string(r) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, apierror.FieldErrorf(name, "must be true or false")
}

// object reads a JSON object field as generic JSON (numbers as json.Number). A key that appears
// twice in any object inside it is refused, as at the top level: last-one-wins would keep a
// value the caller may not have meant.
func (b *body) object(name string) (m map[string]any, ok bool, err error) {
	v := b.raw(name)
	if v == nil {
		return nil, false, nil
	}
	if v[0] != '{' {
		return nil, false, apierror.FieldErrorf(name, "must be an object")
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	val, err := decodeValue(dec, name)
	if err != nil {
		if apierror.CodeOf(err) == apierror.Invalid {
			return nil, false, err
		}
		return nil, false, apierror.FieldErrorf(name, "must be an object")
	}
	return val.(map[string]any), true, nil
}

// decodeValue reads the next JSON value of dec as generic JSON: objects as map[string]any,
// arrays as []any, numbers as json.Number (dec uses UseNumber), strings, booleans and nil. A
// key that appears twice in one object is a 400 naming it by its path from path.
func decodeValue(dec *json.Decoder, path string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch delim {
	case '{':
		m := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			sub := path + "." + clipKey(key)
			if _, dup := m[key]; dup {
				return nil, apierror.FieldErrorf(sub, "appears more than once")
			}
			if m[key], err = decodeValue(dec, sub); err != nil {
				return nil, err
			}
		}
		_, err := dec.Token() // '}'
		return m, err
	case '[':
		a := []any{}
		for i := 0; dec.More(); i++ {
			v, err := decodeValue(dec, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ']'
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", delim)
}

// clipKey keeps caller-chosen keys short in error texts.
func clipKey(k string) string {
	if r := []rune(k); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return k
}

// unknown refuses fields no reader asked for: a misspelt optional field must not be ignored.
func (b *body) unknown() error {
	var extra []string
	for name := range b.fields {
		if !b.read[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	return apierror.FieldErrorf(extra[0], "unknown field")
}

func isJSONNumber(v json.RawMessage) bool {
	c := v[0]
	return c == '-' || (c >= '0' && c <= '9')
}

// jsonDecimal writes a decimal as a JSON number, never through float64.
type jsonDecimal string

func (d jsonDecimal) MarshalJSON() ([]byte, error) { return []byte(d), nil }

// num renders d as a JSON number with its own digits.
func num(d decimal.Decimal) jsonDecimal { return jsonDecimal(d.String()) }

// fixed renders d as a JSON number with exactly places decimals ("25.00").
func fixed(d decimal.Decimal, places int32) jsonDecimal { return jsonDecimal(d.StringFixed(places)) }

// numPtr renders an optional decimal; nil stays nil (absent or null by the field's tag).
func numPtr(d *decimal.Decimal) *jsonDecimal {
	if d == nil {
		return nil
	}
	v := num(*d)
	return &v
}

// mustDecimal parses a decimal the schema already validated.
func mustDecimal(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		panic(fmt.Sprintf("stored decimal %q is invalid: %v", s, err))
	}
	return d
}
