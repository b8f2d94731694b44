// Package refdata serves the project's own copies of its reference data over HTTP on loopback,
// in the layout of their public sources: the embedded OFAC release as OFAC's download directory
// (sdn.csv, add.csv, alt.csv and the header of sdn.xml) and the embedded rate snapshot as a rate
// feed. `make run` and the tests point payoutd's --sanctions-url and --rates-url at it, so that
// the refresh paths a deployment uses are the ones exercised.
package refdata

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/pricing"
)

// Paths of the served data.
const (
	sanctionsPath = "/ofac/downloads/"
	ratesPath     = "/rates/usd.json"
)

// Server serves the reference data; Set replaces a file, as a publisher's new release would.
type Server struct {
	srv *http.Server
	url string

	mu    sync.Mutex
	files map[string][]byte
	// entries counts sdn.csv's rows, for sdn.xml's Record_Count
	entries int
}

// Start serves the embedded data on addr (e.g. 127.0.0.1:0).
func Start(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{url: "http://" + l.Addr().String()}
	s.Reset()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Reset serves the embedded data again, as at Start.
func (s *Server) Reset() {
	emb, err := sanctions.Embedded()
	if err != nil {
		panic("refdata: the embedded sanctions release: " + err.Error()) // its tests catch this
	}
	files := map[string][]byte{
		ratesPath: pricing.EmbeddedSnapshot(),
		// The project carries the CSV edition only; the XML edition's header states its date.
		sanctionsPath + sanctions.PublishFile: sanctions.PublishHeader(sanctions.EmbeddedPublished, emb.Len()),
	}
	for _, name := range []string{sanctions.SDNFile, sanctions.AddressFile, sanctions.AliasFile} {
		files[sanctionsPath+name] = sanctions.EmbeddedFile(name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files, s.entries = files, emb.Len()
}

// SanctionsURL is the directory of the OFAC files (payoutd's --sanctions-url).
func (s *Server) SanctionsURL() string { return s.url + sanctionsPath }

// RatesURL is the rate feed (payoutd's --rates-url).
func (s *Server) RatesURL() string { return s.url + ratesPath }

// SetSanctionsFile replaces one file of the OFAC directory (sanctions.SDNFile, ...); nil
// removes it (404).
func (s *Server) SetSanctionsFile(name string, data []byte) { s.set(sanctionsPath+name, data) }

// AddSanctionsEntry publishes a new release dated published: the current one with one more
// entry (an entity named name, with one address in city and country, an OFAC country name such
// as "Russia"), written as OFAC writes its files (CRLF, a closing 0x1A byte).
func (s *Server) AddSanctionsEntry(published time.Time, entNum int, name, city, country string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	appendRow := func(file, row string) {
		p := sanctionsPath + file
		s.files[p] = append(bytes.TrimRight(s.files[p], "\x1a\r\n"), "\r\n"+row+"\r\n\x1a"...)
	}
	appendRow(sanctions.SDNFile, fmt.Sprintf("%d,%q,-0- ,\"SDGT\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ", entNum, name))
	appendRow(sanctions.AddressFile, fmt.Sprintf("%d,%d,-0- ,%q,%q,-0- ", entNum, entNum, city, country))
	s.entries++
	s.files[sanctionsPath+sanctions.PublishFile] = sanctions.PublishHeader(published, s.entries)
}

func (s *Server) set(p string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if data == nil {
		delete(s.files, p)
		return
	}
	s.files[p] = data
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	b, ok := s.files[path.Clean(r.URL.Path)]
	s.mu.Unlock()
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(b)
}

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }
