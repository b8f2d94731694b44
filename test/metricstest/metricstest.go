// Package metricstest reads the service's metrics the way Prometheus does, for tests: scrape a
// metrics endpoint (payoutd's --metrics-bind-address, /metrics) or gather the registry of this
// process, then look values up by name and labels.
//
// An end-to-end test checks that a counter moved by reading it before and after:
//
//	before, err := metricstest.Scrape(ctx, "http://127.0.0.1:8081/metrics")
//	... create a transfer and wait until it completes ...
//	after, err := metricstest.Scrape(ctx, "http://127.0.0.1:8081/metrics")
//	moved := after.Delta(before, "payout_transfer_transitions_total", "to", "completed")
//	// moved >= 1; after.Sum("payout_transfers", "status", "completed") >= 1 once payoutd counts
//	// transfers (metrics.CountTransfers); the provider's create calls moved too:
//	created := after.Delta(before, "payout_provider_requests_total", "operation", "create", "outcome", "success")
package metricstest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Samples are the metric families of one scrape, by name.
type Samples map[string]*dto.MetricFamily

// Scrape reads a Prometheus text exposition from url.
func Scrape(ctx context.Context, url string) (Samples, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("scraping %s: %s: %s", url, resp.Status, body)
	}
	return Parse(resp.Body)
}

// Parse reads a Prometheus text exposition.
func Parse(r io.Reader) (Samples, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing the metrics: %w", err)
	}
	return Samples(families), nil
}

// Gather reads controller-runtime's registry of this process (where package metrics
// registers), without HTTP.
func Gather() (Samples, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	s := Samples{}
	for _, f := range families {
		s[f.GetName()] = f
	}
	return s, nil
}

// Has reports whether the scrape holds the metric name (with at least one series).
func (s Samples) Has(name string) bool {
	f := s[name]
	return f != nil && len(f.Metric) > 0
}

// Sum adds up the series of name whose labels include the given label pairs (name, value,
// name, value, ...): a counter's or gauge's value, a histogram's count (name_count may be
// given for it too) or its sum (name_sum). A metric that is absent sums to 0.
func (s Samples) Sum(name string, labelPairs ...string) float64 {
	if len(labelPairs)%2 != 0 {
		panic("metricstest: Sum wants label name and value pairs")
	}
	family, part := s[name], ""
	if family == nil {
		for _, suffix := range []string{"_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && s[base] != nil {
				family, part = s[base], suffix
			}
		}
	}
	if family == nil {
		return 0
	}
	total := 0.0
	for _, m := range family.Metric {
		if !matches(m, labelPairs) {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Untyped != nil:
			total += m.Untyped.GetValue()
		case m.Histogram != nil && part == "_sum":
			total += m.Histogram.GetSampleSum()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		}
	}
	return total
}

// Delta is how much name (with the label pairs, as for Sum) moved from before to s.
func (s Samples) Delta(before Samples, name string, labelPairs ...string) float64 {
	return s.Sum(name, labelPairs...) - before.Sum(name, labelPairs...)
}

// Series lists the label sets of name's series, each as "k=v,k=v" sorted by label name.
func (s Samples) Series(name string) []string {
	f := s[name]
	if f == nil {
		return nil
	}
	var out []string
	for _, m := range f.Metric {
		var kv []string
		for _, l := range m.Label {
			kv = append(kv, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(kv)
		out = append(out, strings.Join(kv, ","))
	}
	sort.Strings(out)
	return out
}

func matches(m *dto.Metric, pairs []string) bool {
	for i := 0; i < len(pairs); i += 2 {
		found := false
		for _, l := range m.Label {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// MustGather is Gather for a test: a registry that cannot be read fails it.
func MustGather(t testing.TB) Samples {
	t.Helper()
	s, err := Gather()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
