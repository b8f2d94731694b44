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
