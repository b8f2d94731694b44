package apiserver

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/shopspring/decimal"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/controllers"
	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// The tests of this file send one request per variant of what the facade stores, through the
// facade, so that every variant is written to the real API server and passes its schema and
// CEL rules there. A rule that a valid object fails (an optional field read without has())
// shows as a 500 for some currencies or account types only; these tests find it before a
// caller does.

// quoteCase is one variant of GET quote, asked by an account with a 1.5% service fee on the
// v2 fee structure, with a fixed fee or without one.
type quoteCase struct {
	currency, amount string
	v2, email        bool
	fixed            string // the account's fixed fee; "" for none
}

func (qc quoteCase) String() string {
	return fmt.Sprintf("%s %s v2_offloader=%t email=%t fixed=%q", qc.currency, qc.amount, qc.v2, qc.email, qc.fixed)
}

func (qc quoteCase) path() string {
	var extra []string
	if qc.v2 {
		extra = append(extra, "v2_offloader", "true")
	}
	if qc.email {
		extra = append(extra, "recipientType", "email_recipient")
	}
	return quotePath(qc.currency, qc.amount, extra...)
}

// checkQuoteSpec checks one quote answer against spec 2.4 and returns what is wrong with it.
func checkQuoteSpec(qc quoteCase, r *response, namespace string) []string {
	GinkgoHelper()
	if r.status != 200 {
		return []string{fmt.Sprintf("status %s", r)}
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	q := r.json()
	num := func(m map[string]any, k string) (decimal.Decimal, bool) {
		v, ok := m[k]
		if !ok || v == nil {
			return decimal.Decimal{}, false
		}
		return dec(v), true
	}
	id, _ := q["quoteId"].(string)
	if _, err := uuid.Parse(id); err != nil {
		fail("quoteId %v is not a UUID", q["quoteId"])
	}
	if sa, ok := num(q, "sourceAmount"); !ok || !sa.Equal(decimal.RequireFromString(qc.amount)) {
		fail("sourceAmount %v, want %s", q["sourceAmount"], qc.amount)
	}
	corridor, _ := pricing.DefaultTariff().Corridor(qc.currency)
	pc, hasPC := num(q, "providerCharge")
	switch {
	case qc.v2 && hasPC:
		fail("providerCharge %s on a v2-offloader quote", pc)
	case !qc.v2 && corridor.ProviderCharge.IsPositive() && (!hasPC || !pc.Equal(corridor.ProviderCharge)):
		fail("providerCharge %v, want %s", q["providerCharge"], corridor.ProviderCharge)
	case !qc.v2 && !corridor.ProviderCharge.IsPositive() && hasPC:
		fail("providerCharge %s present though zero for %s", pc, qc.currency)
	}
	wantPct := decimal.RequireFromString("1.5")
	if qc.v2 {
		wantPct = decimal.RequireFromString("1.7")
	}
	if p, ok := num(q, "serviceFeePercent"); !ok || !p.Equal(wantPct) {
		fail("serviceFeePercent %v, want %s", q["serviceFeePercent"], wantPct)
	}
	fixed, hasFixed := num(q, "serviceFeeFixed")
	switch {
	case qc.v2 && hasFixed && !fixed.IsZero():
		fail("serviceFeeFixed %s on a v2-offloader quote, want 0", fixed)
	case !qc.v2 && qc.fixed == "" && hasFixed:
		fail("serviceFeeFixed %s present though none is configured", fixed)
	case !qc.v2 && qc.fixed != "" && (!hasFixed || !fixed.Equal(decimal.RequireFromString(qc.fixed))):
		fail("serviceFeeFixed %v, want the configured %s", q["serviceFeeFixed"], qc.fixed)
	}
	if q["targetCurrency"] != qc.currency {
		fail("targetCurrency %v", q["targetCurrency"])
	}
	if rate, ok := num(q, "usdToTargetRate"); !ok || !rate.IsPositive() {
		fail("usdToTargetRate %v", q["usdToTargetRate"])
	}
	in, _ := q["quote"].(map[string]any)
	if in == nil {
		return append(errs, "no quote object")
	}
	minor, _ := pricing.MinorUnits(qc.currency)
	ta, ok := num(in, "targetAmount")
	_, frac, _ := strings.Cut(fmt.Sprint(in["targetAmount"]), ".")
	if !ok || ta.IsNegative() || int32(len(frac)) > minor {
		fail("targetAmount %v is not an amount in %d minor units", in["targetAmount"], minor)
	}
	fee, ok := num(in, "transferFee")
	if !ok || fee.IsNegative() {
		fail("transferFee %v", in["transferFee"])
	}
	fxp, hasFxp := num(in, "feeFxPercent")
	fx, hasFx := num(in, "feeFxAmount")
	po, hasPo := num(in, "feePayoutAmount")
	for _, k := range []string{"feeFxPercent", "feeFxAmount", "feePayoutAmount"} {
		if _, present := in[k]; !present {
			fail("%s absent; it is a number or null", k)
		}
	}
	if qc.email {
		if !fee.IsZero() || hasFxp || hasFx || hasPo {
			fail("e-mail recipient: transferFee %s and breakdown %v/%v/%v, want 0 and nulls", fee, in["feeFxPercent"], in["feeFxAmount"], in["feePayoutAmount"])
		}
	} else {
		if !hasFxp || !hasFx || !hasPo {
			fail("fee breakdown null for %s, which has a fee schedule", qc.currency)
		} else {
			if !fx.Add(po).Equal(fee) {
				fail("feeFxAmount + feePayoutAmount = %s + %s != transferFee %s", fx, po, fee)
			}
			if !fxp.Equal(corridor.FXPercent) {
				fail("feeFxPercent %s, want %s", fxp, corridor.FXPercent)
			}
		}
	}
	if s, _ := in["estimatedDelivery"].(string); s == "" {
		fail("estimatedDelivery missing")
	} else if _, err := time.Parse(time.RFC3339, s); err != nil {
		fail("estimatedDelivery %q is not ISO 8601: %v", s, err)
	}
	stored := &payoutv1.Quote{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: id}, stored); err != nil {
		fail("quote %s not stored: %v", id, err)
	} else if string(stored.Spec.TargetAmount) != fmt.Sprint(in["targetAmount"]) {
		fail("stored targetAmount %s, answered %v", stored.Spec.TargetAmount, in["targetAmount"])
	}
	return errs
}

