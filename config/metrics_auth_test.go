package config_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	payoutmetrics "github.com/stablepay/payout-operator/internal/metrics"
)

// checkMetricsAuth serves the metrics as the deployment does (--metrics-secure, as the
// controllers' service account: its TokenReviews and SubjectAccessReviews go through the shipped
// roles) and scrapes them without a token, with a token of an identity that may not read them,
// and with one bound to the shipped payout-metrics-reader.
func checkMetricsAuth(ctx context.Context, t *testing.T, cfg *rest.Config, c client.Client) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	opts := payoutmetrics.ServerOptions(addr, true, t.TempDir())
	controller := serviceAccount("payout-controller")
	served := rest.CopyConfig(cfg)
	served.Impersonate = rest.ImpersonationConfig{UserName: controller.name, Groups: controller.groups}
	httpClient, err := rest.HTTPClientFor(served)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := metricsserver.NewServer(opts, served, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = srv.Start(sctx) }()

	scheme := "http"
	if opts.SecureServing {
		scheme = "https"
	}
	// payoutd's certificate is self-signed unless --metrics-cert-dir names one
	scraper := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	scrape := func(token string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := scraper.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		code, _ := scrape("")
		return code != 0, nil
	}); err != nil {
		t.Fatalf("the metrics endpoint does not answer: %v", err)
	}

	reader, stranger := token(ctx, t, c, "prometheus"), token(ctx, t, c, "stranger")
	b := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "prometheus-reads-payout-metrics"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "payout-metrics-reader"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "prometheus", "namespace": namespace}},
	}}
	if err := c.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	if code, body := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("a scrape without a token: %d %.200s, want 401", code, body)
	}
	if code, body := scrape(stranger); code != http.StatusForbidden {
		t.Errorf("a scrape with the token of an identity without payout-metrics-reader: %d %.200s, want 403", code, body)
	}
	// the binding takes effect within moments
	var code int
	var body string
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		code, body = scrape(reader)
		return code == http.StatusOK, nil
	})
	if code != http.StatusOK || !strings.Contains(body, "# TYPE") {
		t.Errorf("a scrape with the token of payout-metrics-reader: %d %.200s, want 200 and the metrics", code, body)
	}
}

// token is a bearer token of a new service account name in payoutd's namespace (TokenRequest).
func token(ctx context.Context, t *testing.T, c client.Client, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if err := c.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatalf("a token of %s: %v", name, err)
	}
	return tr.Status.Token
}
