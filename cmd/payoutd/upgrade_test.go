package main

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/testenv"
)

// previousLosses is what the previous release, by its commit (hack/previous-release), is known
// to drop of this release's objects, by "Kind path", and why the loss is harmless. A release
// that follows docs/operations/upgrade.md drops nothing: when hack/previous-release moves past
// the fix, the entry goes with it.
var previousLosses = map[string]map[string]string{
	"7c77d39e6938010cc46ec7648347db3f6adb93e4": {
		// its watcher writes the cursor with a full update (d8a4614 made it a patch); the next
		// block scanned at depth writes blockTime again, and until then no transfer expires
		// on it (ChainCursor.ScannedPast)
		"ChainCursor status.blockTime": "a full update of the cursor's status",
		// likewise a gap being scanned again: the rescan goes on from the cursor's block, only
		// the record of what is left (and payout_chain_gap_blocks) goes
		"ChainCursor status.gap.from": "a full update", "ChainCursor status.gap.to": "a full update",
		"ChainCursor status.gap.reason": "a full update", "ChainCursor status.gap.since": "a full update",
	},
}

// previousRelease is the commit of the previous release (hack/previous-release).
func previousRelease() string {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(testenv.Root(), "hack", "previous-release"))
	Expect(err).NotTo(HaveOccurred())
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	Fail("hack/previous-release names no commit")
	return ""
}

// unexpected is lost without the losses known of the previous release.
func unexpected(lost []string) []string {
	known := previousLosses[previousRelease()]
	var out []string
	for _, l := range lost {
		key, path, _ := strings.Cut(l, ": ")
		kind, _, _ := strings.Cut(key, " ")
		if _, ok := known[kind+" "+path]; !ok {
			out = append(out, l)
		}
	}
	return out
}

// previousPayoutd is payoutd of the previous release (hack/previous-release), built once into the
// per-user cache by hack/previous-payoutd.sh.
func previousPayoutd() string {
	GinkgoHelper()
	out, err := exec.Command(filepath.Join(testenv.Root(), "hack", "previous-payoutd.sh")).Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	Expect(err).NotTo(HaveOccurred(), "building the previous release's payoutd: %s", stderr)
	return strings.TrimSpace(string(out))
}

// stored is what the API server holds of every object of the API group: spec, status and the
// metadata a writer may set (labels, annotations, finalizers, deletion), by "Kind namespace/name".
type stored map[string]map[string]any

// storedObjects reads every object of the API group from the API server, as JSON (an older or
// newer release's fields included: nothing is decoded into this release's types).
func storedObjects() stored {
	GinkgoHelper()
	out := stored{}
	for gvk := range env.Scheme.AllKnownTypes() {
		if gvk.Group != payoutv1.GroupVersion.Group || !strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		Expect(env.Client.List(context.Background(), list)).To(Succeed())
		kind := strings.TrimSuffix(gvk.Kind, "List")
		for _, o := range list.Items {
			kept := map[string]any{}
			for _, f := range []string{"spec", "status"} {
				if v, ok := o.Object[f]; ok {
					kept[f] = v
				}
			}
			md := o.Object["metadata"].(map[string]any)
			for _, f := range []string{"labels", "annotations", "finalizers", "deletionTimestamp"} {
				if v, ok := md[f]; ok {
					kept["metadata."+f] = v
				}
			}
			out[kind+" "+o.GetNamespace()+"/"+o.GetName()] = kept
		}
	}
	return out
}