var _ = Describe("every quote variant, stored on the real API server (spec 2.4, 4.9)", func() {
	It("prices and stores a quote for each of the 81 currencies, plain and v2-offloader, and EUR e-mail", func() {
		s := openServer(baseCfg, unlimited)
		pct, fixed := payoutv1.Decimal("1.5"), payoutv1.USDAmount("2.50")
		noFixed := newAccount(func(a *payoutv1.PayoutAccount) {
			a.Spec.ServiceFee = payoutv1.ServiceFee{Percent: &pct}
			a.Spec.V2FeeStructure = true
		})
		withFixed := newAccount(func(a *payoutv1.PayoutAccount) {
			a.Spec.ServiceFee = payoutv1.ServiceFee{Percent: &pct, Fixed: &fixed}
			a.Spec.V2FeeStructure = true
		})
		currencies := pricing.Currencies()
		Expect(currencies).To(HaveLen(81))
		var cases []quoteCase
		for _, cur := range currencies {
			for _, amount := range []string{"0.01", "1234.56", "1000000"} {
				cases = append(cases, quoteCase{currency: cur, amount: amount}, quoteCase{currency: cur, amount: amount, v2: true})
			}
			cases = append(cases, quoteCase{currency: cur, amount: "1234.56", fixed: "2.50"}, quoteCase{currency: cur, amount: "1234.56", v2: true, fixed: "2.50"})
		}
		for _, fixed := range []string{"", "2.50"} {
			cases = append(cases, quoteCase{currency: "EUR", amount: "40.00", email: true, fixed: fixed}, quoteCase{currency: "EUR", amount: "40.00", v2: true, email: true, fixed: fixed})
		}

		failures := map[string][]string{}
		failedCurrencies := map[string]map[string]bool{} // by fixed fee
		for _, qc := range cases {
			acct := noFixed
			if qc.fixed != "" {
				acct = withFixed
			}
			if errs := checkQuoteSpec(qc, acct.c.on(s).get(qc.path()), payoutv1.AccountNamespace(acct.name)); len(errs) > 0 {
				failures[qc.String()] = errs
				if failedCurrencies[qc.fixed] == nil {
					failedCurrencies[qc.fixed] = map[string]bool{}
				}
				failedCurrencies[qc.fixed][qc.currency] = true
			}
		}
		summary := ""
		for _, fixed := range []string{"", "2.50"} {
			var names []string
			for cur := range failedCurrencies[fixed] {
				names = append(names, cur)
			}
			sort.Strings(names)
			summary += fmt.Sprintf("\n  fixed fee %q: %d currencies: %s", fixed, len(names), strings.Join(names, " "))
		}
		Expect(failures).To(BeEmpty(), "%d of %d quote variants fail spec 2.4;%s", len(failures), len(cases), summary)
	})
})

