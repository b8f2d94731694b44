package sanctions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Names of the consolidated non-SDN list's files, in the layout of sdn.csv, add.csv and alt.csv.
const (
	ConsPrimFile = "cons_prim.csv"
	ConsAddFile  = "cons_add.csv"
	ConsAltFile  = "cons_alt.csv"
)

// DefaultMinEntries is the fewest SDN entries a downloaded release may have: the list has held
// more than 13 000 since 2023, so a release far below that is a truncated or wrong file.
const DefaultMinEntries = 10000

// maxFileSize bounds one downloaded file; sdn.csv is about 4 MB.
const maxFileSize = 64 << 20

// Feed downloads releases in OFAC's published layout: SDNURL is a directory holding sdn.csv,
// add.csv, alt.csv and sdn.xml (https://www.treasury.gov/ofac/downloads/), ConsolidatedURL one
// holding cons_prim.csv, cons_add.csv and cons_alt.csv (.../downloads/consolidated/). Its Load
// is a Screener's loader.
type Feed struct {
	SDNURL string
	// ConsolidatedURL is optional: without it only the SDN list is screened.
	ConsolidatedURL string
	// MinEntries defaults to DefaultMinEntries.
	MinEntries int
	// Client defaults to a client with a 2-minute timeout.
	Client *http.Client
}

// NewFeed checks the URLs and fills in the defaults.
func NewFeed(f Feed) (*Feed, error) {
	urls := []string{f.SDNURL}
	if f.ConsolidatedURL != "" {
		urls = append(urls, f.ConsolidatedURL)
	}
	for _, u := range urls {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("sanctions: list URL %q is not an http(s) URL", u)
		}
	}
	if f.MinEntries <= 0 {
		f.MinEntries = DefaultMinEntries
	}
	if f.Client == nil {
		f.Client = &http.Client{Timeout: 2 * time.Minute}
	}
	return &f, nil
}

// Load downloads and parses one release of the SDN list (and of the consolidated list) and
// returns them as one list dated by sdn.xml's Publish_Date. A release with fewer than
// MinEntries SDN entries is refused, and so is anything Parse refuses.
func (f *Feed) Load() (*List, error) {
	ctx := context.Background()
	published, err := f.publishDate(ctx)
	if err != nil {
		return nil, err
	}
	var files [4][]byte
	for i, name := range []string{SDNFile, AddressFile, AliasFile} {
		if files[i], err = f.get(ctx, f.SDNURL, name); err != nil {
			return nil, err
		}
	}
	files[3] = embeddedFile(CountriesFile)
	l, err := parse("feed "+clean(f.SDNURL), files)
	if err != nil {
		return nil, err
	}
	if l.Len() < f.MinEntries {
		return nil, fmt.Errorf("sanctions: %s holds %d SDN entries, fewer than the %d a complete release has (truncated?)",
			clean(f.SDNURL), l.Len(), f.MinEntries)
	}
	l.published = published
	if f.ConsolidatedURL == "" {
		return l, nil
	}
	for i, name := range []string{ConsPrimFile, ConsAddFile, ConsAltFile} {
		if files[i], err = f.get(ctx, f.ConsolidatedURL, name); err != nil {
			return nil, err
		}
	}
	cons, err := parse("feed "+clean(f.ConsolidatedURL), files)
	if err != nil {
		return nil, fmt.Errorf("consolidated list: %w", err)
	}
	return merge(l, cons), nil
}

// publishDate reads the header of sdn.xml and closes the download there.
func (f *Feed) publishDate(ctx context.Context) (time.Time, error) {
	body, err := f.open(ctx, f.SDNURL, PublishFile)
	if err != nil {
		return time.Time{}, err
	}
	defer body.Close()
	return ParsePublishDate(io.LimitReader(body, maxFileSize))
}

func (f *Feed) get(ctx context.Context, base, name string) ([]byte, error) {
	body, err := f.open(ctx, base, name)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("sanctions: reading %s%s: %w", clean(base), name, err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("sanctions: %s%s is larger than %d bytes", clean(base), name, maxFileSize)
	}
	return b, nil
}

func (f *Feed) open(ctx context.Context, base, name string) (io.ReadCloser, error) {
	u, err := url.JoinPath(base, name)
	if err != nil {
		return nil, fmt.Errorf("sanctions: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("sanctions: %w", err)
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		// The *url.Error text repeats the full URL, which may carry a token; report the cleaned one.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("sanctions: %s%s: %w", clean(base), name, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("sanctions: %s%s answered HTTP %d", clean(base), name, resp.StatusCode)
	}
	return resp.Body, nil
}

// clean is a list URL without user info or query (either may hold an access token), ending in /.
func clean(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(bad URL)"
	}
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimSuffix(u.Path, "/") + "/"}
	return c.String()
}
