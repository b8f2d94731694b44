package main_test

import (
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sclock "k8s.io/utils/clock"

	"github.com/stablepay/payout-operator/internal/kycsite"
)

var _ = Describe("wallet link", func() {
	It("prints a link that opens the wallet verification site for that account, signed with the key of the site's Secret", func() {
		account := newAccount("link")
		linkKey := []byte(strings.Repeat("site-link-key-", 3))

		// the site, as payoutd serves it, reading the same key
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		siteURL := "http://" + l.Addr().String()
		site, err := kycsite.New(kycsite.Config{Client: k8s, APIReader: k8s, URL: siteURL, ChainID: 1, LinkKey: linkKey,
			Clock: k8sclock.RealClock{}, Log: logr.Discard()})
		Expect(err).NotTo(HaveOccurred())
		srv := &http.Server{Handler: site.Handler()}
		go func() { _ = srv.Serve(l) }()
		DeferCleanup(srv.Close)

		fails("error: the wallet verification site's Secret payout-system/payout-kyc-site does not exist (docs/kyc-site.md)\n", "wallet", "link", account)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "payout-system"}}
		if err := k8s.Create(ctx, ns); !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "payout-system", Name: "payout-kyc-site"},
			Data: map[string][]byte{"link-key": linkKey, "url": []byte(siteURL + "\n")}}
		Expect(k8s.Create(ctx, sec)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(ctx, sec)).To(Succeed()) })

		r := kubectlPayout("wallet", "link", account, "--ttl", "2h")
		Expect(r.Code).To(Equal(0), r.Stderr)
		Expect(r.Stdout).To(HavePrefix(siteURL + "/verify?link="))
		Expect(r.Stderr).To(HavePrefix(`Link for account "` + account + `", valid until `))
		page := func(u string) (int, string) {
			resp, err := http.Get(u)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			Expect(err).NotTo(HaveOccurred())
			return resp.StatusCode, string(body)
		}
		status, body := page(strings.TrimSuffix(r.Stdout, "\n"))
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(body).To(ContainSubstring("The payout account <strong>" + account + "</strong> asks you"))

		// a key other than the site's makes links the site refuses
		sec.Data["link-key"] = []byte(strings.Repeat("another-key-", 3))
		Expect(k8s.Update(ctx, sec)).To(Succeed())
		status, body = page(strings.TrimSuffix(succeeds("wallet", "link", account), "\n"))
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body).NotTo(ContainSubstring("<strong>" + account + "</strong>"))

		fails("error: account \"no-such-account\" does not exist\n", "wallet", "link", "no-such-account")
		long := kubectlPayout("wallet", "link", account, "--ttl", "1000h")
		Expect(long.Code).To(Equal(1))
		Expect(long.Stdout).To(BeEmpty())
		Expect(long.Stderr).To(HavePrefix("error: --ttl 1000h0m0s is not between 1m0s and 720h0m0s\n"))
	})
})
