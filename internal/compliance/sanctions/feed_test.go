package sanctions

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// newlyListed is a name the embedded release does not hold; the "newer release" adds it.
const newlyListed = "ZARYADYE FREIGHT FORWARDING LLC"

// releaseFiles serves a release in OFAC's layout from a map the test may change between loads.
type releaseFiles struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (r *releaseFiles) set(name string, b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files[name] = b
}

func (r *releaseFiles) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	b, ok := r.files[path.Base(req.URL.Path)]
	r.mu.Unlock()
	if !ok {
		http.NotFound(w, req)
		return
	}
	_, _ = w.Write(b)
}

// embeddedRelease is the embedded release as OFAC's directory would serve it.
func embeddedRelease(t *testing.T) *releaseFiles {
	t.Helper()
	return &releaseFiles{files: map[string][]byte{
		SDNFile:     EmbeddedFile(SDNFile),
		AddressFile: EmbeddedFile(AddressFile),
		AliasFile:   EmbeddedFile(AliasFile),
		PublishFile: PublishHeader(EmbeddedPublished, 13821),
	}}
}

// withNewEntry returns the embedded sdn.csv and add.csv with one more entry appended, in
// OFAC's layout (CRLF, the 0x1A end byte).
func withNewEntry() (sdn, add []byte) {
	trim := func(b []byte) []byte { return bytes.TrimRight(b, "\x1a\r\n") }
	sdn = append(trim(EmbeddedFile(SDNFile)), "\r\n99999991,\""+newlyListed+"\",-0- ,\"RUSSIA-EO14024\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n\x1a"...)
	add = append(trim(EmbeddedFile(AddressFile)), "\r\n99999991,99999991,\"Ulitsa Varvarka 6\",\"Moscow 109012\",\"Russia\",-0- \r\n\x1a"...)
	return sdn, add
}

func feedScreener(t *testing.T, r *releaseFiles, opts ...Option) *Screener {
	t.Helper()
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	f, err := NewFeed(Feed{SDNURL: srv.URL + "/ofac/downloads/"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewScreener(f.Load, opts...)
	if err := s.LastError(); err != nil {
		t.Fatalf("first load: %v", err)
	}
	return s
}

func TestFeedRefreshBringsNewNames(t *testing.T) {
	r := embeddedRelease(t)
	s := feedScreener(t, r)
	if m, err := s.Screen(Subject{Name: newlyListed}); m != nil || err != nil {
		t.Fatalf("before the refresh: %+v, %v; want clear", m, err)
	}
	if !s.List().Published().Equal(EmbeddedPublished) {
		t.Errorf("published %v, want %v", s.List().Published(), EmbeddedPublished)
	}
	sdn, add := withNewEntry()
	r.set(SDNFile, sdn)
	r.set(AddressFile, add)
	newer := time.Date(2024, 1, 11, 0, 0, 0, 0, time.UTC)
	r.set(PublishFile, PublishHeader(newer, 13822))
	if err := s.Reload(); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	m, err := s.Screen(Subject{Name: "Zaryadye Freight Forwarding, LLC", Country: "RU"})
	if err != nil || m == nil || m.EntNum != 99999991 {
		t.Fatalf("after the refresh: %+v, %v; want a match with entry 99999991", m, err)
	}
	if !s.List().Published().Equal(newer) || s.List().Len() != 13822 {
		t.Errorf("list in force: published %v, %d entries", s.List().Published(), s.List().Len())
	}
}

func TestFeedRefusesBadReleasesAndKeepsTheOldList(t *testing.T) {
	sdn, add := withNewEntry()
	half := EmbeddedFile(SDNFile)[:len(EmbeddedFile(SDNFile))/2]
	tests := []struct {
		name    string
		files   map[string][]byte
		wantErr string
	}{
		{"truncated sdn.csv", map[string][]byte{SDNFile: half}, ""},
		{"a consistent but small release", map[string][]byte{SDNFile: []byte(tinySDN), AddressFile: []byte(tinyAdd), AliasFile: []byte(tinyAlt)},
			"fewer than the 10000"},
		{"an older release", map[string][]byte{SDNFile: sdn, AddressFile: add,
			PublishFile: PublishHeader(EmbeddedPublished.AddDate(0, 0, -14), 13822)}, "before the 2023-12-28"},
		{"no publish date", map[string][]byte{PublishFile: []byte("<sdnList><sdnEntry/></sdnList>")}, "no publshInformation"},
		{"sdn.xml missing", map[string][]byte{PublishFile: nil}, "HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := embeddedRelease(t)
			s := feedScreener(t, r)
			before := s.List()
			for name, b := range tt.files {
				if b == nil {
					delete(r.files, name)
					continue
				}
				r.set(name, b)
			}
			err := s.Reload()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Reload = %v; want an error containing %q", err, tt.wantErr)
			}
			if s.List() != before || s.LastError() == nil {
				t.Errorf("the list in force changed (%v) or LastError is nil (%v)", s.List().Source(), s.LastError())
			}
			if m, err := s.Screen(Subject{Name: bnc}); m == nil || err != nil {
				t.Errorf("the old list no longer screens: %+v, %v", m, err)
			}
		})
	}
}

func TestFeedMergesTheConsolidatedList(t *testing.T) {
	r := embeddedRelease(t)
	r.set(ConsPrimFile, []byte("7001,\"KHARKOV NONSDN TRADERS\",-0- ,\"CAATSA - RUSSIA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n"))
	r.set(ConsAddFile, []byte("7001,7002,-0- ,-0- ,\"Russia\",-0- \r\n"))
	r.set(ConsAltFile, []byte(""))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	f, err := NewFeed(Feed{SDNURL: srv.URL + "/sdn/", ConsolidatedURL: srv.URL + "/consolidated/"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewScreener(f.Load)
	if err := s.LastError(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Kharkov NonSDN Traders", bnc} {
		if m, err := s.Screen(Subject{Name: name}); m == nil || err != nil {
			t.Errorf("%s: %+v, %v; want a match", name, m, err)
		}
	}
	if s.List().Len() != 13822 {
		t.Errorf("%d entries, want 13822", s.List().Len())
	}
}

func TestScreenerPastMaxAgeIsUnavailable(t *testing.T) {
	now := EmbeddedPublished.Add(7*24*time.Hour - time.Second)
	s := feedScreener(t, embeddedRelease(t), WithMaxAge(7*24*time.Hour), WithClock(func() time.Time { return now }))
	if m, err := s.Screen(Subject{Name: bnc}); m == nil || err != nil {
		t.Fatalf("within the age: %+v, %v; want a match", m, err)
	}
	now = now.Add(2 * time.Second)
	wantUnavailable(t, s)
	if !s.Stale() {
		t.Error("Stale() = false past the age")
	}
	if age, ok := s.Age(); !ok || age != 7*24*time.Hour+time.Second {
		t.Errorf("Age = %v, %v", age, ok)
	}
}

func TestScreenerWithMaxAgeRefusesAListOfUnknownDate(t *testing.T) {
	s := NewScreener(func() (*List, error) {
		return Parse(strings.NewReader(tinySDN), strings.NewReader(tinyAdd), strings.NewReader(tinyAlt), strings.NewReader(tinyCountries))
	},
		WithMaxAge(time.Hour))
	if err := s.LastError(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Screen(Subject{Name: bnc})
	if apierror.CodeOf(err) != apierror.Unavailable {
		t.Errorf("Screen error %v; want Unavailable", err)
	}
}
