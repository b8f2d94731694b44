package smtpsink

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Message is one stored message.
type Message struct {
	// Path of the .eml file.
	Path   string
	Header mail.Header
	// Body is the raw body after the header, still MIME-encoded.
	Body []byte
}

// ReadDir parses every .eml file in dir, in file-name order, which is arrival order for the
// files the sink writes. It reads the directory the way the conformance suite does: net/mail on
// each *.eml.
func ReadDir(dir string) ([]Message, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.eml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	msgs := make([]Message, 0, len(files))
	for _, f := range files {
		m, err := ReadFile(f)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// ReadFile parses one .eml file.
func ReadFile(path string) (Message, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Message{}, err
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Message{}, fmt.Errorf("smtpsink: %s: %w", path, err)
	}
	body, err := io.ReadAll(m.Body)
	if err != nil {
		return Message{}, fmt.Errorf("smtpsink: %s: %w", path, err)
	}
	return Message{Path: path, Header: m.Header, Body: body}, nil
}

// To returns the addresses of the To header.
func (m Message) To() []string {
	list, _ := m.Header.AddressList("To")
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.Address
	}
	return out
}

// Subject returns the decoded Subject.
func (m Message) Subject() string {
	var d mime.WordDecoder
	s, err := d.DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		return m.Header.Get("Subject")
	}
	return s
}

// MessageID returns the Message-ID header, angle brackets included.
func (m Message) MessageID() string { return m.Header.Get("Message-ID") }

// Part returns the decoded content of the first part of the given media type ("text/plain",
// "text/html"), looking into multipart bodies. Line breaks of text parts are returned as "\n".
func (m Message) Part(mediaType string) (string, error) {
	s, ok, err := findPart(m.Header, bytes.NewReader(m.Body), mediaType)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("smtpsink: %s: no %s part", m.Path, mediaType)
	}
	return s, nil
}

// headerGetter is mail.Header or textproto.MIMEHeader.
type headerGetter interface{ Get(string) string }

func findPart(h headerGetter, body io.Reader, want string) (string, bool, error) {
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", false, err
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return "", false, nil
			}
			if err != nil {
				return "", false, err
			}
			s, ok, err := findPart(p.Header, p, want)
			if err != nil || ok {
				return s, ok, err
			}
		}
	}
	if mt != want {
		return "", false, nil
	}
	var r io.Reader = body
	switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, body)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", false, err
	}
	if strings.HasPrefix(mt, "text/") {
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	}
	return string(b), true, nil
}
