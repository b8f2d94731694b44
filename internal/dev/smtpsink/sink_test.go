package smtpsink

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// The sink is driven here with go-smtp's own client, over real SMTP on loopback.

func start(t *testing.T, o Options) *Sink {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

const rawMessage = "From: Payouts <payouts@example.com>\r\n" +
	"To: Jane <jane@example.org>, bob@example.org\r\n" +
	"Subject: =?UTF-8?q?Gr=C3=BC=C3=9Fe?=\r\n" +
	"Message-ID: <abc.payout-sent@example.com>\r\n" +
	"Date: Fri, 02 Jan 2026 15:04:05 +0000\r\n" +
	"X-Custom:  kept   as is\r\n" +
	"\r\n" +
	"Hello,\r\n" +
	".a line that starts with a dot\r\n" +
	"bye\r\n"

// send delivers body in clear (go-smtp's SendMail insists on STARTTLS).
func send(t *testing.T, addr string, a sasl.Client, to []string, body string) error {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if a != nil {
		if err := c.Auth(a); err != nil {
			return err
		}
	}
	if err := c.SendMail("payouts@example.com", to, strings.NewReader(body)); err != nil {
		return err
	}
	return c.Quit()
}

func eml(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func noTemp(t *testing.T, dir string) {
	t.Helper()
	if tmp, _ := filepath.Glob(filepath.Join(dir, tempPattern)); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestStoresMessageAsReceived(t *testing.T) {
	s := start(t, Options{})
	if err := send(t, s.Addr(), nil, []string{"jane@example.org", "bob@example.org", "hidden@example.org"}, rawMessage); err != nil {
		t.Fatal(err)
	}
	files := eml(t, s.Dir())
	if len(files) != 1 {
		t.Fatalf("%d files for one message to three recipients", len(files))
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	// The trace header comes first, then the message byte for byte (dot-unstuffed).
	head, rest, ok := strings.Cut(string(raw), "From: Payouts")
	if !ok || "From: Payouts"+rest != rawMessage {
		t.Fatalf("the message was not stored as received:\n%s", raw)
	}
	for _, want := range []string{
		"Return-Path: <payouts@example.com>\r\n",
		"Delivered-To: jane@example.org\r\n", "Delivered-To: bob@example.org\r\n", "Delivered-To: hidden@example.org\r\n",
		"Received: from localhost ([127.0.0.1])",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("trace header lacks %q:\n%s", want, head)
		}
	}

	msgs, err := s.Messages()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Messages: %v, %v", msgs, err)
	}
	m := msgs[0]
	if got := m.To(); len(got) != 2 || got[0] != "jane@example.org" || got[1] != "bob@example.org" {
		t.Errorf("To = %v", got)
	}
	if m.Subject() != "Grüße" {
		t.Errorf("Subject = %q", m.Subject())
	}
	if m.MessageID() != "<abc.payout-sent@example.com>" {
		t.Errorf("Message-ID = %q", m.MessageID())
	}
	if d, err := m.Header.Date(); err != nil || !d.Equal(time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)) {
		t.Errorf("Date = %v, %v", d, err)
	}
	if m.Header.Get("X-Custom") != "kept   as is" {
		t.Errorf("X-Custom = %q", m.Header.Get("X-Custom"))
	}
	text, err := m.Part("text/plain")
	if err != nil || text != "Hello,\n.a line that starts with a dot\nbye\n" {
		t.Errorf("text = %q, %v", text, err)
	}
	if _, err := m.Part("text/html"); err == nil {
		t.Error("found an HTML part in a plain message")
	}
	noTemp(t, s.Dir())
}

func TestAcceptsAnyCredentials(t *testing.T) {
	s := start(t, Options{})
	for _, a := range []sasl.Client{
		sasl.NewPlainClient("", "anyone", "anything"),
		sasl.NewLoginClient("someone", "whatever"),
	} {
		if err := send(t, s.Addr(), a, []string{"jane@example.org"}, rawMessage); err != nil {
			t.Errorf("AUTH: %v", err)
		}
	}
	if n := len(eml(t, s.Dir())); n != 2 {
		t.Errorf("%d messages", n)
	}
}

func TestTestSwitches(t *testing.T) {
	s := start(t, Options{RefuseRecipients: []string{"no@example.org"}, DeferRecipients: []string{"LATER@example.org"}})
	var se *smtp.SMTPError
	err := send(t, s.Addr(), nil, []string{"No@Example.org"}, rawMessage)
	if !errors.As(err, &se) || se.Code != 550 {
		t.Errorf("refused recipient: %v", err)
	}
	err = send(t, s.Addr(), nil, []string{"later@example.org"}, rawMessage)
	if !errors.As(err, &se) || se.Code != 450 {
		t.Errorf("deferred recipient: %v", err)
	}
	if n := len(eml(t, s.Dir())); n != 0 {
		t.Errorf("%d messages stored", n)
	}
	if err := send(t, s.Addr(), nil, []string{"yes@example.org"}, rawMessage); err != nil {
		t.Errorf("other recipient: %v", err)
	}
}

func TestTooLarge(t *testing.T) {
	s := start(t, Options{MaxMessageBytes: 1024})
	big := rawMessage + strings.Repeat("0123456789abcdef0123456789abcdef\r\n", 200)
	var se *smtp.SMTPError
	if err := send(t, s.Addr(), nil, []string{"jane@example.org"}, big); !errors.As(err, &se) || se.Code != 552 {
		t.Errorf("oversized message: %v", err)
	}
	if n := len(eml(t, s.Dir())); n != 0 {
		t.Errorf("%d messages stored", n)
	}
	noTemp(t, s.Dir())
}

// TestCutShortWritesNothing: a client that disappears in the middle of DATA leaves no file,
// whole or partial.
func TestCutShortWritesNothing(t *testing.T) {
	s := start(t, Options{})
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	expect := func(code string) {
		t.Helper()
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(line, code) {
				t.Fatalf("got %q, want %s", line, code)
			}
			if line[3] == ' ' {
				return
			}
		}
	}
	expect("220")
	for _, step := range []struct{ cmd, code string }{
		{"EHLO test", "250"}, {"MAIL FROM:<a@example.com>", "250"}, {"RCPT TO:<b@example.org>", "250"}, {"DATA", "354"},
	} {
		fmt.Fprintf(c, "%s\r\n", step.cmd)
		expect(step.code)
	}
	fmt.Fprint(c, rawMessage[:80])
	c.Close()
	// The server notices the closed connection; give it a moment, then look.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if tmp, _ := filepath.Glob(filepath.Join(s.Dir(), tempPattern)); len(tmp) == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(eml(t, s.Dir())); n != 0 {
		t.Errorf("%d messages stored from a cut-short DATA", n)
	}
	noTemp(t, s.Dir())
	if err := send(t, s.Addr(), nil, []string{"b@example.org"}, rawMessage); err != nil {
		t.Errorf("the sink does not take mail after a broken client: %v", err)
	}
}

