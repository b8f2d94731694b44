package v1alpha1_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/stablepay/payout-operator/test/testenv"
)

// The schema tests run against a real kube-apiserver: CEL rules, patterns and printer columns
// are enforced by the API server, and only the API server can prove they are right.
func TestAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the schema suite runs on the control plane (envtest); `make test-envtest` runs it")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "API schema suite")
}

var (
	env *testenv.Env
	ctx = context.Background()
)

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
