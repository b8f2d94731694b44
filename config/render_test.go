// Package config_test checks what config/ ships: the manifests config/default renders (statically,
// and on a real API server with server-side dry run, then applied for real by kubectl, then
// used under each service account's identity), the Grafana dashboard, and the Dockerfile.
package config_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/stablepay/payout-operator/internal/manifest"
	"github.com/stablepay/payout-operator/test/testenv"
)

// root is the checkout's top directory.
var root = testenv.Root()

// assets is the directory of kube-apiserver, etcd and kubectl (make control-plane).
func assets() string {
	if a := os.Getenv("KUBEBUILDER_ASSETS"); a != "" {
		return a
	}
	return filepath.Join(root, "bin", "k8s")
}

// kustomizeBuild renders a kustomization of config/ as `make deploy` does: with the pinned
// kustomize of the Makefile ($KUSTOMIZE, bin/kustomize), else with the kustomize built into
// the control plane's kubectl (the same version).
func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	var cmd *exec.Cmd
	kustomize := os.Getenv("KUSTOMIZE")
	if kustomize == "" {
		kustomize = filepath.Join(root, "bin", "kustomize")
	}
	if _, err := os.Stat(kustomize); err == nil {
		cmd = exec.Command(kustomize, "build", dir)
	} else {
		kubectl := filepath.Join(assets(), "kubectl")
		if _, err := os.Stat(kubectl); err != nil {
			t.Fatalf("no kustomize (%s) and no kubectl (%s): run `make kustomize` or `make control-plane`", kustomize, kubectl)
		}
		cmd = exec.Command(kubectl, "kustomize", dir)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", cmd, err, stderr.String())
	}
	return out
}

// decode reads a multi-document YAML stream into objects.
func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := manifest.Decode(data)
	if err != nil {
		t.Fatalf("decoding the rendered manifests: %v", err)
	}
	return objs
}

// rendered is config/default as `make deploy` renders it.
func rendered(t *testing.T) ([]byte, []*unstructured.Unstructured) {
	t.Helper()
	data := kustomizeBuild(t, filepath.Join(root, "config", "default"))
	return data, decode(t, data)
}

// find returns the rendered object of kind and name, failing when there is none.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("the manifests hold no %s %s", kind, name)
	return nil
}

func key(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", o.GetKind(), o.GetName())
	}
	return fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
}
