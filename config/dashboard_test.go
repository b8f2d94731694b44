package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stablepay/payout-operator/internal/metrics"
)

// promFunctions are the PromQL functions and keywords the dashboard and the alerts may use.
var promFunctions = map[string]bool{
	"sum": true, "max": true, "min": true, "avg": true, "count": true, "topk": true, "bottomk": true,
	"rate": true, "irate": true, "increase": true, "changes": true, "deriv": true, "delta": true, "histogram_quantile": true,
	"clamp_min": true, "clamp_max": true, "abs": true, "by": true, "without": true, "on": true, "ignoring": true,
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "time": true,
}

type dashboardPanel struct {
	Title   string           `json:"title"`
	Type    string           `json:"type"`
	Panels  []dashboardPanel `json:"panels"`
	Targets []struct {
		Expr       string `json:"expr"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
}

// TestDashboard reads config/grafana/payout-dashboard.json: every query names only metrics of
// internal/metrics (histograms through _bucket, _sum, _count) with their own labels, every
// metric of the package is on the dashboard, and queries use the dashboard's datasource
// variable.
func TestDashboard(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "config", "grafana", "payout-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID        string           `json:"uid"`
		Title      string           `json:"title"`
		Panels     []dashboardPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name, Type, Query string
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if dash.UID == "" || dash.Title == "" {
		t.Error("the dashboard needs a uid and a title")
	}
	if len(dash.Templating.List) == 0 || dash.Templating.List[0].Name != "datasource" || dash.Templating.List[0].Query != "prometheus" {
		t.Errorf("the dashboard's first variable must be the Prometheus datasource: %+v", dash.Templating.List)
	}

	catalog := map[string]metrics.Metric{}
	for _, m := range metrics.Catalog {
		catalog[m.Name] = m
	}
	series := catalogSeries()

	used := map[string]bool{}
	queries := 0
	var walk func([]dashboardPanel)
	walk = func(panels []dashboardPanel) {
		for _, p := range panels {
			walk(p.Panels)
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, target := range p.Targets {
				queries++
				if target.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q: datasource %q, want ${datasource}", p.Title, target.Datasource.UID)
				}
				for _, name := range checkExpr(t, p.Title, target.Expr, series) {
					base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
					if _, ok := catalog[name]; ok {
						base = name
					}
					used[base] = true
				}
			}
		}
	}
	walk(dash.Panels)
	if queries == 0 {
		t.Fatal("the dashboard has no queries")
	}
	for _, m := range metrics.Catalog {
		if !used[m.Name] {
			t.Errorf("%s is not on the dashboard", m.Name)
		}
	}
}

// catalogSeries are the series names a query may use, and the labels each carries: every
// metric of internal/metrics, a histogram through its _bucket, _sum and _count.
func catalogSeries() map[string][]string {
	series := map[string][]string{}
	for _, m := range metrics.Catalog {
		if m.Type == metrics.Histogram {
			series[m.Name+"_bucket"] = append(slices.Clone(m.Labels), "le")
			series[m.Name+"_sum"] = m.Labels
			series[m.Name+"_count"] = m.Labels
			continue
		}
		series[m.Name] = m.Labels
	}
	return series
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promRange    = regexp.MustCompile(`\[[0-9smhdwy:]+\]`)
	promMatchers = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}`)
	promGrouping = regexp.MustCompile(`\b(by|without|on|ignoring)\s*\(([^)]*)\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promNumber   = regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?\b`)
)

// checkExpr checks one PromQL expression and returns the series names it selects: every
// identifier that is not a function, keyword or label must be a series of series, every label
// in a matcher one of its series' labels, every grouping label one of the expression's series'.
func checkExpr(t *testing.T, panel, expr string, series map[string][]string) []string {
	t.Helper()
	var names []string
	labelsOf := map[string]bool{}
	e := promString.ReplaceAllString(expr, `""`)
	e = promRange.ReplaceAllString(e, "")
	// selectors with matchers: metric{label="v", ...}
	for _, m := range promMatchers.FindAllStringSubmatch(e, -1) {
		name := m[1]
		if name == "" {
			t.Errorf("panel %q: a selector without a metric name: %s", panel, expr)
			continue
		}
		for _, matcher := range strings.Split(m[2], ",") {
			label := strings.TrimSpace(promIdent.FindString(matcher))
			if label != "" && !slices.Contains(series[name], label) {
				t.Errorf("panel %q: %s has no label %q", panel, name, label)
			}
		}
	}
	e = promMatchers.ReplaceAllString(e, "$1")
	var grouping []string
	for _, m := range promGrouping.FindAllStringSubmatch(e, -1) {
		for _, l := range strings.Split(m[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				grouping = append(grouping, l)
			}
		}
	}
	e = promGrouping.ReplaceAllString(e, "")
	e = promNumber.ReplaceAllString(e, "")
	for _, id := range promIdent.FindAllString(e, -1) {
		if promFunctions[id] {
			continue
		}
		labels, ok := series[id]
		if !ok {
			t.Errorf("panel %q: %q is no metric of internal/metrics: %s", panel, id, expr)
			continue
		}
		names = append(names, id)
		for _, l := range labels {
			labelsOf[l] = true
		}
	}
	for _, l := range grouping {
		if !labelsOf[l] {
			have := make([]string, 0, len(labelsOf))
			for k := range labelsOf {
				have = append(have, k)
			}
			sort.Strings(have)
			t.Errorf("panel %q: grouping label %q is none of %v: %s", panel, l, have, expr)
		}
	}
	return names
}

// TestDocsListEveryMetric: the table of metrics of docs/operations/monitoring.md names each
// metric of the catalog.
func TestDocsListEveryMetric(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "docs", "operations", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range metrics.Catalog {
		if !strings.Contains(string(readme), "`"+m.Name+"`") {
			t.Errorf("docs/operations/monitoring.md does not list %s", m.Name)
		}
	}
}
