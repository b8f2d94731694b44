package notify_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/stablepay/payout-operator/internal/dev/smtpsink"
	"github.com/stablepay/payout-operator/internal/notify"
	"github.com/stablepay/payout-operator/internal/secret"
)

// These tests run the notifier against the real SMTP sink on loopback: no mocks.

func startSink(t *testing.T, o smtpsink.Options) *smtpsink.Sink {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	s, err := smtpsink.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mailerFor(t *testing.T, addr string, mutate ...func(*notify.Config)) *notify.SMTPMailer {
	t.Helper()
	cfg := notify.Config{
		Addr:    addr,
		From:    "Payouts <payouts@payouts.example.com>",
		TLS:     notify.TLSNone,
		Timeout: 2 * time.Second,
		HELO:    "payoutd.test",
	}
	for _, f := range mutate {
		f(&cfg)
	}
	m, err := notify.NewSMTP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func transfer(id string) notify.Transfer {
	return notify.Transfer{
		ID:             id,
		AmountUSD:      decimal.RequireFromString("250"),
		TargetAmount:   decimal.RequireFromString("229.80"),
		TargetCurrency: "EUR",
		Recipient:      notify.Recipient{HolderName: "Zoë Müller", Type: "iban", Account: "DE89370400440532013000"},
		Status:         "completed",
		UpdatedAt:      time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC),
	}
}

func render(t *testing.T, n notify.Notification, m *notify.SMTPMailer) notify.Message {
	t.Helper()
	msg, err := notify.Render(n, m.MessageDomain())
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func messages(t *testing.T, s *smtpsink.Sink) []smtpsink.Message {
	t.Helper()
	msgs, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func TestRoundTrip(t *testing.T) {
	sink := startSink(t, smtpsink.Options{})
	m := mailerFor(t, sink.Addr())
	ctx := context.Background()

	sent := render(t, notify.PayoutSent(transfer("65f0c1d2e3f4a5b6c7d8e9f0"), "customer@example.org"), m)
	failedTr := transfer("0a1b2c3d4e5f60718293a4b5")
	failedTr.Status, failedTr.Error = "failed", "Rejected by the recipient's bank"
	failed := render(t, notify.Failed(failedTr, "Other Customer <other@example.org>"), m)
	for _, msg := range []notify.Message{sent, failed} {
		if err := m.Send(ctx, msg); err != nil {
			t.Fatalf("send %s: %v", msg.MessageID, err)
		}
	}

	msgs := messages(t, sink)
	if len(msgs) != 2 {
		t.Fatalf("%d messages in the sink, want 2", len(msgs))
	}
	for i, want := range []notify.Message{sent, failed} {
		got := msgs[i]
		// Read the file exactly as the conformance suite does.
		f, err := os.Open(got.Path)
		if err != nil {
			t.Fatal(err)
		}
		pm, err := mail.ReadMessage(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: net/mail: %v", got.Path, err)
		}
		to, err := pm.Header.AddressList("To")
		if err != nil || len(to) != 1 || !strings.EqualFold(to[0].Address, want.To) {
			t.Errorf("To = %v, %v; want %s", to, err, want.To)
		}
		if got.Subject() != want.Subject {
			t.Errorf("Subject = %q, want %q", got.Subject(), want.Subject)
		}
		if got.MessageID() != want.MessageID {
			t.Errorf("Message-ID = %q, want %q", got.MessageID(), want.MessageID)
		}
		from, err := pm.Header.AddressList("From")
		if err != nil || len(from) != 1 || from[0].Address != "payouts@payouts.example.com" || from[0].Name != "Payouts" {
			t.Errorf("From = %v, %v", from, err)
		}
		if d, err := pm.Header.Date(); err != nil || !d.Equal(transfer("").UpdatedAt) {
			t.Errorf("Date = %v, %v", d, err)
		}
		if pm.Header.Get("Return-Path") != "<payouts@payouts.example.com>" {
			t.Errorf("Return-Path = %q", pm.Header.Get("Return-Path"))
		}
		text, err := got.Part("text/plain")
		if err != nil {
			t.Fatal(err)
		}
		if text != want.Text {
			t.Errorf("text part differs from the rendered text:\n%s\n---\n%s", text, want.Text)
		}
		html, err := got.Part("text/html")
		if err != nil || html != want.HTML {
			t.Errorf("html part differs (%v)", err)
		}
		raw, _ := os.ReadFile(got.Path)
		if strings.Contains(strings.ReplaceAll(string(raw), "=\r\n", ""), "0532013000") {
			t.Error("the stored message shows the IBAN")
		}
	}
	if ids := m.MessageDomain(); ids != "payouts.example.com" {
		t.Errorf("MessageDomain = %q", ids)
	}
}

// TestResendIsSameMessage: sending a notification again after a crash carries the same
// Message-ID, Date and body, so that it is recognisably the same message.
func TestResendIsSameMessage(t *testing.T) {
	sink := startSink(t, smtpsink.Options{})
	m := mailerFor(t, sink.Addr())
	n := notify.PayoutSent(transfer("65f0c1d2e3f4a5b6c7d8e9f0"), "customer@example.org")
	for range 2 {
		if err := m.Send(context.Background(), render(t, n, m)); err != nil {
			t.Fatal(err)
		}
	}
	msgs := messages(t, sink)
	if len(msgs) != 2 {
		t.Fatalf("%d messages", len(msgs))
	}
	a, b := msgs[0], msgs[1]
	if a.MessageID() != b.MessageID() || a.Header.Get("Date") != b.Header.Get("Date") || string(a.Body) != string(b.Body) {
		t.Errorf("the resend differs:\n%s %s\n%s %s", a.MessageID(), a.Header.Get("Date"), b.MessageID(), b.Header.Get("Date"))
	}
}

func TestConcurrentSends(t *testing.T) {
	sink := startSink(t, smtpsink.Options{})
	m := mailerFor(t, sink.Addr())
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	want := map[string]bool{}
	for i := range n {
		id := fmt.Sprintf("%024x", i+1)
		msg := render(t, notify.PayoutSent(transfer(id), fmt.Sprintf("c%d@example.org", i)), m)
		want[msg.MessageID] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- m.Send(context.Background(), msg)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	msgs := messages(t, sink)
	if len(msgs) != n {
		t.Fatalf("%d files for %d messages", len(msgs), n)
	}
	for _, msg := range msgs {
		if !want[msg.MessageID()] {
			t.Errorf("unexpected or duplicate message %s", msg.MessageID())
		}
		delete(want, msg.MessageID())
		text, err := msg.Part("text/plain")
		if err != nil || !strings.HasSuffix(text, "This is an automated message.\n") {
			t.Errorf("%s is not whole (%v)", msg.Path, err)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(sink.Dir(), ".*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestSinkDown: with the sink closed, Send fails quickly with a transient error; a new sink on
// the same address takes mail again.
func TestSinkDown(t *testing.T) {
	dir := t.TempDir()
	sink := startSink(t, smtpsink.Options{Dir: dir})
	addr := sink.Addr()
	m := mailerFor(t, addr)
	msg := render(t, notify.PayoutSent(transfer("65f0c1d2e3f4a5b6c7d8e9f0"), "customer@example.org"), m)
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	sink.Close()

	start := time.Now()
	err := m.Send(context.Background(), msg)
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("sent to a closed sink")
	}
	if !notify.IsTransient(err) || notify.IsPermanent(err) {
		t.Errorf("closed sink: %v is not transient", err)
	}
	var se *notify.SendError
	if !errors.As(err, &se) || se.Stage != notify.StageSession || se.MessageID != msg.MessageID {
		t.Errorf("error %#v", err)
	}
	if elapsed > 2*time.Second {
		t.Errorf("Send took %v with a 2s timeout", elapsed)
	}

	again := startSink(t, smtpsink.Options{Addr: addr, Dir: dir})
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatalf("after the sink came back: %v", err)
	}
	if got := len(messages(t, again)); got != 2 {
		t.Errorf("%d messages in the directory, want the first and the resend", got)
	}
}

// TestServerSilent: a server that accepts the connection and never answers costs at most the
// timeout, and the failure is transient.
func TestServerSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never greeted
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	m := mailerFor(t, ln.Addr().String(), func(c *notify.Config) { c.Timeout = 300 * time.Millisecond })
	msg := render(t, notify.PayoutSent(transfer("65f0c1d2e3f4a5b6c7d8e9f0"), "customer@example.org"), m)
	start := time.Now()
	err = m.Send(context.Background(), msg)
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Send took %v with a 300ms timeout", elapsed)
	}
	if !notify.IsTransient(err) {
		t.Errorf("silent server: %v is not transient", err)
	}

	// The caller's context bounds Send as well.
	m = mailerFor(t, ln.Addr().String(), func(c *notify.Config) { c.Timeout = time.Minute })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	err = m.Send(ctx, msg)
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Send took %v with a 200ms context", elapsed)
	}
	if !notify.IsTransient(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("context deadline: %v", err)
	}
}

func TestRecipientRefused(t *testing.T) {
	sink := startSink(t, smtpsink.Options{
		RefuseRecipients: []string{"Refused@Example.org"},
		DeferRecipients:  []string{"later@example.org"},
	})
	m := mailerFor(t, sink.Addr())

	err := m.Send(context.Background(), render(t, notify.PayoutSent(transfer("65f0c1d2e3f4a5b6c7d8e9f0"), "refused@example.org"), m))
	if !notify.IsPermanent(err) || notify.IsTransient(err) {
		t.Fatalf("550: %v is not permanent", err)
	}
	var se *notify.SendError
	if !errors.As(err, &se) || se.Code != 550 || se.Stage != notify.StageDelivery {
		t.Errorf("550: %#v", err)
	}

	err = m.Send(context.Background(), render(t, notify.PayoutSent(transfer("65f0c1d2e3f4a5b6c7d8e9f0"), "later@example.org"), m))
	if !notify.IsTransient(err) {
		t.Fatalf("450: %v is not transient", err)
	}
	if !errors.As(err, &se) || se.Code != 450 {
		t.Errorf("450: %#v", err)
	}
	if n := len(messages(t, sink)); n != 0 {
		t.Errorf("%d messages stored for refused recipients", n)
	}
}

func TestInvalidMessageIsPermanent(t *testing.T) {
	sink := startSink(t, smtpsink.Options{})
	m := mailerFor(t, sink.Addr())
	msg := render(t, notify.PayoutSent(transfer("65f0c1d2e3f4a5b6c7d8e9f0"), "customer@example.org"), m)
	for name, mutate := range map[string]func(*notify.Message){
		"bad address":       func(m *notify.Message) { m.To = "customer at example" },
		"no subject":        func(m *notify.Message) { m.Subject = "" },
		"header injection":  func(m *notify.Message) { m.Subject = "Hi\r\nBcc: victim@example.org" },
		"no body":           func(m *notify.Message) { m.Text = "" },
		"no Message-ID":     func(m *notify.Message) { m.MessageID = "" },
		"bare Message-ID":   func(m *notify.Message) { m.MessageID = "abc@example.com" },
		"reference control": func(m *notify.Message) { m.Reference = "a\nb" },
	} {
		bad := msg
		mutate(&bad)
		err := m.Send(context.Background(), bad)
		var se *notify.SendError
		if !notify.IsPermanent(err) || !errors.As(err, &se) || se.Stage != notify.StageMessage {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := len(messages(t, sink)); n != 0 {
		t.Errorf("%d invalid messages were sent", n)
	}
}

func TestAuth(t *testing.T) {
	sink := startSink(t, smtpsink.Options{})
	for _, mech := range []notify.AuthMechanism{notify.AuthPlain, notify.AuthLogin} {
		m := mailerFor(t, sink.Addr(), func(c *notify.Config) {
			c.Username, c.Password, c.Auth = "svc", secret.New("secret"), mech
		})
		msg := render(t, notify.PayoutSent(transfer("65f0c1d2e3f4a5b6c7d8e9f0"), "customer@example.org"), m)
		if err := m.Send(context.Background(), msg); err != nil {
			t.Errorf("AUTH %s: %v", mech, err)
		}
	}
	if n := len(messages(t, sink)); n != 2 {
		t.Errorf("%d messages", n)
	}
}

// selfSigned returns a server certificate for 127.0.0.1 and the PEM file of its CA (itself).
func selfSigned(t *testing.T) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "smtpsink test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, ca
}

func TestTLSPolicies(t *testing.T) {
	serverTLS, ca := selfSigned(t)
	plain := startSink(t, smtpsink.Options{})
	starttls := startSink(t, smtpsink.Options{TLSConfig: serverTLS})
	implicit := startSink(t, smtpsink.Options{TLSConfig: serverTLS, ImplicitTLS: true})

	cases := []struct {
		name   string
		sink   *smtpsink.Sink
		policy notify.TLSPolicy
		ca     string
		ok     bool
	}{
		{"mandatory without STARTTLS", plain, notify.TLSMandatory, ca, false},
		{"opportunistic without STARTTLS", plain, notify.TLSOpportunistic, ca, true},
		{"mandatory with STARTTLS", starttls, notify.TLSMandatory, ca, true},
		{"mandatory with an untrusted certificate", starttls, notify.TLSMandatory, "", false},
		{"opportunistic with STARTTLS", starttls, notify.TLSOpportunistic, ca, true},
		{"implicit", implicit, notify.TLSImplicit, ca, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mailerFor(t, c.sink.Addr(), func(cfg *notify.Config) {
				cfg.TLS, cfg.TLSCAFile = c.policy, c.ca
				// Credentials go only over TLS here: the mailer's host is 127.0.0.1, which go-mail
				// would also allow in clear, so this checks AUTH after STARTTLS works.
				if c.ok && c.policy != notify.TLSOpportunistic {
					cfg.Username, cfg.Password = "svc", secret.New("secret")
				}
			})
			msg := render(t, notify.PayoutSent(transfer("65f0c1d2e3f4a5b6c7d8e9f0"), "customer@example.org"), m)
			err := m.Send(context.Background(), msg)
			if c.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !c.ok && !notify.IsTransient(err) {
				t.Fatalf("want a transient session error, got %v", err)
			}
		})
	}
}

func TestNotConfigured(t *testing.T) {
	m, err := notify.New(notify.Config{})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Send(context.Background(), notify.Message{})
	if !errors.Is(err, notify.ErrNotConfigured) || notify.IsTransient(err) || notify.IsPermanent(err) {
		t.Errorf("unconfigured mailer: %v", err)
	}
	if _, err := notify.New(notify.Config{Addr: "nohost"}); err == nil {
		t.Error("New accepted an invalid configuration")
	}
	sink := startSink(t, smtpsink.Options{})
	m, err = notify.New(notify.Config{Addr: sink.Addr(), From: "p@example.com", TLS: notify.TLSNone})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*notify.SMTPMailer); !ok {
		t.Errorf("New returned %T for a configured server", m)
	}
}