// TestResumesDirectory: a directory with the messages of an earlier run keeps them, loses the
// stale temporary files of a crash, and takes new messages under new names.
func TestResumesDirectory(t *testing.T) {
	dir := t.TempDir()
	first := start(t, Options{Dir: dir})
	if err := send(t, first.Addr(), nil, []string{"jane@example.org"}, rawMessage); err != nil {
		t.Fatal(err)
	}
	first.Close()
	old := eml(t, dir)

	stale := filepath.Join(dir, ".incoming-crashed.tmp")
	fresh := filepath.Join(dir, ".incoming-writing.tmp")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("From: half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, long, long); err != nil {
		t.Fatal(err)
	}

	again := start(t, Options{Dir: dir})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a young temporary file (another writer's) was removed: %v", err)
	}
	if err := send(t, again.Addr(), nil, []string{"jane@example.org"}, rawMessage); err != nil {
		t.Fatal(err)
	}
	now := eml(t, dir)
	if len(now) != 2 || now[0] != old[0] {
		t.Errorf("files %v, want %v and one more", now, old)
	}
	msgs, err := ReadDir(dir)
	if err != nil || len(msgs) != 2 {
		t.Errorf("ReadDir: %d messages, %v", len(msgs), err)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "192.0.2.1:25", "[::]:0", "example.com:25", "nonsense"} {
		if s, err := Start(Options{Addr: addr, Dir: t.TempDir()}); err == nil {
			s.Close()
			t.Errorf("Start(%q) listened", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		s, err := Start(Options{Addr: addr, Dir: t.TempDir()})
		if err != nil {
			t.Errorf("Start(%q): %v", addr, err)
			continue
		}
		s.Close()
	}
	if _, err := Start(Options{}); err == nil {
		t.Error("Start without a directory")
	}
}

func TestClose(t *testing.T) {
	s := start(t, Options{})
	c, err := smtp.Dial(s.Addr()) // an idle connection must not keep Close waiting
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan struct{})
	go func() { s.Close(); s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs on an idle connection")
	}
	if conn, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		conn.Close()
		t.Error("the closed sink still accepts connections")
	}
}

func TestFileNames(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	seen := map[string]bool{}
	var names []string
	for i := range 1000 {
		n := fileName(now.Add(time.Duration(i/10) * time.Nanosecond))
		if seen[n] {
			t.Fatalf("duplicate file name %s", n)
		}
		seen[n] = true
		names = append(names, n)
		if !strings.HasSuffix(n, ".eml") || strings.HasPrefix(n, ".") {
			t.Fatalf("bad file name %s", n)
		}
	}
	if !sort.StringsAreSorted(names) {
		t.Error("file names do not sort by arrival")
	}
}
