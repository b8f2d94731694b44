package main_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The built binary, run the way kubectl runs a plugin: by its file name, with KUBECONFIG in
// the environment.
var _ = Describe("the kubectl-payout binary", Ordered, func() {
	var binary string

	BeforeAll(func() {
		binary = filepath.Join(GinkgoT().TempDir(), "kubectl-payout")
		build := exec.Command("go", "build", "-o", binary, ".")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "go build: %s", out)
	})

	runIn := func(kubeconfig string, args ...string) result {
		cmd := exec.Command(binary, args...)
		// Outside any pod, so that client-go cannot fall back to an in-cluster configuration.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KUBERNETES_SERVICE_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			code = exit.ExitCode()
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		return result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
	}
	run := func(args ...string) result { return runIn(kubeconfig, args...) }

	It("calls itself kubectl payout in its help", func() {
		r := run("--help")
		Expect(r.Code).To(Equal(0))
		Expect(r.Stdout).To(ContainSubstring("Usage:\n  kubectl payout [flags]\n  kubectl payout [command]\n"))
		Expect(r.Stdout).To(ContainSubstring(`Use "kubectl payout [command] --help" for more information about a command.`))

		r = run("account", "create", "--help")
		Expect(r.Stdout).To(ContainSubstring("Usage:\n  kubectl payout account create NAME [flags]\n"))
	})

	It("reads KUBECONFIG and exits 0 on success, 1 with a message on stderr on failure", func() {
		name := uniqueName("binary")
		r := run("account", "create", name)
		Expect(r.Code).To(Equal(0), r.Stderr)
		Expect(r.Stdout).To(Equal(`Created account "` + name + `" with namespace payout-` + name + "\n"))

		r = run("apikey", "create", "--account", name)
		Expect(r.Code).To(Equal(0), r.Stderr)
		Expect(r.Stdout).To(MatchRegexp(`^svc_live_[0-9a-f]{16}_[0-9a-f]{64}\n$`))

		r = run("account", "create", name)
		Expect(r.Code).To(Equal(1))
		Expect(r.Stdout).To(BeEmpty())
		Expect(r.Stderr).To(Equal(`error: account "` + name + `" already exists` + "\n"))
	})

	It("says which kubeconfig it could not use", func() {
		missing := filepath.Join(GinkgoT().TempDir(), "missing")
		r := runIn(missing, "apikey", "revoke", "0123456789abcdef")
		Expect(r.Code).To(Equal(1))
		Expect(r.Stderr).To(Equal("error: no cluster configured: KUBECONFIG=" + missing + " names no usable kubeconfig file\n"))
	})

	It("answers kubectl's completion requests when linked as kubectl_complete-payout", func() {
		link := filepath.Join(filepath.Dir(binary), "kubectl_complete-payout")
		Expect(os.Symlink(binary, link)).To(Succeed())
		cmd := exec.Command(link, "describe", "")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out)).To(HavePrefix("transfer\t"))
		Expect(string(out)).To(HaveSuffix(":4\n"), "cobra's NoFileComp directive")
	})

	It("exits 1 on an unknown command", func() {
		r := run("acount", "create", "x")
		Expect(r.Code).To(Equal(1))
		Expect(r.Stderr).To(Equal("error: unknown command \"acount\" for \"kubectl payout\"; did you mean account?\n" +
			"Run 'kubectl payout --help' for usage.\n"))
	})
})
