package v1alpha1_test

import (
	"bytes"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/stablepay/payout-operator/test/testenv"
)

var _ = Describe("config/samples", func() {
	It("are accepted by the API server as written", func() {
		files, err := filepath.Glob(filepath.Join(testenv.Root(), "config", "samples", "payout_*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).NotTo(BeEmpty())
		for _, f := range files {
			data, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			u := &unstructured.Unstructured{}
			Expect(utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&u.Object)).To(Succeed(), f)
			Expect(env.Client.Create(ctx, u)).To(Succeed(), f)
		}
	})
})
