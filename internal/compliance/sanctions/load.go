package sanctions

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// File names of a release directory (see LoadDir); OFAC publishes the first three under these
// names, the fourth is the derived country mapping kept next to them.
const (
	SDNFile       = "sdn.csv"
	AddressFile   = "add.csv"
	AliasFile     = "alt.csv"
	CountriesFile = "ofac-country-iso2.csv"
	// PublishFile is OFAC's XML edition of the release; only its publshInformation header
	// (Publish_Date) is read, since the CSV files carry no date.
	PublishFile = "sdn.xml"
)

// Parse reads one SDN release in OFAC's legacy CSV layout (sdn.csv, add.csv, alt.csv) and the
// OFAC-country-name → alpha-2 mapping (ofac-country-iso2.csv, with header). It fails on
// anything that suggests the wrong or a damaged file — a header row, a wrong column count, a
// bad ent_num, an address or alias of an entry that sdn.csv lacks, an empty sdn.csv — because a
// Screener keeps its previous list when a load fails, and a half-read list would clear
// sanctioned names silently.
func Parse(sdn, add, alt, countries io.Reader) (*List, error) {
	var files [4][]byte
	for i, r := range []io.Reader{sdn, add, alt, countries} {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("sanctions: reading %s: %w", fileNames[i], err)
		}
		files[i] = b
	}
	return parse("parsed", files)
}

// fileNames is the order of the files in parse's argument.
var fileNames = [4]string{SDNFile, AddressFile, AliasFile, CountriesFile}

// LoadDir loads a release from a directory holding sdn.csv, add.csv, alt.csv and
// ofac-country-iso2.csv. A directory without the mapping file uses the embedded one, since OFAC
// does not publish it; country names missing from it show up in UnmappedCountries. The
// release's sdn.xml, when the directory has it, gives its publish date (Published); without it
// the date is unknown and a Screener with a maximum age refuses to screen with the list.
func LoadDir(dir string) (*List, error) {
	var files [4][]byte
	origin := "dir " + dir
	for i, name := range fileNames {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if name == CountriesFile && errors.Is(err, fs.ErrNotExist) {
			b, err = embeddedFile(name), nil
			origin += " (embedded country map)"
		}
		if err != nil {
			return nil, fmt.Errorf("sanctions: %w", err)
		}
		files[i] = b
	}
	l, err := parse(origin, files)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, PublishFile))
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sanctions: %w", err)
	}
	defer f.Close()
	if l.published, err = ParsePublishDate(f); err != nil {
		return nil, err
	}
	return l, nil
}

// parse builds a List from the contents of the files in fileNames order; origin starts the
// Source text.
func parse(origin string, files [4][]byte) (*List, error) {
	digests := make([]string, len(files))
	for i, b := range files {
		sum := sha256.Sum256(b)
		digests[i] = strings.TrimSuffix(fileNames[i], ".csv") + "=" + hex.EncodeToString(sum[:6])
	}
	iso, err := parseCountries(files[3])
	if err != nil {
		return nil, err
	}
	l := &List{}
	byEnt, err := l.parseSDN(files[0])
	if err != nil {
		return nil, err
	}
	if err := l.parseAddresses(files[1], byEnt, iso); err != nil {
		return nil, err
	}
	if err := l.parseAliases(files[2], byEnt); err != nil {
		return nil, err
	}
	l.buildIndex()
	l.source = fmt.Sprintf("%s: OFAC SDN, %d entries, sha256 %s", origin, len(l.entries), strings.Join(digests, " "))
	return l, nil
}

// records reads OFAC legacy CSV: CRLF line ends, a trailing 0x1A (DOS end-of-file) byte, no
// header. LazyQuotes tolerates a stray quote inside a field, which a newer release may carry.
// A stray quote can also make the reader run on into the next line, which would silently drop
// an entry; such a record has a line break in a field or the wrong number of columns, so both
// are errors. cols is the exact column count, or the minimum when exact is false.
func records(name string, data []byte, cols int, exact bool, each func(rec []string) error) error {
	data = bytes.TrimRight(data, "\x1a\r\n\t ")
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a BOM, if a spreadsheet saved the file
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sanctions: %s: %w", name, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) < cols || exact && len(rec) != cols {
			return fmt.Errorf("sanctions: %s line %d: %d columns, want %d", name, line, len(rec), cols)
		}
		for i := range rec {
			if strings.ContainsAny(rec[i], "\r\n") {
				return fmt.Errorf("sanctions: %s line %d: line break inside a field (unbalanced quote?)", name, line)
			}
			rec[i] = field(rec[i])
		}
		if err := each(rec); err != nil {
			return fmt.Errorf("sanctions: %s line %d: %w", name, line, err)
		}
	}
}