// exampleDetails fills an account-requirements descriptor (spec 2.2) as a form would: every
// field its example, a select its first value, legalType as given.
func exampleDetails(descriptor map[string]any, legalType string) obj {
	d := obj{}
	for _, g := range descriptor["fields"].([]any) {
		for _, f := range g.(map[string]any)["group"].([]any) {
			field := f.(map[string]any)
			key := field["key"].(string)
			v, _ := field["example"].(string)
			if vals, _ := field["valuesAllowed"].([]any); v == "" && len(vals) > 0 {
				v = vals[0].(map[string]any)["key"].(string)
			}
			if key == "legalType" {
				v = legalType
			}
			if object, member, nested := strings.Cut(key, "."); nested {
				m, _ := d[object].(obj)
				if m == nil {
					m = obj{}
					d[object] = m
				}
				m[member] = v
			} else {
				d[key] = v
			}
		}
	}
	return d
}

// addressOptional reports whether a descriptor lists an address none of whose fields is required.
func addressOptional(descriptor map[string]any) bool {
	for _, g := range descriptor["fields"].([]any) {
		for _, f := range g.(map[string]any)["group"].([]any) {
			field := f.(map[string]any)
			if strings.HasPrefix(field["key"].(string), "address.") && field["required"] == true {
				return false
			}
		}
	}
	return true
}

