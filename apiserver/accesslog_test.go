package apiserver

import (
	"errors"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// hiddenZap is zapr's sink without its Underlier: a logger the access log cannot see through,
// so that it takes the logr path into the same zap core.
type hiddenZap struct{ logr.LogSink }

// TestAccessLogLinesAreTheSameEitherWay writes the same requests through the zap path (payoutd's
// logger) and through the logr path into the same kind of core, and compares the lines: the
// message, the level and every field.
func TestAccessLogLinesAreTheSameEitherWay(t *testing.T) {
	records := []*record{
		{id: "r1", status: 200, bytes: 812, ip: netip.MustParseAddr("192.0.2.1"), account: "acme", keyID: "0123456789abcdef"},
		{id: "r2", status: 401, bytes: 40, ip: netip.MustParseAddr("192.0.2.2")},
		{id: "r3", status: 503, bytes: 60, ip: netip.MustParseAddr("192.0.2.3"), account: "acme", keyID: "0123456789abcdef", err: errors.New("the cache is not synced")},
	}
	lines := func(hide bool) []observer.LoggedEntry {
		core, logs := observer.New(zapcore.InfoLevel)
		log := zapr.NewLogger(zap.New(core)).WithName("facade")
		if hide {
			log = logr.New(hiddenZap{log.GetSink()})
		}
		a := newAccessLog(log)
		if (a.zap != nil) == hide {
			t.Fatalf("hidden %v: the access log took the wrong path", hide)
		}
		for _, rec := range records {
			a.write("GET", "/api/payouts/transfer/x", rec, 1500*time.Microsecond)
		}
		return logs.AllUntimed()
	}
	viaZap, viaLogr := lines(false), lines(true)
	if len(viaZap) != len(records) || len(viaLogr) != len(records) {
		t.Fatalf("lines: %d through zap, %d through logr, want %d", len(viaZap), len(viaLogr), len(records))
	}
	for i := range records {
		z, l := viaZap[i], viaLogr[i]
		if z.Message != l.Message || z.Level != l.Level || z.LoggerName != l.LoggerName {
			t.Errorf("line %d: %q %v %q through zap, %q %v %q through logr", i, z.Message, z.Level, z.LoggerName, l.Message, l.Level, l.LoggerName)
		}
		zf, lf := z.ContextMap(), l.ContextMap()
		if len(zf) != len(lf) {
			t.Errorf("line %d: fields %v through zap, %v through logr", i, zf, lf)
		}
		for k, v := range lf {
			if zf[k] != v {
				t.Errorf("line %d, field %s: %v (%T) through zap, %v (%T) through logr", i, k, zf[k], zf[k], v, v)
			}
		}
	}
	if got := viaZap[0].ContextMap()["durationMs"]; got != 1.5 {
		t.Errorf("durationMs %v, want 1.5", got)
	}
	if viaZap[2].Level != zapcore.ErrorLevel || viaZap[2].ContextMap()["error"] != "the cache is not synced" {
		t.Errorf("a failed request's line: %v %v", viaZap[2].Level, viaZap[2].ContextMap())
	}
}

// BenchmarkAccessLogSampledOut is the cost of a line zap's sampler drops (the common case of a
// busy second), through zap's checked entry and through logr's key-value list.
func BenchmarkAccessLogSampledOut(b *testing.B) {
	// after its first line of the hour, this sampler drops every line
	sampled := zapcore.NewSamplerWithOptions(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
		zapcore.AddSync(io.Discard), zapcore.InfoLevel), time.Hour, 1, 0)
	rec := &record{id: "r1", status: 200, bytes: 812, ip: netip.MustParseAddr("192.0.2.1"), account: "acme", keyID: "0123456789abcdef"}
	for _, c := range []struct {
		name string
		hide bool
	}{{"zap", false}, {"logr", true}} {
		b.Run(c.name, func(b *testing.B) {
			log := zapr.NewLogger(zap.New(sampled))
			if c.hide {
				log = logr.New(hiddenZap{log.GetSink()})
			}
			a := newAccessLog(log)
			b.ReportAllocs()
			for b.Loop() {
				a.write("GET", "/api/payouts/deposit-options", rec, time.Millisecond)
			}
		})
	}
}
