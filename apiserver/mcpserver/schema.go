package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
)

// openAPI is the facade's OpenAPI 3.0 document, read as plain JSON: the tools take their input
// and output schemas from it, so that a tool accepts the fields, types, enums and required
// fields the REST operation does, and the two cannot drift.
type openAPI struct {
	doc map[string]any
}

func parseOpenAPI(data []byte) (*openAPI, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is not JSON: %w", err)
	}
	return &openAPI{doc: doc}, nil
}

// operation is the OpenAPI operation of method and path (its path-level parameters merged in).
type operation struct {
	params []map[string]any
	body   map[string]any // the JSON request body's schema, resolved; nil without a body
	output map[string]any // the schema of the success answer, resolved
}

func (o *openAPI) operation(method, path string) (*operation, error) {
	item, _ := o.at("paths", path).(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return nil, fmt.Errorf("the OpenAPI document has no operation %s %s", method, path)
	}
	out := &operation{}
	for _, list := range []any{item["parameters"], op["parameters"]} {
		ps, _ := list.([]any)
		for _, p := range ps {
			pm, _ := o.resolve(p).(map[string]any)
			out.params = append(out.params, pm)
		}
	}
	if rb, _ := o.resolve(op["requestBody"]).(map[string]any); rb != nil {
		out.body, _ = o.at2(rb, "content", "application/json", "schema").(map[string]any)
	}
	resps, _ := op["responses"].(map[string]any)
	for _, code := range []string{"200", "201"} {
		if r, _ := o.resolve(resps[code]).(map[string]any); r != nil {
			out.output, _ = o.at2(r, "content", "application/json", "schema").(map[string]any)
			break
		}
	}
	if out.output == nil {
		return nil, fmt.Errorf("the OpenAPI operation %s %s has no JSON success answer", method, path)
	}
	return out, nil
}

// at follows keys from the document's root.
func (o *openAPI) at(keys ...string) any { return o.at2(o.doc, keys...) }

// at2 follows keys from v, resolving what it reaches.
func (o *openAPI) at2(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := o.resolve(v).(map[string]any)
		if m == nil {
			return nil
		}
		v = m[k]
	}
	return o.resolve(v)
}

// resolve returns v with every local $ref replaced by what it names and OpenAPI 3.0's
// "nullable" and exclusive bounds spelled as JSON Schema says them; "example" (not JSON
// Schema) is dropped.
func (o *openAPI) resolve(v any) any { return o.resolveIn(v, false) }

// resolveIn is resolve; names says v is a map of property names (whose keys are never keywords).
func (o *openAPI) resolveIn(v any, names bool) any {
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"].(string); ok {
			var target any = o.doc
			for _, k := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
				m, _ := target.(map[string]any)
				target = m[k]
			}
			return o.resolveIn(target, names)
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			if !names && (k == "example" || k == "examples" || k == "nullable") {
				continue
			}
			out[k] = o.resolveIn(e, !names && k == "properties")
		}
		if !names {
			// OpenAPI 3.0 writes an exclusive bound as a flag beside the bound; JSON Schema
			// (2020-12, which MCP clients validate with) as the bound itself
			for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
				if t[b[0]] == true {
					out[b[0]] = out[b[1]]
					delete(out, b[1])
				} else if t[b[0]] == false {
					delete(out, b[0])
				}
			}
		}
		if !names && t["nullable"] == true {
			// anyOf with a null branch, not a type list: clients that map schemas onto a
			// single-type dialect (the MCP Inspector's portability check names them) keep it
			return map[string]any{"anyOf": []any{out, map[string]any{"type": "null"}}}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = o.resolveIn(e, false)
		}
		return out
	}
	return v
}
