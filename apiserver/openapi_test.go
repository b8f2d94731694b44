package apiserver

import (
	"context"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, err := openAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := spec.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is invalid: %v", err)
	}
	srv := &Server{}
	for _, rt := range srv.routes() {
		item := spec.Paths.Find(rt.path)
		if item == nil || item.GetOperation(rt.method) == nil {
			t.Errorf("%s %s is served but not documented", rt.method, rt.path)
		}
	}
}

// TestOpenAPIDocumentsEveryOperation: each operation has a summary, a description and a
// declared tag; each request body and each error response carries an example (which the
// loader's validation checks against its schema). Spectral (make lint-openapi) lints the rest.
func TestOpenAPIDocumentsEveryOperation(t *testing.T) {
	doc, err := openAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]bool{}
	for _, tag := range spec.Tags {
		if tag.Description == "" {
			t.Errorf("tag %s has no description", tag.Name)
		}
		tags[tag.Name] = true
	}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			if op.Summary == "" || op.Description == "" {
				t.Errorf("%s: summary %q, description %q: both are needed", name, op.Summary, op.Description)
			}
			if len(op.Tags) == 0 {
				t.Errorf("%s has no tag", name)
			}
			for _, tag := range op.Tags {
				if !tags[tag] {
					t.Errorf("%s: tag %s is not declared", name, tag)
				}
			}
			if rb := op.RequestBody; rb != nil {
				for mt, media := range rb.Value.Content {
					if media.Example == nil && len(media.Examples) == 0 {
						t.Errorf("%s: the %s request body has no example", name, mt)
					}
				}
			}
			for code, resp := range op.Responses.Map() {
				if code != "default" && code < "400" {
					continue
				}
				for mt, media := range resp.Value.Content {
					if media.Example == nil && len(media.Examples) == 0 {
						t.Errorf("%s: the %s %s answer has no example", name, code, mt)
					}
				}
			}
		}
	}
}
