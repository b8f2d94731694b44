package config_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

type prometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// templateLabel is a label an annotation's template reads ({{ $labels.network }}).
var templateLabel = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)

// TestAlertRules reads config/prometheus/rules.yaml: a PrometheusRule whose every alert has a
// severity and a summary, a duration that parses, and an expression that names only metrics of
// internal/metrics with their own labels, as the dashboard's queries must; an annotation reads
// only labels the expression keeps.
func TestAlertRules(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule prometheusRule
	if err := yaml.UnmarshalStrict(data, &rule); err != nil {
		t.Fatalf("rules.yaml: %v", err)
	}
	if rule.APIVersion != "monitoring.coreos.com/v1" || rule.Kind != "PrometheusRule" {
		t.Errorf("rules.yaml is a %s %s, want a monitoring.coreos.com/v1 PrometheusRule", rule.APIVersion, rule.Kind)
	}
	series := catalogSeries()
	alerts := map[string]bool{}
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || alerts[r.Alert] {
				t.Errorf("group %s: an alert without a name, or named twice: %q", g.Name, r.Alert)
			}
			alerts[r.Alert] = true
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
				}
			}
			if sev := r.Labels["severity"]; sev != "critical" && sev != "warning" {
				t.Errorf("%s: severity %q, want critical or warning", r.Alert, sev)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s: no summary", r.Alert)
			}
			names := checkExpr(t, r.Alert, r.Expr, series)
			if len(names) == 0 {
				t.Errorf("%s: the expression names no metric: %s", r.Alert, r.Expr)
			}
			// a label survives an aggregation only when it groups by it
			kept := map[string]bool{}
			for _, n := range names {
				for _, l := range series[n] {
					kept[l] = true
				}
			}
			if strings.Contains(r.Expr, "sum(") || strings.Contains(r.Expr, "max(") {
				kept = map[string]bool{}
			}
			for _, m := range promGrouping.FindAllStringSubmatch(r.Expr, -1) {
				for _, l := range strings.Split(m[2], ",") {
					kept[strings.TrimSpace(l)] = true
				}
			}
			for _, text := range r.Annotations {
				for _, m := range templateLabel.FindAllStringSubmatch(text, -1) {
					if !kept[m[1]] {
						t.Errorf("%s: an annotation reads $labels.%s, which the expression does not keep", r.Alert, m[1])
					}
				}
			}
		}
	}
	if len(alerts) == 0 {
		t.Fatal("rules.yaml has no alert")
	}
}

// TestAlertRulesComponent: config/prometheus added to config/default, as
// docs/operations/monitoring.md says, renders the rules beside the service in its namespace.
func TestAlertRulesComponent(t *testing.T) {
	_, objs := renderWith(t, "prometheus")
	rule := find(t, objs, "PrometheusRule", "payout-alerts")
	if rule.GetNamespace() != "payout-system" {
		t.Errorf("the PrometheusRule is in namespace %q, want payout-system", rule.GetNamespace())
	}
	// the ServiceMonitor scrapes the metrics Service's port over HTTPS with a bearer token, as
	// payoutd's --metrics-secure requires
	monitor := find(t, objs, "ServiceMonitor", "payout-metrics")
	svc := find(t, objs, "Service", "payout-metrics")
	selector, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	if !labels.SelectorFromSet(selector).Matches(labels.Set(svc.GetLabels())) || len(selector) == 0 {
		t.Errorf("the ServiceMonitor selects %v, the metrics Service is labelled %v", selector, svc.GetLabels())
	}
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(endpoints) != 1 || len(ports) != 1 {
		t.Fatalf("endpoints %v, ports %v", endpoints, ports)
	}
	ep, port := endpoints[0].(map[string]any), ports[0].(map[string]any)
	if ep["port"] != port["name"] || ep["scheme"] != "https" || ep["bearerTokenFile"] == nil {
		t.Errorf("the ServiceMonitor's endpoint %v does not scrape port %v over HTTPS with a token", ep, port["name"])
	}
}