var _ = Describe("every recipient variant, stored on the real API server (spec 2.1, 4.5)", func() {
	It("creates a recipient of each account type of each currency, as a person and as a business, with and without an optional address, and an e-mail recipient", func() {
		s := openServer(baseCfg, unlimited)
		acct := newAccount()
		c := acct.c.on(s)
		type variant struct {
			name string
			body obj
		}
		variants := []variant{{"EUR email_recipient", emailBody("Variant Mail Holder")}}
		for _, cur := range baseCfg.Catalog.Currencies() {
			r := c.get("/api/payouts/account-requirements?currency=" + cur)
			Expect(r.status).To(Equal(200), "%s", r)
			for _, d := range r.json()["data"].([]any) {
				typ := d.(map[string]any)["type"].(string)
				for _, lt := range []string{"PRIVATE", "BUSINESS"} {
					// a US address makes every conditional field show (the state is required there)
					refreshed := c.post("/api/payouts/account-requirements?currency="+cur,
						obj{"type": typ, "details": obj{"legalType": lt, "address": obj{"country": "US"}}})
					Expect(refreshed.status).To(Equal(200), "%s", refreshed)
					for _, rd := range refreshed.json()["data"].([]any) {
						if rd.(map[string]any)["type"] != typ {
							continue
						}
						details := exampleDetails(rd.(map[string]any), lt)
						variants = append(variants, variant{cur + " " + typ + " " + lt, obj{"currency": cur, "type": typ,
							"accountHolderName": "Variant Holder", "details": details}})
						if _, ok := details["address"]; ok && addressOptional(rd.(map[string]any)) {
							bare := obj{}
							for k, v := range details {
								if k != "address" {
									bare[k] = v
								}
							}
							variants = append(variants, variant{cur + " " + typ + " " + lt + " without address", obj{"currency": cur, "type": typ,
								"accountHolderName": "Variant Holder", "details": bare}})
						}
					}
				}
			}
		}
		Expect(len(variants)).To(BeNumerically(">", 2*81))

		failures := map[string]string{}
		for _, v := range variants {
			r := c.post("/api/payouts/recipients", v.body)
			if r.status != 201 {
				failures[v.name] = r.String()
				continue
			}
			m := r.json()
			sameJSON(m["details"], v.body["details"])
			stored := &payoutv1.Recipient{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: payoutv1.AccountNamespace(acct.name), Name: fmt.Sprint(m["id"])}, stored); err != nil {
				failures[v.name] = "not stored: " + err.Error()
			}
		}
		Expect(failures).To(BeEmpty(), "%d of %d recipient variants fail", len(failures), len(variants))
	})
})

// everyOptionAvailable reads every deposit option as available: the transfer variants below are
// about what the API server stores, not about which chains this suite watches (only base), and
// marking the real options available would change what the other specs see.
type everyOptionAvailable struct{ client.Client }

func (c everyOptionAvailable) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	if o, ok := obj.(*payoutv1.DepositOption); ok && err == nil {
		o.Status.Available = true
	}
	return err
}

// allNetworksDepositAddresses issues deposit addresses on every network of the deposit options,
// with a v2 address for USDC on each network that takes v2 transfers.
func allNetworksDepositAddresses() depositkey.Addresses {
	GinkgoHelper()
	doc := "networks:\n"
	for i, n := range []string{"base", "ethereum", "polygon", "arbitrum", "avalanche"} {
		doc += fmt.Sprintf("  %s:\n    rpc: [http://127.0.0.1:1]\n    tokens:\n      usdc: {contract: \"0x%040x\", platformAddress: \"0x%040x\"}\n", n, 0xc10+i, 0xf20+i)
		if n == "ethereum" {
			doc += "      usdt: {contract: \"0x00000000000000000000000000000000000000d1\"}\n"
		}
	}
	doc += "  solana:\n    rpc: [http://127.0.0.1:1]\n    tokens:\n      usdc: {contract: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v, platformAddress: 3fTPf5EUuB6C8RM9TQ4M6zR3SWxHWF7bJNyspSVhz6G7}\n"
	doc += "  tron:\n    rpc: [http://127.0.0.1:1]\n    chainID: 728126428\n    tokens:\n      usdt: {contract: TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t}\n"
	return depositAddresses(doc)
}

