package apiserver

import (
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// accessLog writes the line of each request: requestId, method, path, status, bytes,
// durationMs, ip, and account and keyId for an authenticated caller; a failed request's line is
// an error with its error. Under payoutd the logger is zap's, whose production sampler writes
// the first 100 lines of a message each second and every 100th after that: the line's fields
// are then made only for a line that is written (zap's checked entry), where a logr call boxes
// them into a key-value list for every request, written or not (about nine allocations a
// request, docs/benchmarks.md "Cached reads"). Another logger (tests) takes the logr path.
type accessLog struct {
	log logr.Logger
	zap *zap.Logger // log's own zap logger, or nil
}

func newAccessLog(log logr.Logger) accessLog {
	a := accessLog{log: log}
	if u, ok := log.GetSink().(zapr.Underlier); ok {
		a.zap = u.GetUnderlying()
	}
	return a
}

func (a accessLog) write(method, path string, rec *record, took time.Duration) {
	ms := float64(took.Microseconds()) / 1000
	if a.zap != nil {
		lvl, msg := zapcore.InfoLevel, "request"
		if rec.err != nil {
			lvl, msg = zapcore.ErrorLevel, "request failed"
		}
		ce := a.zap.Check(lvl, msg)
		if ce == nil {
			return
		}
		f := make([]zap.Field, 0, 10)
		f = append(f, zap.String("requestId", rec.id), zap.String("method", method), zap.String("path", path),
			zap.Int("status", rec.status), zap.Int("bytes", rec.bytes), zap.Float64("durationMs", ms), zap.String("ip", rec.ip.String()))
		if rec.account != "" {
			f = append(f, zap.String("account", rec.account), zap.String("keyId", rec.keyID))
		}
		if rec.err != nil {
			f = append(f, zap.Error(rec.err))
		}
		ce.Write(f...)
		return
	}
	kv := []any{"requestId", rec.id, "method", method, "path", path, "status", rec.status,
		"bytes", rec.bytes, "durationMs", ms, "ip", rec.ip.String()}
	if rec.account != "" {
		kv = append(kv, "account", rec.account, "keyId", rec.keyID)
	}
	if rec.err != nil {
		a.log.Error(rec.err, "request failed", kv...)
		return
	}
	a.log.Info("request", kv...)
}
