package sanctions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stablepay/payout-operator/internal/apierror"
	"github.com/stablepay/payout-operator/internal/compliance/sanctions"
	"github.com/stablepay/payout-operator/internal/dev/refdata"
)

const (
	// newlyListed is a name the embedded release does not hold; the "newer release" adds it.
	newlyListed = "ZARYADYE FREIGHT FORWARDING LLC"
	bnc         = "Banco Nacional de Cuba"
)

// serve starts the reference data server with the embedded release.
func serve(t *testing.T) *refdata.Server {
	t.Helper()
	r, err := refdata.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func feedScreener(t *testing.T, r *refdata.Server, opts ...sanctions.Option) *sanctions.Screener {
	t.Helper()
	f, err := sanctions.NewFeed(sanctions.Feed{SDNURL: r.SanctionsURL()})
	if err != nil {
		t.Fatal(err)
	}
	s := sanctions.NewScreener(f.Load, opts...)
	if err := s.LastError(); err != nil {
		t.Fatalf("first load: %v", err)
	}
	return s
}

func TestFeedRefreshBringsNewNames(t *testing.T) {
	r := serve(t)
	s := feedScreener(t, r)
	if m, err := s.Screen(sanctions.Subject{Name: newlyListed}); m != nil || err != nil {
		t.Fatalf("before the refresh: %+v, %v; want clear", m, err)
	}
	if !s.List().Published().Equal(sanctions.EmbeddedPublished) {
		t.Errorf("published %v, want %v", s.List().Published(), sanctions.EmbeddedPublished)
	}
	newer := time.Date(2024, 1, 11, 0, 0, 0, 0, time.UTC)
	r.AddSanctionsEntry(newer, 99999991, newlyListed, "Moscow 109012", "Russia")
	if err := s.Reload(); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	m, err := s.Screen(sanctions.Subject{Name: "Zaryadye Freight Forwarding, LLC", Country: "RU"})
	if err != nil || m == nil || m.EntNum != 99999991 {
		t.Fatalf("after the refresh: %+v, %v; want a match with entry 99999991", m, err)
	}
	if !s.List().Published().Equal(newer) || s.List().Len() != 13822 {
		t.Errorf("list in force: published %v, %d entries", s.List().Published(), s.List().Len())
	}
}

func TestFeedRefusesBadReleasesAndKeepsTheOldList(t *testing.T) {
	sdn := sanctions.EmbeddedFile(sanctions.SDNFile)
	tests := []struct {
		name    string
		change  func(r *refdata.Server)
		wantErr string
	}{
		{"truncated sdn.csv", func(r *refdata.Server) { r.SetSanctionsFile(sanctions.SDNFile, sdn[:len(sdn)/2]) }, "sdn.csv"},
		{"a consistent but small release", func(r *refdata.Server) {
			r.SetSanctionsFile(sanctions.SDNFile, []byte("7,\"SMALL RELEASE CO\",-0- ,\"SDGT\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n"))
			r.SetSanctionsFile(sanctions.AddressFile, []byte("7,8,-0- ,-0- ,\"Cuba\",-0- \r\n"))
			r.SetSanctionsFile(sanctions.AliasFile, []byte{})
		}, "fewer than the 10000"},
		{"an older release", func(r *refdata.Server) {
			r.AddSanctionsEntry(sanctions.EmbeddedPublished.AddDate(0, 0, -14), 99999992, newlyListed, "Moscow", "Russia")
		}, "before the 2023-12-28"},
		{"no publish date", func(r *refdata.Server) {
			r.SetSanctionsFile(sanctions.PublishFile, []byte("<sdnList><sdnEntry/></sdnList>"))
		}, "no publshInformation"},
		{"sdn.xml missing", func(r *refdata.Server) { r.SetSanctionsFile(sanctions.PublishFile, nil) }, "HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := serve(t)
			s := feedScreener(t, r)
			before := s.List()
			tt.change(r)
			err := s.Reload()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Reload = %v; want an error containing %q", err, tt.wantErr)
			}
			if s.List() != before || s.LastError() == nil {
				t.Errorf("the list in force changed (%v) or LastError is nil (%v)", s.List().Source(), s.LastError())
			}
			if m, err := s.Screen(sanctions.Subject{Name: bnc}); m == nil || err != nil {
				t.Errorf("the old list no longer screens: %+v, %v", m, err)
			}
		})
	}
}

