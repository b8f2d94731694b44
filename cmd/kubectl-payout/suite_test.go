package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/commands"
	"github.com/stablepay/payout-operator/test/testenv"
)

// The plugin is tested the way it is used: each command line runs through the same Execute as
// the binary, against a real kube-apiserver, and the tests assert what it printed and what it
// stored.
func TestKubectlPayout(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "kubectl-payout suite")
}

var (
	env        *testenv.Env
	k8s        client.Client
	kubeconfig string
	ctx        = context.Background()
	// clock is the plugin's clock, for the ages `get transfers` shows.
	clock = clocktesting.NewFakePassiveClock(time.Now())
)

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s = env.Client
	dir, err := os.MkdirTemp("", "kubectl-payout-test")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	kubeconfig = filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// result is what one run of the plugin printed and returned.
type result struct {
	Stdout, Stderr string
	Code           int
}

// kubectlPayout runs a command line of the plugin against the test cluster.
func kubectlPayout(args ...string) result {
	return kubectlPayoutWith(kubeconfig, args...)
}

// kubectlPayoutWith runs a command line of the plugin with another kubeconfig (another user).
func kubectlPayoutWith(kubeconfig string, args ...string) result {
	if len(args) > 0 && args[0] == "__complete" {
		// the last word is the one completed: the flag goes first
		args = append([]string{"__complete", "--kubeconfig=" + kubeconfig}, args[1:]...)
	} else {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	var out, errOut bytes.Buffer
	f := cli.NewFactory(cli.IOStreams{Out: &out, ErrOut: &errOut})
	f.Clock = clock
	code := commands.Execute(ctx, "kubectl payout", args, f)
	return result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// succeeds runs a command line that must succeed and returns what it printed on stdout.
func succeeds(args ...string) string {
	GinkgoHelper()
	r := kubectlPayout(args...)
	Expect(r.Code).To(Equal(0), "kubectl payout %v failed: %s", args, r.Stderr)
	return r.Stdout
}

// fails runs a command line that must fail, print nothing on stdout and exactly stderr.
func fails(stderr string, args ...string) {
	GinkgoHelper()
	r := kubectlPayout(args...)
	Expect(r.Code).To(Equal(1), "kubectl payout %v succeeded: %s", args, r.Stdout)
	Expect(r.Stdout).To(BeEmpty())
	Expect(r.Stderr).To(Equal(stderr))
}

var names int

// uniqueName is a fresh account name, so specs never see each other's objects.
func uniqueName(prefix string) string {
	names++
	return fmt.Sprintf("%s-%d", prefix, names)
}

// newAccount creates an account through the plugin and returns its name.
func newAccount(prefix string) string {
	GinkgoHelper()
	name := uniqueName(prefix)
	succeeds("account", "create", name)
	return name
}