// lost lists what after no longer holds of before: objects gone, and fields (leaf paths, list
// items by index) that were set and are not any more. A value that changed is not a loss.
func lost(before, after stored) []string {
	var out []string
	for key, b := range before {
		a, ok := after[key]
		if !ok {
			out = append(out, key+": deleted")
			continue
		}
		have := map[string]bool{}
		leaves(a, "", have)
		want := map[string]bool{}
		leaves(b, "", want)
		for p := range want {
			if !have[p] {
				out = append(out, key+": "+p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// fieldsOf lists the fields set in s, by kind: "Kind path".
func fieldsOf(s stored) []string {
	seen := map[string]bool{}
	for key, o := range s {
		kind, _, _ := strings.Cut(key, " ")
		paths := map[string]bool{}
		leaves(o, "", paths)
		for p := range paths {
			seen[kind+" "+p] = true
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// leaves adds the path of every leaf of v under prefix to into.
func leaves(v any, prefix string, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			into[prefix] = true
		}
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			leaves(e, p, into)
		}
	case []any:
		if len(x) == 0 {
			into[prefix] = true
		}
		for i, e := range x {
			leaves(e, fmt.Sprintf("%s[%d]", prefix, i), into)
		}
	default:
		into[prefix] = true
	}
}

// settled waits until the objects of the API group stop changing (every cluster-scoped
// ChainCursor and DepositOption aside: their watchers write them on every heartbeat), and
// returns them.
func settled() stored {
	GinkgoHelper()
	quiet := func(s stored) stored {
		out := stored{}
		for k, v := range s {
			if !strings.HasPrefix(k, "ChainCursor ") && !strings.HasPrefix(k, "DepositOption ") {
				out[k] = v
			}
		}
		return out
	}
	var last stored
	Eventually(func() bool {
		now := quiet(storedObjects())
		same := reflect.DeepEqual(now, last)
		last = now
		return same
	}).WithPolling(3 * time.Second).WithTimeout(2 * time.Minute).Should(BeTrue())
	return storedObjects()
}

// previousRun is the previous release's payoutd, run as a binary against the suite's API server,
// chain, bank and mail sink.
type previousRun struct {
	*killer
}

// previousRuns counts the previous release's runs, each with a user of its own.
var previousRuns int

func startPrevious() *previousRun {
	GinkgoHelper()
	previousRuns++
	kubeconfig := adminKubeconfig(fmt.Sprintf("payoutd-previous-%d", previousRuns))
	bin := previousPayoutd()
	k := &killer{bin: bin, kubeconfig: kubeconfig, addr: freeAddr(), logDir: GinkgoT().TempDir(), args: flagsOf(bin),
		// a claim older than a second is judged at once, as every claim of a cluster is when an
		// older release takes over
		extra: []string{"--chains-config", previousChainConfig(), "--claim-grace", "1s"}}
	k.start()
	DeferCleanup(k.kill)
	p := &previousRun{k}
	Eventually(func() error { return ping("http://" + k.addr) }).Should(Succeed(), p.log)
	waitBaseAvailable()
	return p
}

// flagsOf keeps of the suite's arguments those bin defines (its --help lists them): the
// previous release lacks this one's newer flags (--recovery-gap), and its flag parser refuses
// them. Every flag the suite passes takes a value, dropped with it.
func flagsOf(bin string) func([]string) []string {
	GinkgoHelper()
	out, _ := exec.Command(bin, "--help").CombinedOutput() // the usage, on a status of 0 or 2
	known := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "-"); ok && strings.HasPrefix(line, "  -") {
			name, _, _ = strings.Cut(name, " ")
			known[name] = true
		}
	}
	Expect(known).To(HaveKey("chains-config"), "the flags of %s: %s", bin, out)
	return func(args []string) []string {
		var kept []string
		for i := 0; i < len(args); i++ {
			name, isFlag := strings.CutPrefix(args[i], "--")
			if isFlag && !known[name] {
				i++ // and its value
				continue
			}
			kept = append(kept, args[i])
		}
		return kept
	}
}

// previousChainConfig is the suite's chain configuration as the previous release reads it: its
// parser refuses keys it does not know, and this release writes its new ones (stallAfter) even
// unset, so every unset key is left out.
func previousChainConfig() string {
	GinkgoHelper()
	data, err := os.ReadFile(chainConfig)
	Expect(err).NotTo(HaveOccurred())
	var cfg map[string]any
	Expect(yaml.Unmarshal(data, &cfg)).To(Succeed())
	// the treasury addresses (issue 27) came after the previous release, whose strict parser
	// refuses them: a rollback drops them from the chain configuration (docs/operations/upgrade.md)
	if networks, ok := cfg["networks"].(map[string]any); ok {
		for _, n := range networks {
			if n, ok := n.(map[string]any); ok {
				delete(n, "treasury")
			}
		}
	}
	out, err := yaml.Marshal(withoutUnset(cfg))
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), "chains-previous.yaml")
	Expect(os.WriteFile(path, out, 0o600)).To(Succeed())
	return path
}

// withoutUnset is v without the map keys whose values are unset (zero, empty, a zero duration).
func withoutUnset(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch e {
			case nil, "", "0s", float64(0), false:
				continue
			}
			out[k] = withoutUnset(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutUnset(e)
		}
		return out
	}
	return v
}

