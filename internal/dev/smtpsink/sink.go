// Package smtpsink is the local mail server of `make run` and of the tests: a real SMTP server
// (go-smtp) on loopback that accepts every message and writes each one, as received, as one
// RFC 5322 .eml file into a directory (CONTRACT.md: PAYOUT_MAIL_DIR).
//
// A file appears whole or not at all: the message is written to a hidden temporary file in the
// same directory and renamed to its .eml name before the server answers 250, so a client whose
// Send returned can read the file at once, and a reader polling the directory never sees half
// a message. File names sort by arrival time and never collide, also with the files of an
// earlier run in the same directory.
//
// The sink checks nothing: any sender, any recipient, AUTH PLAIN or LOGIN with any credentials
// (or none). Because of that it listens on loopback only. For tests it can refuse chosen
// recipients with 550 or defer them with 450 (Options.RefuseRecipients, DeferRecipients).
package smtpsink

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options configure a sink.
type Options struct {
	// Addr is the loopback address to listen on, host:port; default "127.0.0.1:0" (a free
	// port; see Sink.Addr). A host that is not loopback is refused.
	Addr string
	// Dir receives the .eml files; created when missing. Required.
	Dir string
	// Domain is the name in the greeting; default "localhost".
	Domain string
	// MaxMessageBytes refuses larger messages with 552; default 10 MiB.
	MaxMessageBytes int64

	// RefuseRecipients is a test switch: RCPT TO any of these addresses (compared without
	// regard to case) is refused with "550 5.1.1", a permanent failure.
	RefuseRecipients []string
	// DeferRecipients is a test switch: RCPT TO any of these is answered "450 4.2.1", a
	// transient failure.
	DeferRecipients []string

	// TLSConfig, when set, makes the sink offer STARTTLS with it, or, with ImplicitTLS, speak
	// TLS from the first byte (SMTPS). For tests of the client's TLS policies.
	TLSConfig   *tls.Config
	ImplicitTLS bool

	// Log receives the server's connection errors; default: discarded.
	Log *log.Logger
}

// Sink is a running SMTP sink.
type Sink struct {
	dir     string
	addr    string
	srv     *smtp.Server
	ln      net.Listener
	refuse  map[string]bool
	deferTo map[string]bool
	served  chan struct{}

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
	once     sync.Once
}

// Start listens on o.Addr and serves until Close. It accepts a directory that already holds
// messages (a resumed `make run`) and removes temporary files a crash left there.
func Start(o Options) (*Sink, error) {
	if o.Dir == "" {
		return nil, errors.New("smtpsink: no directory for the messages")
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if err := checkLoopback(o.Addr); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("smtpsink: %w", err)
	}
	removeStaleTemp(o.Dir, time.Minute)

	if o.ImplicitTLS && o.TLSConfig == nil {
		return nil, errors.New("smtpsink: ImplicitTLS needs a TLSConfig")
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("smtpsink: %w", err)
	}
	if o.ImplicitTLS {
		ln = tls.NewListener(ln, o.TLSConfig)
	}
	s := &Sink{
		dir:     o.Dir,
		addr:    ln.Addr().String(),
		refuse:  set(o.RefuseRecipients),
		deferTo: set(o.DeferRecipients),
		served:  make(chan struct{}),
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{sink: s, conn: c}, nil
	}))
	srv.Domain = o.Domain
	if srv.Domain == "" {
		srv.Domain = "localhost"
	}
	srv.MaxMessageBytes = o.MaxMessageBytes
	if srv.MaxMessageBytes <= 0 {
		srv.MaxMessageBytes = 10 << 20
	}
	srv.MaxRecipients = 100
	if !o.ImplicitTLS {
		srv.TLSConfig = o.TLSConfig
	}
	srv.AllowInsecureAuth = true // loopback only
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.ErrorLog = log.New(io.Discard, "", 0)
	if o.Log != nil {
		srv.ErrorLog = o.Log
	}
	s.srv, s.ln = srv, ln
	go func() {
		defer close(s.served)
		_ = srv.Serve(ln) // returns nil after Close
	}()
	return s, nil
}

// Addr is the address the sink listens on, host:port.
func (s *Sink) Addr() string { return s.addr }

// Dir is the directory of the .eml files.
func (s *Sink) Dir() string { return s.dir }

// Close stops listening, drops open connections and waits until no message is being written.
// A message whose DATA was cut short is not written. Close is idempotent.
func (s *Sink) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		_ = s.srv.Close()
		// Serve may not have registered the listener with the server yet; closing it here
		// makes sure Accept returns.
		_ = s.ln.Close()
		<-s.served
		s.inflight.Wait()
	})
	return nil
}

