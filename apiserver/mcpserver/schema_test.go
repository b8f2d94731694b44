package mcpserver

import (
	"encoding/json"
	"reflect"
	"testing"
)

const testDoc = `{
  "paths": {
    "/things/{id}": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
      "get": {
        "parameters": [{"$ref": "#/components/parameters/Verbose"}],
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}
      }
    }
  },
  "components": {
    "parameters": {"Verbose": {"name": "verbose", "in": "query", "schema": {"type": "boolean"}}},
    "schemas": {
      "Thing": {
        "type": "object", "example": {"id": 1},
        "properties": {
          "example": {"type": "string"},
          "nullable": {"type": "string"},
          "note": {"type": "string", "nullable": true},
          "rate": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
          "fee": {"type": "number", "minimum": 0, "exclusiveMinimum": false}
        }
      }
    }
  }
}`

// The OpenAPI 3.0 spellings become JSON Schema's; property names that happen to be OpenAPI
// keywords stay properties.
func TestOperationSchemas(t *testing.T) {
	doc, err := parseOpenAPI([]byte(testDoc))
	if err != nil {
		t.Fatal(err)
	}
	op, err := doc.operation("GET", "/things/{id}")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range op.params {
		names = append(names, p["name"].(string))
	}
	if !reflect.DeepEqual(names, []string{"id", "verbose"}) {
		t.Errorf("parameters %v, want the path item's then the operation's, refs resolved", names)
	}
	var want map[string]any
	_ = json.Unmarshal([]byte(`{
	  "type": "object",
	  "properties": {
	    "example": {"type": "string"},
	    "nullable": {"type": "string"},
	    "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
	    "rate": {"type": "number", "exclusiveMinimum": 0},
	    "fee": {"type": "number", "minimum": 0}
	  }
	}`), &want)
	if !reflect.DeepEqual(op.output, want) {
		got, _ := json.Marshal(op.output)
		t.Errorf("output schema %s", got)
	}
	if _, err := doc.operation("POST", "/things/{id}"); err == nil {
		t.Error("an operation the document lacks must be an error")
	}
}
