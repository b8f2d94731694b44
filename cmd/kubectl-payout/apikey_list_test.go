package main_test

import (
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

var _ = Describe("apikey list and get", func() {
	It("show each key's account, creation, last use (never, then the facade's record) and status", func() {
		account := newAccount("keylist")
		_, used := issueKey(account)
		_, unused := issueKey(account)
		k := getKey(used)
		patch := client.MergeFrom(k.DeepCopy())
		// what the facade's last-use recorder (internal/keyuse) writes
		k.Annotations = map[string]string{payoutv1.APIKeyLastUsedAnnotation: "2026-11-26T07:45:09Z"}
		Expect(k8s.Patch(ctx, k, patch)).To(Succeed())
		succeeds("apikey", "revoke", unused)

		out := succeeds("apikey", "list", "--account", account)
		Expect(out).To(HavePrefix("KEY ID"))
		Expect(out).To(MatchRegexp(`(?m)^KEY ID\s+ACCOUNT\s+CREATED\s+LAST USED\s+STATUS$`))
		Expect(out).To(MatchRegexp(`(?m)^` + used + `\s+` + account + `\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC\s+2026-11-26 07:45 UTC\s+active$`))
		Expect(out).To(MatchRegexp(`(?m)^` + unused + `\s+` + account + `\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC\s+never\s+revoked$`))
		Expect(regexp.MustCompile(`(?m)^[0-9a-f]{16}\s`).FindAllString(out, -1)).To(HaveLen(2), "only this account's keys")

		one := succeeds("apikey", "get", used)
		Expect(one).To(MatchRegexp(`(?m)^` + used + `\s+` + account + `\s+.*2026-11-26 07:45 UTC\s+active$`))
		Expect(succeeds("apikey", "get", used, "-o", "json")).To(ContainSubstring(`"payout.stablepay.dev/last-used": "2026-11-26T07:45:09Z"`))
		fails("error: account \"no-such-account\" does not exist\n", "apikey", "list", "--account", "no-such-account")
	})
})
