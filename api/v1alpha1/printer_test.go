package v1alpha1_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

var _ = Describe("printer columns", func() {
	It("are served by the Table API", func() {
		ns := freshNamespace()
		Expect(env.Client.Create(ctx, testgen.Transfer(ns, "bbbbbbbbbbbbbbbbbbbbbbb1"))).To(Succeed())
		cfg := rest.CopyConfig(env.Config)
		cfg.GroupVersion = &payoutv1.GroupVersion
		cfg.APIPath = "/apis"
		cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
		rc, err := rest.RESTClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		raw, err := rc.Get().Namespace(ns).Resource("transfers").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		Expect(err).NotTo(HaveOccurred())
		table := &metav1.Table{}
		Expect(json.Unmarshal(raw, table)).To(Succeed())
		var names []string
		for _, c := range table.ColumnDefinitions {
			names = append(names, c.Name)
		}
		Expect(names).To(Equal([]string{"Name", "Status", "Amount", "Currency", "Network", "Recipient", "Method", "Token", "Error", "Age"}))
		Expect(table.Rows).To(HaveLen(1))
		Expect(table.Rows[0].Cells[2]).To(Equal("25.00"))
		Expect(table.Rows[0].Cells[3]).To(Equal("EUR"))
	})

	It("show in `kubectl get payouts` across every kind of the category", func() {
		kubectl := filepath.Join(env.BinaryAssetsDirectory, "kubectl")
		if _, err := os.Stat(kubectl); err != nil {
			Fail("kubectl is not in " + env.BinaryAssetsDirectory + ": run `make control-plane`")
		}
		ns := freshNamespace()
		Expect(env.Client.Create(ctx, testgen.Recipient(ns, 777))).To(Succeed())
		Expect(env.Client.Create(ctx, testgen.Transfer(ns, "bbbbbbbbbbbbbbbbbbbbbbb2"))).To(Succeed())

		user, err := env.AddUser(envtest.User{Name: "printer-test", Groups: []string{"system:masters"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig, err := user.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(os.WriteFile(path, kubeconfig, 0o600)).To(Succeed())

		out, err := exec.Command(kubectl, "--kubeconfig", path, "get", "payouts", "-n", ns).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		text := string(out)
		// one table per kind in the namespace, each with its own columns
		Expect(text).To(ContainSubstring("recipient.payout.stablepay.dev/777"))
		Expect(text).To(ContainSubstring("transfer.payout.stablepay.dev/bbbbbbbbbbbbbbbbbbbbbbb2"))
		for _, header := range []string{"HOLDER", "CURRENCY", "TYPE", "COUNTRY", "DELETED", "STATUS", "AMOUNT", "NETWORK", "RECIPIENT"} {
			Expect(text).To(ContainSubstring(header))
		}
		Expect(strings.Count(text, "Jane Doe")).To(Equal(1))
	})
})