// log is everything the previous release's payoutd wrote to its output so far.
func (p *previousRun) log() string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(p.logDir, "*.log"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.Write(data)
	}
	return b.String()
}

// markNewer writes testenv.NewerField into the status of every object of kinds, again
// until the API server serves the newer schema (a moment after the CRDs' update).
func markNewer(kinds []string) {
	GinkgoHelper()
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"`+testenv.NewerField+`":"kept"}}`))
	for _, kind := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(payoutv1.GroupVersion.WithKind(kind + "List"))
		Expect(env.Client.List(context.Background(), list)).To(Succeed())
		for i := range list.Items {
			o := &list.Items[i]
			Eventually(func() string {
				Expect(env.Client.Status().Patch(context.Background(), o, patch)).To(Succeed())
				v, _, _ := unstructured.NestedString(o.Object, "status", testenv.NewerField)
				return v
			}).Should(Equal("kept"), kind+" "+o.GetName())
		}
	}
}

// openV1 opens a v1 transfer of amount on base from a fresh wallet holding units, and returns its
// id, its deposit address, and the wallet's key and address.
func openV1(acct *account, rid int64, amount string, units int64) (string, common.Address, *ecdsa.PrivateKey, common.Address) {
	GinkgoHelper()
	key, w := freshWallet(units)
	proveWallet(acct, key) // what an account that binds wallets binds (issue 28)
	body := transferBody(acct.quote(amount), amount, rid, true)
	body["wallet_address"] = w.Hex()
	t := acct.must(200, "POST", "/api/payouts/transfer", body)["transfer"].(map[string]any)
	return t["id"].(string), common.HexToAddress(t["deposit_address"].(string)), key, w
}

// payV2 opens a v2 transfer of amount from a fresh wallet, sends units from it and confirms the
// hash, and returns the transfer's id.
func payV2(acct *account, rid int64, amount string, units int64) string {
	GinkgoHelper()
	key, w := freshWallet(units)
	proveWallet(acct, key) // what an account that binds wallets binds (issue 28)
	body := transferBody(acct.quote(amount), amount, rid, true)
	body["wallet_address"] = w.Hex()
	m := acct.must(200, "POST", "/api/payouts/transfer/v2", body)
	tx, err := base.Transfer(context.Background(), key, devchain.USDC, common.HexToAddress(m["deposit_address"].(string)), big.NewInt(units))
	Expect(err).NotTo(HaveOccurred())
	id := m["transfer_id"].(string)
	acct.must(200, "POST", "/api/payouts/transfer/v2/confirm-transfer", map[string]any{"transfer_id": id, "tx_hash": tx.TxHash.Hex()})
	return id
}

// awaitStatuses waits until each transfer of acct shows its public status.
func awaitStatuses(acct *account, want map[string]string) {
	GinkgoHelper()
	for id, status := range want {
		Eventually(func() string { s, _ := acct.status(id); return s }).WithTimeout(90*time.Second).Should(Equal(status), id)
	}
}

var _ = Describe("an upgrade and its rollback", Ordered, longest, func() {
	It("loses no field when the previous release reconciles what this one wrote", func() {
		// This release writes: a v1 transfer paid in two sends (deposit.parts) with a stranger's
		// dust refunded (strayDeposits[].refund), a v2 transfer (txMatch, senderScreening) that
		// binds its wallet, a transfer failed because its sender is blocked (failure.providerChecked)
		// whose refund is held, outcome mails (notifications[].state, decidedAt), the cursor's
		// blockTime.
		url, stop := runInProcess(env.Config)
		DeferCleanup(stop) // a second stop returns at once
		acct := newAccount(url, func(s *admin.AccountSettings) { s.BindWallets = true })
		rid := acct.recipient("Upgrade Payee")
		stranger, _ := freshWallet(1_000_000)

		id1, addr1, key1, _ := openV1(acct, rid, "25.00", 25_000_000)
		_, err := base.Transfer(context.Background(), stranger, devchain.USDC, addr1, big.NewInt(1))
		Expect(err).NotTo(HaveOccurred())
		_, err = base.Transfer(context.Background(), key1, devchain.USDC, addr1, big.NewInt(10_000_000))
		Expect(err).NotTo(HaveOccurred())
		_, err = base.Transfer(context.Background(), key1, devchain.USDC, addr1, big.NewInt(15_000_000))
		Expect(err).NotTo(HaveOccurred())
		id2 := payV2(acct, rid, "21.00", 21_000_000)
		id3, addr3, key3, w3 := openV1(acct, rid, "22.00", 22_000_000)
		Expect(admin.BlockWallet(context.Background(), env.Client, w3.Hex(), "upgrade spec")).To(Succeed())
		_, err = base.Transfer(context.Background(), key3, devchain.USDC, addr3, big.NewInt(22_000_000))
		Expect(err).NotTo(HaveOccurred())
		awaitStatuses(acct, map[string]string{id1: "completed", id2: "completed", id3: "failed"})
		_, _, err = admin.RequestRefund(context.Background(), env.Client, id1, "upgrade spec")
		Expect(err).NotTo(HaveOccurred())
		_, _, err = admin.RequestRefund(context.Background(), env.Client, id3, "upgrade spec")
		Expect(err).NotTo(HaveOccurred())
		ns := payoutv1.AccountNamespace(acct.name)
		Eventually(func() *payoutv1.StrayRefundFacts {
			t := &payoutv1.Transfer{}
			Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id1}, t)).To(Succeed())
			if len(t.Status.StrayDeposits) != 1 {
				return nil
			}
			return t.Status.StrayDeposits[0].Refund
		}).WithTimeout(90 * time.Second).ShouldNot(BeNil())
		Eventually(func() payoutv1.RefundState {
			rf := &payoutv1.Refund{}
			Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id3}, rf)).To(Succeed())
			return rf.Status.State
		}).Should(Equal(payoutv1.RefundHeld))
		Eventually(func() *metav1.Time {
			c := &payoutv1.ChainCursor{}
			Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: string(payoutv1.NetworkBase)}, c)).To(Succeed())
			return c.Status.BlockTime
		}).ShouldNot(BeNil())
		before := settled()
		stop()
		Expect(fieldsOf(before)).To(ContainElements(
			"Transfer status.deposit.parts[1].amount", "Transfer status.strayDeposits[0].refund.txHash",
			"Transfer status.notifications[0].state", "Transfer status.notifications[0].decidedAt",
			"Transfer status.txMatch.recordedAt", "Transfer status.senderScreening.result", "Transfer status.failure.providerChecked",
			"Refund spec.deposit.txHash", "Refund status.state", "ChainCursor status.blockTime", "Claim spec.holder.name",
		), "this release's fields are all there to lose")

		// The previous release takes over (a rollback), and a stranger's second dust comes to the
		// first transfer's address: the previous release lists it beside the first (it writes
		// the list whole, without what it does not know), and judges the wallet binding, whose
		// holder it takes for a transfer.
		prev := startPrevious()
		_, err = base.Transfer(context.Background(), stranger, devchain.USDC, addr1, big.NewInt(2))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool {
			t := &payoutv1.Transfer{}
			Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id1}, t)).To(Succeed())
			return len(t.Status.StrayDeposits) > 1 || strings.Contains(prev.log(), "a stray deposit, once listed")
		}).WithTimeout(90*time.Second).Should(BeTrue(), prev.log)
		Eventually(func() bool {
			claims := &payoutv1.ClaimList{}
			Expect(env.Client.List(context.Background(), claims)).To(Succeed())
			for _, c := range claims.Items {
				if c.Spec.Kind == payoutv1.ClaimWalletBinding && c.DeletionTimestamp.IsZero() {
					return false
				}
			}
			return true
		}).WithTimeout(30*time.Second).Should(BeTrue(), "the previous release judges the wallet binding", prev.log)
		after := settled()
		prev.kill()
		Expect(unexpected(lost(before, after))).To(BeEmpty(), "what the previous release dropped of this release's objects")
	})

	It("loses no field when this release reconciles what the previous one wrote, nor a newer release's", func() {
		// The previous release writes: a v1 transfer with a stranger's dust, a v2 transfer, a v2
		// transfer whose transaction sends too little, refunded; their mails and the cursor.
		prev := startPrevious()
		url := "http://" + prev.addr
		acct := newAccount(url)
		rid := acct.recipient("Upgrade Payee")
		stranger, _ := freshWallet(1_000_000)

		id1, addr1, key1, _ := openV1(acct, rid, "25.00", 25_000_000)
		_, err := base.Transfer(context.Background(), key1, devchain.USDC, addr1, big.NewInt(25_000_000))
		Expect(err).NotTo(HaveOccurred())
		_, err = base.Transfer(context.Background(), stranger, devchain.USDC, addr1, big.NewInt(1))
		Expect(err).NotTo(HaveOccurred())
		id2 := payV2(acct, rid, "21.00", 21_000_000)
		id3 := payV2(acct, rid, "22.00", 20_000_000) // too little: failed, then refunded
		awaitStatuses(acct, map[string]string{id1: "completed", id2: "completed", id3: "failed"})
		ns := payoutv1.AccountNamespace(acct.name)
		Expect(env.Client.Create(context.Background(), &payoutv1.Refund{
			ObjectMeta: metav1.ObjectMeta{Name: id3, Namespace: ns, Labels: map[string]string{payoutv1.RefundTransferLabel: id3}},
			Spec:       payoutv1.RefundSpec{Transfer: id3, RequestedBy: "upgrade spec"},
		})).To(Succeed())
		Eventually(func() string { s, _ := acct.status(id3); return s }).WithTimeout(90 * time.Second).Should(Equal("refunded"))
		Eventually(func() int {
			t := &payoutv1.Transfer{}
			Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id1}, t)).To(Succeed())
			return len(t.Status.StrayDeposits)
		}).Should(Equal(1))
		settled()
		prev.kill()
		// ...and a status field of a release newer than this one on every object (its CRDs
		// installed, as after a rollback to this release): this release's writes keep it too.
		kinds, restore, err := env.WithNewerField(context.Background(), "status")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(restore)
		markNewer(kinds)
		before := storedObjects()

		// This release takes over (an upgrade) and reconciles all of it.
		_, stop := runInProcess(env.Config, "--claim-grace", "1s")
		DeferCleanup(stop)
		after := settled()
		Eventually(func() *metav1.Time {
			c := &payoutv1.ChainCursor{}
			Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: string(payoutv1.NetworkBase)}, c)).To(Succeed())
			return c.Status.BlockTime
		}).ShouldNot(BeNil(), "this release writes the cursor's block time the previous release did not keep")
		stop()
		Expect(lost(before, after)).To(BeEmpty(), "what this release dropped of the previous release's objects")
	})
})