// field trims a value and turns OFAC's null marker "-0-" (written "-0- ") into "".
func field(s string) string {
	s = strings.TrimSpace(s)
	if s == "-0-" {
		return ""
	}
	return s
}

func entNum(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad ent_num %q", s)
	}
	return n, nil
}

func (l *List) parseSDN(data []byte) (map[int]int, error) {
	byEnt := make(map[int]int, 16384)
	err := records(SDNFile, data, 12, true, func(rec []string) error {
		n, err := entNum(rec[0])
		if err != nil {
			return err
		}
		if _, dup := byEnt[n]; dup {
			return fmt.Errorf("duplicate ent_num %d", n)
		}
		if rec[1] == "" {
			return fmt.Errorf("ent_num %d has no name", n)
		}
		byEnt[n] = len(l.entries)
		l.entries = append(l.entries, entry{
			entNum:  n,
			names:   []string{rec[1]},
			sdnType: strings.ToLower(rec[2]),
			// Several programs come as "SDGT] [IFSR" (the outer brackets of "[SDGT] [IFSR]" are
			// not in the file).
			program: strings.ReplaceAll(rec[3], "] [", ", "),
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(l.entries) == 0 {
		return nil, fmt.Errorf("sanctions: %s has no entries", SDNFile)
	}
	return byEnt, nil
}

func (l *List) parseAddresses(data []byte, byEnt map[int]int, iso map[string]string) error {
	unmapped := map[string]bool{}
	err := records(AddressFile, data, 6, true, func(rec []string) error {
		e, err := lookup(byEnt, rec[0])
		if err != nil {
			return err
		}
		ent := &l.entries[e]
		street, locality, country := rec[2], rec[3], rec[4]
		switch code, known := iso[countryKey(country)]; {
		case country == "":
			ent.unknownCountry = ent.unknownCountry || street != "" || locality != ""
		case code == "":
			ent.unknownCountry = true
			if !known {
				unmapped[country] = true
			}
		case !slices.Contains(ent.countries, code):
			ent.countries = append(ent.countries, code)
		}
		if street == "" && locality == "" {
			return nil
		}
		a := address{street: tokens(street), locality: tokens(locality)}
		a.hasPostal = slices.ContainsFunc(a.locality, func(t string) bool { return strings.ContainsAny(t, "0123456789") })
		ent.addresses = append(ent.addresses, a)
		return nil
	})
	for name := range unmapped {
		l.unmapped = append(l.unmapped, name)
	}
	slices.Sort(l.unmapped)
	return err
}

func (l *List) parseAliases(data []byte, byEnt map[int]int) error {
	return records(AliasFile, data, 5, true, func(rec []string) error {
		e, err := lookup(byEnt, rec[0])
		if err != nil {
			return err
		}
		if rec[3] != "" {
			l.entries[e].names = append(l.entries[e].names, rec[3])
		}
		return nil
	})
}

// lookup finds the entry of an add.csv or alt.csv row. A row of an entry that sdn.csv does not
// have means the files come from different releases, which is refused rather than guessed at.
func lookup(byEnt map[int]int, s string) (int, error) {
	n, err := entNum(s)
	if err != nil {
		return 0, err
	}
	e, ok := byEnt[n]
	if !ok {
		return 0, fmt.Errorf("ent_num %d is not in %s (files of different releases?)", n, SDNFile)
	}
	return e, nil
}

var alpha2 = regexp.MustCompile(`^[A-Z]{2}$`)

// parseCountries reads ofac_country,iso_alpha2[,...] with a header row. A blank code is kept
// (mapped to "") so that deliberate blanks are told apart from names the file does not know.
func parseCountries(data []byte) (map[string]string, error) {
	iso := map[string]string{}
	header := true
	err := records(CountriesFile, data, 2, false, func(rec []string) error {
		if header {
			header = false
			if rec[0] != "ofac_country" || rec[1] != "iso_alpha2" {
				return fmt.Errorf("header %q, want ofac_country,iso_alpha2", strings.Join(rec[:2], ","))
			}
			return nil
		}
		if rec[1] != "" && !alpha2.MatchString(rec[1]) {
			return fmt.Errorf("country %q: code %q is not ISO alpha-2", rec[0], rec[1])
		}
		iso[countryKey(rec[0])] = rec[1]
		return nil
	})
	if err == nil && len(iso) == 0 {
		err = fmt.Errorf("sanctions: %s has no rows", CountriesFile)
	}
	return iso, err
}

// countryKey lets the mapping tolerate case and spacing differences in country names.
func countryKey(name string) string { return normalize(name) }
