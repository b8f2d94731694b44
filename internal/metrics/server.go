package metrics

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// ServerOptions are the options of the manager's metrics endpoint at bindAddress. Secure serves
// it as kubebuilder's projects do by default: over HTTPS (certDir's tls.crt and tls.key, else a
// self-signed certificate), each scrape's bearer token checked by a TokenReview and its access to
// the non-resource URL /metrics by a SubjectAccessReview, as the service account payoutd runs
// as (config/rbac/metrics_auth_role.yaml grants it both; config/rbac/metrics_reader_role.yaml is
// what a scraper needs). Anything else is 401 (no or a bad token) or 403. Not secure: plain HTTP
// to anyone who reaches the address.
func ServerOptions(bindAddress string, secure bool, certDir string) metricsserver.Options {
	o := metricsserver.Options{BindAddress: bindAddress}
	if secure {
		o.SecureServing, o.CertDir, o.FilterProvider = true, certDir, filters.WithAuthenticationAndAuthorization
	}
	return o
}
