package notify

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stablepay/payout-operator/internal/secretfile"
	gomail "github.com/wneessen/go-mail"
)

// Mailer delivers a rendered message.
type Mailer interface {
	// Send delivers m once. A nil error means the server accepted it. Any other error is a
	// *SendError (IsTransient, IsPermanent) or ErrNotConfigured.
	Send(ctx context.Context, m Message) error
}

// New returns the mailer of cfg: an SMTP mailer, or, when cfg has no Addr, one whose Send
// returns ErrNotConfigured. It validates cfg first.
func New(cfg Config) (Mailer, error) {
	if !cfg.Configured() {
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		return Unconfigured{}, nil
	}
	return NewSMTP(cfg)
}

// Unconfigured is the mailer of a configuration without an SMTP server.
type Unconfigured struct{}

// Send returns ErrNotConfigured.
func (Unconfigured) Send(context.Context, Message) error { return ErrNotConfigured }

// SMTPMailer delivers over SMTP with go-mail, one connection per message. It is safe for
// concurrent use.
type SMTPMailer struct {
	cfg       Config
	host      string
	port      int
	from      *mail.Address
	password  string
	tlsConfig *tls.Config
}

// NewSMTP validates cfg, which must have an Addr, reads its password and CA files, and returns
// its mailer. Nothing is dialled until Send.
func NewSMTP(cfg Config) (*SMTPMailer, error) {
	if !cfg.Configured() {
		return nil, ErrNotConfigured
	}
	if cfg.TLS == "" {
		cfg.TLS = TLSMandatory
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Username != "" && cfg.Auth == "" {
		cfg.Auth = AuthPlain
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, portText, _ := net.SplitHostPort(cfg.Addr)
	port, _ := strconv.Atoi(portText)
	from, _ := mail.ParseAddress(cfg.From)
	m := &SMTPMailer{cfg: cfg, host: host, port: port, from: from, password: cfg.Password.Reveal()}
	if cfg.PasswordFile != "" {
		p, err := secretfile.Read(cfg.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", FlagPasswordFile, err)
		}
		m.password = p
	}
	m.tlsConfig = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if cfg.TLSCAFile != "" {
		pem, err := os.ReadFile(cfg.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", FlagTLSCAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--%s: %s holds no PEM certificate", FlagTLSCAFile, cfg.TLSCAFile)
		}
		m.tlsConfig.RootCAs = pool
	}
	return m, nil
}

// MessageDomain is the right-hand side of the Message-IDs this mailer's messages should carry
// (Config.MessageDomain).
func (m *SMTPMailer) MessageDomain() string { return m.cfg.MessageDomain() }

// String describes the mailer for logs, without its password.
func (m *SMTPMailer) String() string {
	s := fmt.Sprintf("smtp://%s (tls %s", net.JoinHostPort(m.host, strconv.Itoa(m.port)), m.cfg.TLS)
	if m.cfg.Username != "" {
		s += ", auth " + string(m.cfg.Auth) + " as " + m.cfg.Username
	}
	return s + ", from " + m.from.Address + ")"
}

// Send delivers msg on a new connection, within Config.Timeout and ctx. Once the server has
// accepted the message (250 after DATA), Send reports success even if the connection then
// fails, so that a message is not sent twice for nothing.
func (m *SMTPMailer) Send(ctx context.Context, msg Message) error {
	gm, err := m.compose(msg)
	if err != nil {
		return &SendError{MessageID: msg.MessageID, Stage: StageMessage, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()

	// The connection is ours: go-mail does not close it when the session set-up fails, and
	// closing it when ctx ends is what bounds the conversation by ctx, not only the dial.
	var conn net.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	dial := func(dctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		var err error
		if m.cfg.TLS == TLSImplicit {
			d := tls.Dialer{Config: m.tlsConfig}
			c, err = d.DialContext(dctx, network, addr)
		} else {
			var d net.Dialer
			c, err = d.DialContext(dctx, network, addr)
		}
		if err != nil {
			return nil, err
		}
		conn = c
		context.AfterFunc(ctx, func() { c.Close() }) // runs at the latest on cancel below
		return c, nil
	}

	client, err := gomail.NewClient(m.host, m.options(dial)...)
	if err != nil {
		return &SendError{MessageID: msg.MessageID, Stage: StageSession, Temporary: true, Err: err}
	}
	sc, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return classify(ctx, msg.MessageID, StageSession, err)
	}
	err = client.SendWithSMTPClient(sc, gm)
	if gm.IsDelivered() {
		_ = client.CloseWithSMTPClient(sc) // QUIT; the message is delivered whatever it answers
		return nil
	}
	if err == nil { // not reachable with go-mail v0.8.1; never report an unconfirmed delivery
		err = errors.New("the server did not confirm the message")
	}
	return classify(ctx, msg.MessageID, StageDelivery, err)
}

func (m *SMTPMailer) options(dial gomail.DialContextFunc) []gomail.Option {
	opts := []gomail.Option{
		gomail.WithPort(m.port),
		gomail.WithTimeout(m.cfg.Timeout),
		gomail.WithDialContextFunc(dial),
		gomail.WithTLSConfig(m.tlsConfig),
	}
	switch m.cfg.TLS {
	case TLSMandatory:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case TLSOpportunistic:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	case TLSImplicit, TLSNone:
		// Implicit TLS is done by the dialer; go-mail sees a *tls.Conn and must not STARTTLS.
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if m.cfg.HELO != "" {
		opts = append(opts, gomail.WithHELO(m.cfg.HELO))
	}
	if m.cfg.Username != "" {
		// go-mail's PLAIN and LOGIN refuse to send credentials without TLS except to
		// localhost, 127.0.0.1 and ::1.
		auth := gomail.SMTPAuthPlain
		if m.cfg.Auth == AuthLogin {
			auth = gomail.SMTPAuthLogin
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(m.cfg.Username), gomail.WithPassword(m.password))
	}
	return opts
}

// compose builds the go-mail message of msg, sent from m.from. Everything in it is derived
// from msg, so the same Message always gives the same bytes (its Date is the send time only
// when msg has none).
func (m *SMTPMailer) compose(msg Message) (*gomail.Msg, error) {
	return composeMsg(m.from, msg, time.Now)
}

func composeMsg(from *mail.Address, msg Message, now func() time.Time) (*gomail.Msg, error) {
	to, err := parseRecipient(msg.To)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(msg.Subject) == "" {
		return nil, errors.New("notify: the message has no subject")
	}
	if strings.TrimSpace(msg.Text) == "" {
		return nil, errors.New("notify: the message has no text body")
	}
	id, ok := strings.CutPrefix(msg.MessageID, "<")
	id, ok2 := strings.CutSuffix(id, ">")
	if !ok || !ok2 || !strings.Contains(id, "@") {
		return nil, fmt.Errorf("notify: Message-ID %q is not of the form <left@right>", msg.MessageID)
	}
	for name, v := range map[string]string{"Subject": msg.Subject, "Message-ID": id, "reference": msg.Reference, "kind": string(msg.Kind)} {
		if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return nil, fmt.Errorf("notify: the message's %s has a control character", name)
		}
	}

	gm := gomail.NewMsg(gomail.WithNoDefaultUserAgent(), gomail.WithBoundary(boundary(msg)))
	gm.FromMailAddress(from)
	if err := gm.To(to); err != nil {
		return nil, fmt.Errorf("notify: recipient %q: %w", to, err)
	}
	gm.Subject(msg.Subject)
	gm.SetMessageIDWithValue(id)
	date := msg.Date
	if date.IsZero() {
		date = now()
	}
	gm.SetDateWithValue(date.UTC())
	// RFC 3834: no auto-replies (vacation notices) to a machine's message.
	gm.SetGenHeader("Auto-Submitted", "auto-generated")
	gm.SetGenHeader(gomail.HeaderXAutoResponseSuppress, "All")
	if msg.Reference != "" {
		gm.SetGenHeader("X-Payout-Reference", msg.Reference)
	}
	if msg.Kind != "" {
		gm.SetGenHeader("X-Payout-Notification", string(msg.Kind))
	}
	gm.SetBodyString(gomail.TypeTextPlain, msg.Text)
	if msg.HTML != "" {
		gm.AddAlternativeString(gomail.TypeTextHTML, msg.HTML)
	}
	return gm, nil
}

// boundary derives the MIME boundary from the message, so that rendering is deterministic;
// a hash of the content cannot occur in it.
func boundary(msg Message) string {
	h := sha256.New()
	for _, s := range []string{msg.MessageID, msg.Subject, msg.Text, msg.HTML} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "payout-" + hex.EncodeToString(h.Sum(nil)[:16])
}
