package main_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Every command of CONTRACT.md, as users type it: each has --help, with its usage line, a
// description and an example.
var _ = Describe("--help", func() {
	DescribeTable("explains each command",
		func(usage string, command ...string) {
			out := succeeds(append(command, "--help")...)
			Expect(out).To(ContainSubstring("Usage:\n  kubectl payout " + usage + "\n"))
			_, examples, ok := strings.Cut(out, "Examples:\n")
			Expect(ok).To(BeTrue(), "no examples:\n%s", out)
			Expect(examples).To(ContainSubstring("kubectl payout " + strings.Join(command, " ")))
			Expect(out).To(ContainSubstring("--kubeconfig string"))
		},
		Entry(nil, "account create NAME [flags]", "account", "create"),
		Entry(nil, "apikey create --account NAME [flags]", "apikey", "create"),
		Entry(nil, "apikey revoke KEY_ID [flags]", "apikey", "revoke"),
		Entry(nil, "wallet verify ADDRESS --account NAME [flags]", "wallet", "verify"),
		Entry(nil, "wallet block ADDRESS [flags]", "wallet", "block"),
		Entry(nil, "refund TRANSFER_ID [flags]", "refund"),
		Entry(nil, "get transfers [flags]", "get", "transfers"),
		Entry(nil, "describe transfer ID [flags]", "describe", "transfer"),
	)

	It("lists every command at the top", func() {
		out := succeeds("--help")
		for _, c := range []string{"account", "apikey", "wallet", "refund", "get", "describe", "completion"} {
			Expect(out).To(MatchRegexp(`(?m)^  ` + c + ` +\S`))
		}
	})

	It("documents the output formats where a command prints resources", func() {
		Expect(succeeds("get", "transfers", "--help")).To(MatchRegexp(`-o, --output string +output format: wide, json, yaml \(default: text\)`))
		Expect(succeeds("describe", "transfer", "--help")).To(MatchRegexp(`-o, --output string +output format: json, yaml \(default: text\)`))
	})
})
