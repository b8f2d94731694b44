package notify

import (
	"context"
	"errors"
	"fmt"
	"net/textproto"

	gomail "github.com/wneessen/go-mail"
)

// ErrNotConfigured is what the mailer of a Config without an SMTP address returns from Send.
// It is neither transient nor permanent: whether it is an error is the caller's decision.
var ErrNotConfigured = errors.New("notify: e-mail is not configured (--" + FlagAddr + " is empty)")

// Stage is where in a delivery an error happened.
type Stage string

const (
	// StageMessage: the message could not be built (no valid recipient, a malformed header);
	// no connection was made. Permanent.
	StageMessage Stage = "message"
	// StageSession: connecting, the greeting, EHLO, STARTTLS or AUTH. Says nothing about this
	// message, so always transient, whatever the reply code (a 535 after a password rotation
	// delays mail until the configuration is fixed; it does not drop it).
	StageSession Stage = "session"
	// StageDelivery: MAIL FROM, RCPT TO or DATA. A 5xx reply is permanent, a 4xx reply and a
	// lost connection or timeout are transient.
	StageDelivery Stage = "delivery"
)

// SendError is the error of a failed Send. Use IsTransient and IsPermanent rather than its
// fields when deciding whether to retry.
type SendError struct {
	// MessageID of the message that was not delivered.
	MessageID string
	Stage     Stage
	// Code is the SMTP reply code, 0 when the server gave none (connection refused, timeout).
	Code int
	// Temporary: a later attempt may succeed.
	Temporary bool
	Err       error
}

func (e *SendError) Error() string {
	class := "permanent"
	if e.Temporary {
		class = "transient"
	}
	code := ""
	if e.Code != 0 {
		code = fmt.Sprintf(", SMTP %d", e.Code)
	}
	return fmt.Sprintf("notify: sending %s failed at %s (%s%s): %v", e.MessageID, e.Stage, class, code, e.Err)
}

func (e *SendError) Unwrap() error { return e.Err }

// IsTransient reports whether err is a delivery failure that a later attempt may overcome:
// the server could not be reached, timed out, answered 4xx, or would not set up a session.
// The caller retries later, with backoff; the transfer never waits for it.
func IsTransient(err error) bool {
	var se *SendError
	return errors.As(err, &se) && se.Temporary
}

// IsPermanent reports whether err is a delivery failure that no retry will overcome: the
// server refused this message with a 5xx reply (e.g. an unknown recipient), or the message is
// unusable. The caller records the failure and stops.
func IsPermanent(err error) bool {
	var se *SendError
	return errors.As(err, &se) && !se.Temporary
}

// classify wraps a go-mail error of stage into a SendError. ctx is the send's context: once
// it is done, the failure is reported as transient and wraps ctx's error too.
func classify(ctx context.Context, messageID string, stage Stage, err error) *SendError {
	se := &SendError{MessageID: messageID, Stage: stage, Err: err}
	var gse *gomail.SendError
	var tpe *textproto.Error
	switch {
	case errors.As(err, &gse):
		se.Code = gse.ErrorCode()
		switch gse.Reason {
		case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrNoUnencoded:
			se.Stage = StageMessage
		}
	case errors.As(err, &tpe):
		se.Code = tpe.Code
	}
	switch {
	case se.Stage == StageMessage:
		se.Temporary = false
	case ctx.Err() != nil:
		se.Temporary = true
		se.Err = errors.Join(err, context.Cause(ctx))
	case se.Stage == StageSession:
		se.Temporary = true
	default:
		se.Temporary = se.Code < 500 || se.Code > 599
	}
	return se
}