// Messages reads every message in the sink's directory, oldest first (ReadDir).
func (s *Sink) Messages() ([]Message, error) { return ReadDir(s.dir) }

// begin registers a message being written; false once the sink is closing.
func (s *Sink) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inflight.Add(1)
	return true
}

// Temporary files are hidden and do not end in .eml, so that `*.eml` never matches one.
const tempPattern = ".incoming-*.tmp"

var seq atomic.Uint64

// store writes one message atomically and returns its path.
func (s *Sink) store(header, body []byte) (string, error) {
	f, err := os.CreateTemp(s.dir, tempPattern)
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.Write(header)
	if err == nil {
		_, err = f.Write(body)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	final := filepath.Join(s.dir, fileName(time.Now()))
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return final, nil
}

// fileName is "20060102T150405.000000000Z-000001-0a1b2c3d.eml": sortable by arrival, unique
// within a process by the counter and across runs by the time and the random part.
func fileName(now time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%s-%06d-%s.eml", now.UTC().Format("20060102T150405.000000000Z"), seq.Add(1), hex.EncodeToString(r[:]))
}

func removeStaleTemp(dir string, age time.Duration) {
	matches, _ := filepath.Glob(filepath.Join(dir, tempPattern))
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && time.Since(fi.ModTime()) > age {
			os.Remove(m)
		}
	}
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("smtpsink: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("smtpsink: %q is not a loopback address; the sink accepts any message and any password, so it listens on loopback only", addr)
}

func set(addrs []string) map[string]bool {
	m := make(map[string]bool, len(addrs))
	for _, a := range addrs {
		m[strings.ToLower(strings.TrimSpace(a))] = true
	}
	return m
}

// session is one SMTP connection's state.
type session struct {
	sink  *Sink
	conn  *smtp.Conn
	from  string
	rcpts []string
}

func (s *session) Reset() { s.from, s.rcpts = "", nil }

func (s *session) Logout() error { return nil }

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	key := strings.ToLower(to)
	switch {
	case s.sink.refuse[key]:
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "Recipient refused (smtpsink RefuseRecipients)"}
	case s.sink.deferTo[key]:
		return &smtp.SMTPError{Code: 450, EnhancedCode: smtp.EnhancedCode{4, 2, 1}, Message: "Recipient deferred (smtpsink DeferRecipients)"}
	}
	s.rcpts = append(s.rcpts, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	if !s.sink.begin() {
		return &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 3, 2}, Message: "Sink shutting down"}
	}
	defer s.sink.inflight.Done()
	body, err := io.ReadAll(r)
	if err != nil {
		return err // too large (552) or the connection broke: nothing is written
	}
	if _, err := s.sink.store(s.trace(), body); err != nil {
		s.sink.srv.ErrorLog.Printf("smtpsink: storing a message: %v", err)
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Cannot store the message"}
	}
	return nil
}

// trace is what a delivering MTA prepends (RFC 5321 §4.4): the envelope sender and recipients
// and a Received line. The message's own headers follow unchanged.
func (s *session) trace() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Return-Path: <%s>\r\n", s.from)
	for _, r := range s.rcpts {
		fmt.Fprintf(&b, "Delivered-To: %s\r\n", r)
	}
	peer := "unknown"
	if c := s.conn.Conn(); c != nil {
		if host, _, err := net.SplitHostPort(c.RemoteAddr().String()); err == nil {
			peer = host
		}
	}
	fmt.Fprintf(&b, "Received: from %s ([%s])\r\n\tby %s (payout smtpsink) with ESMTP;\r\n\t%s\r\n",
		sanitize(s.conn.Hostname()), peer, s.sink.srv.Domain, time.Now().UTC().Format(time.RFC1123Z))
	return b.Bytes()
}

// sanitize keeps a client-supplied name from breaking a header line.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r <= ' ' || r >= 0x7f || r == '(' || r == ')' {
			return -1
		}
		return r
	}, s)
	if s == "" {
		return "unknown"
	}
	return s
}

// AuthMechanisms offers PLAIN and LOGIN; any credentials are accepted.
func (s *session) AuthMechanisms() []string { return []string{sasl.Plain, sasl.Login} }

func (s *session) Auth(mech string) (sasl.Server, error) {
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(string, string, string) error { return nil }), nil
	case sasl.Login:
		return &loginServer{}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

// loginServer is the server side of the LOGIN mechanism (draft-murchison-sasl-login), which
// go-sasl no longer provides; it accepts any username and password.
type loginServer struct{ step int }

func (l *loginServer) Next(response []byte) (challenge []byte, done bool, err error) {
	l.step++
	switch l.step {
	case 1:
		if response != nil { // initial response: the username
			l.step++
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 2:
		return []byte("Password:"), false, nil
	default:
		return nil, true, nil
	}
}
