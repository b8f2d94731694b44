package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"testing"
)

func TestClassify(t *testing.T) {
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name      string
		ctx       context.Context
		stage     Stage
		err       error
		code      int
		transient bool
	}{
		{"connection refused", live, StageSession, errors.New("dial tcp 127.0.0.1:25: connect: connection refused"), 0, true},
		{"greeting 554", live, StageSession, &textproto.Error{Code: 554, Msg: "no service"}, 554, true},
		{"auth 535", live, StageSession, fmt.Errorf("SMTP AUTH failed: %w", &textproto.Error{Code: 535, Msg: "bad credentials"}), 535, true},
		{"rcpt 550", live, StageDelivery, &textproto.Error{Code: 550, Msg: "5.1.1 unknown"}, 550, false},
		{"rcpt 452", live, StageDelivery, &textproto.Error{Code: 452, Msg: "4.2.2 full"}, 452, true},
		{"connection lost", live, StageDelivery, io.ErrUnexpectedEOF, 0, true},
		{"canceled during delivery", done, StageDelivery, errors.New("use of closed network connection"), 0, true},
		{"bad message", done, StageMessage, errors.New("no recipient"), 0, false},
	}
	for _, c := range cases {
		se := classify(c.ctx, "<id@example.com>", c.stage, c.err)
		if se.Code != c.code || se.Temporary != c.transient || IsTransient(se) != c.transient || IsPermanent(se) == c.transient {
			t.Errorf("%s: %+v", c.name, se)
		}
		wrapped := fmt.Errorf("notifying: %w", se)
		if IsTransient(wrapped) != c.transient || !errors.Is(wrapped, c.err) {
			t.Errorf("%s: classification lost through wrapping", c.name)
		}
	}
	if IsTransient(nil) || IsPermanent(nil) || IsTransient(errors.New("other")) || IsPermanent(errors.New("other")) {
		t.Error("an error that is not a SendError is classified")
	}
	se := classify(done, "<id@example.com>", StageDelivery, io.EOF)
	if !errors.Is(se, context.Canceled) {
		t.Errorf("a cancelled send does not say so: %v", se)
	}
}