// allNetworksServer is a facade (without per-key budgets) that issues deposit addresses on every
// network and reads every deposit option as available.
func allNetworksServer() *Server {
	GinkgoHelper()
	// a v2 transfer records its network's head: every network's cursor has read one (not synced,
	// so that the deposit options of the suite stay as they are)
	for _, n := range []payoutv1.Network{payoutv1.NetworkEthereum, payoutv1.NetworkPolygon, payoutv1.NetworkArbitrum,
		payoutv1.NetworkAvalanche, payoutv1.NetworkSolana, payoutv1.NetworkTron} {
		c := &payoutv1.ChainCursor{ObjectMeta: metav1.ObjectMeta{Name: string(n)}, Spec: payoutv1.ChainCursorSpec{Network: n}}
		if err := env.Client.Create(ctx, c); apierrors.IsAlreadyExists(err) {
			continue
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		c.Status.Head = 100
		Expect(env.Client.Status().Update(ctx, c)).To(Succeed())
		Eventually(func() int64 {
			got := &payoutv1.ChainCursor{}
			_ = baseCfg.Client.Get(ctx, client.ObjectKeyFromObject(c), got)
			return got.Status.Head
		}).Should(Equal(int64(100)))
	}
	cfg := baseCfg
	cfg.Client = everyOptionAvailable{Client: baseCfg.Client}
	cfg.Deposits = allNetworksDepositAddresses()
	return openServer(cfg, unlimited)
}

var _ = Describe("every transfer variant, stored on the real API server (spec 4.10, 4.11)", func() {
	It("creates a v1 transfer for each token and EVM network and a v2 transfer for USDC on each network that takes it", func() {
		s := allNetworksServer()
		// without v2 wallet screening, which takes EVM wallets only, a Solana sender may use v2
		p := newPayee(func(a *payoutv1.PayoutAccount) { a.Spec.V2WalletScreening = false })
		c := p.c.on(s)
		type variant struct {
			path            string
			token, network  string
			wallet, address string // the sender, and the v2 deposit address ("" for v1)
		}
		const solanaWallet = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
		var variants []variant
		for _, o := range controllers.DefaultDepositOptions() {
			token, network := string(o.Spec.Token), string(o.Spec.Network)
			if network != "solana" { // v1 takes EVM senders only (spec 4.10), which cannot send on solana
				// on tron too: the EVM-format sender is the Tron sender's 20-byte body
				variants = append(variants, variant{"/api/payouts/transfer", token, network, senderWallet, ""})
			}
			if addr, ok := s.cfg.Deposits.V2Address(o.Spec.Network, o.Spec.Token); ok {
				wallet := senderWallet
				if network == "solana" {
					wallet = solanaWallet
				}
				variants = append(variants, variant{"/api/payouts/transfer/v2", token, network, wallet, addr})
			}
		}
		Expect(variants).To(HaveLen(13), "v1: 5 networks of USDC, USDT on ethereum and tron; v2: USDC on 5 EVM networks and solana")

		for _, v := range variants {
			name := v.path + " " + v.token + "/" + v.network
			b := v1Body(p.quote("EUR", "20.00"), "20.00", p.rid)
			b["source_token"], b["source_network"], b["wallet_address"] = v.token, v.network, v.wallet
			r := c.post(v.path, b)
			Expect(r.status).To(Equal(200), "%s: %s", name, r)
			var id, address string
			if v.address == "" {
				tr := r.json()["transfer"].(map[string]any)
				id, address = tr["id"].(string), tr["deposit_address"].(string)
				if v.network == "tron" {
					Expect(chain.IsTronAddress(address)).To(BeTrue(), "%s: a Base58Check deposit address, not %s", name, address)
				} else {
					Expect(address).To(MatchRegexp(`^0x[0-9a-fA-F]{40}$`), name)
				}
			} else {
				id, address = r.json()["transfer_id"].(string), r.json()["deposit_address"].(string)
				Expect(address).To(Equal(v.address), name)
			}
			t := storedTransfer(p.account, id)
			Expect(string(t.Spec.SourceToken)).To(Equal(v.token), name)
			Expect(string(t.Spec.SourceNetwork)).To(Equal(v.network), name)
			Expect(t.Spec.DepositAddress).To(Equal(address), name)
			Expect(t.Spec.WalletAddress).To(Equal(v.wallet), name)
			got := c.get("/api/payouts/transfer/" + id)
			Expect(got.status).To(Equal(200), "%s: lookup %s", name, got)
		}
	})
})
