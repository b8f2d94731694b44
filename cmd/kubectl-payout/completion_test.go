package main_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// completions asks the plugin what completes the last word of words, as a shell's script does
// (cobra's __complete), and returns the candidates without the directive line.
func completions(words ...string) []string {
	GinkgoHelper()
	out := succeeds(append([]string{"__complete"}, words...)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	Expect(lines[len(lines)-1]).To(HavePrefix(":"), "no directive line: %q", out)
	return lines[:len(lines)-1]
}

var _ = Describe("shell completion", func() {
	DescribeTable("prints a script for each shell",
		func(shell, marker string) {
			out := succeeds("completion", shell)
			Expect(out).To(ContainSubstring(marker))
			Expect(out).To(ContainSubstring("kubectl-payout"))
		},
		Entry(nil, "bash", "__start_kubectl-payout"),
		Entry(nil, "zsh", "#compdef kubectl-payout"),
		Entry(nil, "fish", "complete -c kubectl-payout"),
		Entry(nil, "powershell", "Register-ArgumentCompleter"),
	)

	It("refuses another shell", func() {
		fails("error: no completion for shell \"tcsh\": use bash, zsh, fish or powershell\nRun 'kubectl payout completion --help' for usage.\n",
			"completion", "tcsh")
	})

	It("completes commands, output formats and shells", func() {
		Expect(completions("")).To(ContainElements(
			HavePrefix("account\t"), HavePrefix("describe\t"), HavePrefix("get\t"), HavePrefix("refund\t"), HavePrefix("completion\t")))
		Expect(completions("get", "transfers", "-o", "")).To(Equal([]string{"wide", "json", "yaml"}))
		Expect(completions("completion", "")).To(Equal([]string{"bash", "zsh", "fish", "powershell"}))
	})

	It("completes transfer ids, account names and key ids from the cluster", func() {
		account := newAccount("complete")
		t := storeTransfer(account, payoutv1.TransferStatus{Phase: payoutv1.PhaseFailed})
		Expect(completions("describe", "transfer", t.Name[:20])).To(ContainElement(t.Name + "\t" + account + ", failed"))
		Expect(completions("refund", t.Name[:20])).To(ContainElement(t.Name + "\t" + account + ", failed"))
		Expect(completions("describe", "transfer", t.Name, "")).To(BeEmpty(), "one transfer id only")
		Expect(completions("get", "transfers", "--account", "complete-")).To(ContainElement(account + "\t" + account + "@example.com"))

		key := strings.TrimSpace(succeeds("apikey", "create", "--account", account))
		keyID := strings.Split(key, "_")[2]
		Expect(completions("apikey", "revoke", keyID[:6])).To(ContainElement(keyID + "\t" + account))
		succeeds("apikey", "revoke", keyID)
		Expect(completions("apikey", "revoke", keyID[:6])).NotTo(ContainElement(HavePrefix(keyID)), "a revoked key is not offered")
	})
})