func TestFeedMergesTheConsolidatedList(t *testing.T) {
	r := serve(t)
	cons := map[string]string{
		sanctions.ConsPrimFile: "7001,\"KHARKOV NONSDN TRADERS\",-0- ,\"CAATSA - RUSSIA\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n",
		sanctions.ConsAddFile:  "7001,7002,-0- ,-0- ,\"Russia\",-0- \r\n",
		sanctions.ConsAltFile:  "",
	}
	// the consolidated files beside the SDN files: the test needs one directory only
	for name, data := range cons {
		r.SetSanctionsFile(name, []byte(data))
	}
	f, err := sanctions.NewFeed(sanctions.Feed{SDNURL: r.SanctionsURL(), ConsolidatedURL: r.SanctionsURL()})
	if err != nil {
		t.Fatal(err)
	}
	s := sanctions.NewScreener(f.Load)
	if err := s.LastError(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Kharkov NonSDN Traders", bnc} {
		if m, err := s.Screen(sanctions.Subject{Name: name}); m == nil || err != nil {
			t.Errorf("%s: %+v, %v; want a match", name, m, err)
		}
	}
	if s.List().Len() != 13822 {
		t.Errorf("%d entries, want 13822", s.List().Len())
	}
}

func TestScreenerPastMaxAgeIsUnavailable(t *testing.T) {
	now := sanctions.EmbeddedPublished.Add(7*24*time.Hour - time.Second)
	s := feedScreener(t, serve(t), sanctions.WithMaxAge(7*24*time.Hour), sanctions.WithClock(func() time.Time { return now }))
	if m, err := s.Screen(sanctions.Subject{Name: bnc}); m == nil || err != nil {
		t.Fatalf("within the age: %+v, %v; want a match", m, err)
	}
	now = now.Add(2 * time.Second)
	if m, err := s.Screen(sanctions.Subject{Name: bnc}); m != nil || apierror.CodeOf(err) != apierror.Unavailable {
		t.Fatalf("past the age: %+v, %v; want Unavailable", m, err)
	}
	if !s.Stale() {
		t.Error("Stale() = false past the age")
	}
	if age, ok := s.Age(); !ok || age != 7*24*time.Hour+time.Second {
		t.Errorf("Age = %v, %v", age, ok)
	}
}

func TestScreenerWithMaxAgeRefusesAListOfUnknownDate(t *testing.T) {
	undated := func() (*sanctions.List, error) {
		return sanctions.Parse(strings.NewReader("7,\"UNDATED CO\",-0- ,\"SDGT\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n"),
			strings.NewReader(""), strings.NewReader(""), strings.NewReader("ofac_country,iso_alpha2\r\nCuba,CU\r\n"))
	}
	s := sanctions.NewScreener(undated, sanctions.WithMaxAge(time.Hour))
	if err := s.LastError(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Screen(sanctions.Subject{Name: "Undated Co"}); apierror.CodeOf(err) != apierror.Unavailable {
		t.Errorf("Screen error %v; want Unavailable", err)
	}
}

func TestScreenerRunRefreshes(t *testing.T) {
	r := serve(t)
	s := feedScreener(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := make(chan error, 100)
	go s.Run(ctx, 20*time.Millisecond, func(err error) {
		select {
		case reports <- err:
		default:
		}
	})
	r.AddSanctionsEntry(sanctions.EmbeddedPublished.AddDate(0, 0, 1), 99999993, newlyListed, "Moscow", "Russia")
	deadline := time.After(10 * time.Second)
	for {
		select {
		case err := <-reports:
			if err != nil {
				t.Fatalf("a refresh failed: %v", err)
			}
			if m, _ := s.Screen(sanctions.Subject{Name: newlyListed}); m != nil {
				return
			}
		case <-deadline:
			t.Fatal("the new release was not loaded by Run within 10s")
		}
	}
}
