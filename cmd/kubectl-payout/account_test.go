package main_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/test/testgen"
)

func getAccount(name string) *payoutv1.PayoutAccount {
	GinkgoHelper()
	acct := &payoutv1.PayoutAccount{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, acct)).To(Succeed())
	return acct
}

func expectNoAccount(name string) {
	GinkgoHelper()
	err := k8s.Get(ctx, client.ObjectKey{Name: name}, &payoutv1.PayoutAccount{})
	Expect(apierrors.IsNotFound(err)).To(BeTrue(), "account %s: %v", name, err)
}

var _ = Describe("account create", func() {
	It("stores the contract defaults and the account's namespace", func() {
		name := uniqueName("defaults")
		Expect(succeeds("account", "create", name)).To(Equal(`Created account "` + name + `" with namespace payout-` + name + "\n"))

		acct := getAccount(name)
		Expect(acct.Spec).To(Equal(testgen.Account(name).Spec))
		Expect(acct.Spec.Email).To(Equal(name + "@example.com"))

		ns := &corev1.Namespace{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "payout-" + name}, ns)).To(Succeed())
		Expect(ns.Labels).To(HaveKeyWithValue(tenancy.AccountLabel, name))
		Expect(ns.OwnerReferences).To(ConsistOf(HaveField("UID", acct.UID)))
	})

	It("maps every flag to the spec", func() {
		name := uniqueName("flags")
		succeeds("account", "create", name, "--email", "ops@acme.example", "--kyc-required", "--v1=false",
			"--v2-screening=false", "--v2-offloader", "--smart-wallet=false", "--bind-wallets", "--min-amount", "10",
			"--max-amount", "5000.50", "--allowed-ips", "192.0.2.0/24,198.51.100.7,2001:db8::/32",
			"--service-fee-percent", "1.25", "--service-fee-fixed", "0.99")

		s := getAccount(name).Spec
		Expect(s.Email).To(Equal("ops@acme.example"))
		Expect(s.KYCRequired).To(BeTrue())
		Expect(s.V1Enabled).To(BeFalse())
		Expect(s.V2WalletScreening).To(BeFalse())
		Expect(s.V2FeeStructure).To(BeTrue())
		Expect(s.SmartWalletDeployed).To(BeFalse())
		Expect(s.BindWallets).To(BeTrue())
		Expect(s.AmountLimits.Min).To(HaveValue(Equal(payoutv1.USDAmount("10"))))
		Expect(s.AmountLimits.Max).To(HaveValue(Equal(payoutv1.USDAmount("5000.50"))))
		Expect(s.AllowedIPs).To(Equal([]string{"192.0.2.0/24", "198.51.100.7/32", "2001:db8::/32"}))
		Expect(s.ServiceFee.Percent).To(HaveValue(Equal(payoutv1.Decimal("1.25"))))
		Expect(s.ServiceFee.Fixed).To(HaveValue(Equal(payoutv1.USDAmount("0.99"))))
	})

	It("maps the quota flags to spec.quotas, --max-open-transfers to both methods unless one is named", func() {
		name := uniqueName("quotas")
		succeeds("account", "create", name, "--max-open-transfers", "500", "--max-open-v2-transfers", "50",
			"--max-active-recipients", "5000", "--max-claims", "20000")
		Expect(getAccount(name).Spec.Quotas).To(Equal(payoutv1.Quotas{MaxOpenV1Transfers: 500, MaxOpenV2Transfers: 50,
			MaxActiveRecipients: 5000, MaxClaims: 20000}))
	})

	It("refuses an existing account and leaves it unchanged", func() {
		name := newAccount("dup")
		before := getAccount(name)

		fails(`error: account "`+name+`" already exists`+"\n", "account", "create", name, "--email", "other@example.com")
		_, err := admin.CreateAccount(ctx, k8s, name, admin.DefaultAccountSettings(name))
		Expect(err).To(MatchError(admin.ErrAccountExists))

		Expect(getAccount(name).ResourceVersion).To(Equal(before.ResourceVersion))
	})

	DescribeTable("refuses invalid input before storing anything",
		func(name string, flags []string, stderr string) {
			fails(stderr, append([]string{"account", "create", name}, flags...)...)
			expectNoAccount(name)
		},
		Entry("a bad CIDR", "bad-cidr", []string{"--allowed-ips", "10.0.0.0/33"},
			"error: invalid --allowed-ips \"10.0.0.0/33\": not a CIDR such as 192.0.2.0/24\n"),
		Entry("a CIDR with host bits", "host-bits", []string{"--allowed-ips", "192.0.2.0/24,10.0.0.5/8"},
			"error: invalid --allowed-ips \"10.0.0.5/8\": host bits are set; the network is 10.0.0.0/8\n"),
		Entry("three decimals", "three-decimals", []string{"--min-amount", "1.234"},
			"error: invalid --min-amount \"1.234\": a USD amount has at most 2 decimals\n"),
		Entry("min above max", "min-above-max", []string{"--min-amount", "100", "--max-amount", "50"},
			"error: invalid --max-amount \"50\": below the min amount 100 (both bounds are inclusive)\n"),
		Entry("a percent above 100", "big-fee", []string{"--service-fee-percent", "100.01"},
			"error: invalid --service-fee-percent \"100.01\": a service fee percentage is below 100 (0 to 99.99…)\n"),
		Entry("a percent of 100", "all-fee", []string{"--service-fee-percent", "100"},
			"error: invalid --service-fee-percent \"100\": a service fee percentage is below 100 (0 to 99.99…)\n"),
		Entry("a fixed fee that is not a number", "nan-fee", []string{"--service-fee-fixed", "free"},
			"error: invalid --service-fee-fixed \"free\": a USD amount is a non-negative decimal number such as 25.00\n"),
		Entry("claims below the other caps", "few-claims", []string{"--max-active-recipients", "5000"},
			"error: invalid --max-claims \"2000\": below 5200, the open v1 and v2 transfers and active recipients the other caps allow (each holds a claim)\n"),
		Entry("a negative cap", "negative-cap", []string{"--max-open-v1-transfers", "-1"},
			"error: invalid --max-open-v1-transfers \"-1\": must be from 1 to 100000\n"),
		Entry("a bad e-mail", "bad-email", []string{"--email", "ops"},
			"error: invalid --email \"ops\": not an e-mail address such as ops@example.com\n"),
		Entry("an account name that is not a DNS label", "Acme_EU", nil,
			"error: invalid account name \"Acme_EU\": use at most 50 lower-case letters, digits and '-', starting and ending with a letter or digit\n"),
		Entry("an account name over 50 characters", "a23456789-123456789-123456789-123456789-123456789-1", nil,
			"error: invalid account name \"a23456789-123456789-123456789-123456789-123456789-1\": use at most 50 lower-case letters, digits and '-', starting and ending with a letter or digit\n"),
		Entry("a bool flag with a value that is not a bool", "bad-bool", []string{"--v1=maybe"},
			"error: invalid argument \"maybe\" for \"--v1\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\n"+
				"Run 'kubectl payout account create --help' for usage.\n"),
	)

	It("refuses an unknown subcommand", func() {
		fails("error: unknown command \"delete\" for \"kubectl payout account\"\nRun 'kubectl payout account --help' for usage.\n",
			"account", "delete", "acme")
	})

	It("needs exactly one name", func() {
		fails("error: expected the account name, got 0 argument(s)\nRun 'kubectl payout account create --help' for usage.\n",
			"account", "create")
	})
})
