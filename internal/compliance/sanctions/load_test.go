package sanctions

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A hand-made release in OFAC's layout with its quirks: CRLF, "-0- " nulls, a trailing 0x1A,
// doubled quotes inside a quoted field, a multi-program entry, an address without country.
const (
	tinySDN = "1,\"DOE, John\",\"individual\",\"SDGT] [IFSR\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,\"a.k.a. \"\"JD\"\".\"\r\n" +
		"2,\"ACME TRADING L.L.C.\",-0- ,\"IRAN\",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- \r\n\x1a"
	tinyAdd = "1,10,\"1 Main Street\",\"Springfield 12345\",\"Freedonia\",-0- \r\n" +
		"2,20,-0- ,-0- ,-0- ,-0- \r\n" +
		"2,21,\"5 Dock Road\",\"Port Town\",-0- ,-0- \r\n" +
		"2,22,-0- ,\"Dock City\",\"Freedonia\",-0- \r\n\x1a"
	tinyAlt       = "1,100,\"aka\",\"ROE, Johnny\",-0- \r\n\x1a"
	tinyCountries = "ofac_country,iso_alpha2,add_csv_rows,method,note\nFreedonia,FD,1,manual,fiction\n"
)

func writeRelease(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func tinyRelease() map[string]string {
	return map[string]string{SDNFile: tinySDN, AddressFile: tinyAdd, AliasFile: tinyAlt, CountriesFile: tinyCountries}
}

func TestLoadDir(t *testing.T) {
	dir := writeRelease(t, tinyRelease())
	l, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	if l.Len() != 2 {
		t.Errorf("Len = %d, want 2", l.Len())
	}
	if !strings.HasPrefix(l.Source(), "dir "+dir+": OFAC SDN, 2 entries, sha256 sdn=") {
		t.Errorf("Source = %q", l.Source())
	}
	home := &Address{Street: "1 Main Street", City: "Springfield", PostCode: "12345"}
	tests := []struct {
		subj    Subject
		want    int
		signals []string
	}{
		{Subject{"John Doe", "FD", home}, 1, all},
		{Subject{"Johnny Roe", "FD", nil}, 1, nameCountry},
		{Subject{"John Doe", "US", home}, 0, nil},
		{Subject{"JD", "", nil}, 0, nil}, // aliases quoted only in remarks are not indexed
		// Entry 2 has an address in Freedonia and one without a country, which may be anywhere:
		// another country cannot clear it, its address decides.
		{Subject{"Acme Trading LLC", "US", &Address{Street: "5 Dock Road", City: "Port Town"}}, 2, nameAddress},
		{Subject{"Acme Trading LLC", "US", home}, 0, nil},
	}
	for _, tt := range tests {
		m := l.Screen(tt.subj)
		switch {
		case tt.want == 0 && m != nil:
			t.Errorf("Screen(%+v) = %d %v, want clear", tt.subj, m.EntNum, m.Signals)
		case tt.want != 0 && m == nil:
			t.Errorf("Screen(%+v) = clear, want %d", tt.subj, tt.want)
		case tt.want != 0 && (m.EntNum != tt.want || !slices.Equal(m.Signals, tt.signals)):
			t.Errorf("Screen(%+v) = %d %v, want %d %v", tt.subj, m.EntNum, m.Signals, tt.want, tt.signals)
		}
	}
	if m := l.Screen(Subject{Name: "John Doe"}); m == nil || m.Program != "SDGT, IFSR" {
		t.Errorf("program of entry 1: %+v", m)
	}
}

func TestLoadDirWithoutCountryMapUsesEmbeddedOne(t *testing.T) {
	files := tinyRelease()
	delete(files, CountriesFile)
	files[AddressFile] = strings.ReplaceAll(tinyAdd, "Freedonia", "Germany")
	l, err := LoadDir(writeRelease(t, files))
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	if !strings.Contains(l.Source(), "(embedded country map)") {
		t.Errorf("Source = %q, want it to say the embedded country map is used", l.Source())
	}
	if m := l.Screen(Subject{Name: "John Doe", Country: "DE"}); m == nil || !slices.Equal(m.Signals, nameCountry) {
		t.Errorf("Germany via the embedded map: %+v", m)
	}
	if got := l.UnmappedCountries(); len(got) != 0 {
		t.Errorf("UnmappedCountries = %q, want none", got)
	}
}

func TestUnmappedCountryIsReportedAndUnknown(t *testing.T) {
	files := tinyRelease()
	files[AddressFile] = strings.ReplaceAll(tinyAdd, "Freedonia", "Sylvania")
	l, err := LoadDir(writeRelease(t, files))
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	if got := l.UnmappedCountries(); !slices.Equal(got, []string{"Sylvania"}) {
		t.Errorf("UnmappedCountries = %q, want [Sylvania]", got)
	}
	if m := l.Screen(Subject{Name: "John Doe", Country: "US"}); m == nil || !slices.Equal(m.Signals, nameOnly) {
		t.Errorf("an unmapped country must not clear: %+v", m)
	}
}

func TestLoadRejectsBrokenReleases(t *testing.T) {
	tests := []struct {
		name, file, content, wantErr string
	}{
		{"missing sdn.csv", SDNFile, "", "no such file"},
		{"empty sdn.csv", SDNFile, "\x1a", "has no entries"},
		{"header row", SDNFile, "ent_num,SDN_Name,SDN_Type,Program,Title,Call_Sign,Vess_type,Tonnage,GRT,Vess_flag,Vess_owner,Remarks\r\n" + tinySDN, "bad ent_num"},
		{"too few columns", SDNFile, "1,\"DOE, John\",\"individual\"\r\n", "3 columns, want 12"},
		{"too many columns", AliasFile, "1,100,\"aka\",\"ROE, Johnny\",-0- ,x\r\n", "6 columns, want 5"},
		{"duplicate entry", SDNFile, tinySDN[:strings.Index(tinySDN, "\r\n")+2] + tinySDN, "duplicate ent_num 1"},
		{"address of another release", AddressFile, "3,30,\"x\",\"y\",\"Freedonia\",-0- \r\n", "ent_num 3 is not in sdn.csv"},
		{"alias of another release", AliasFile, "9,90,\"aka\",\"X\",-0- \r\n", "ent_num 9 is not in sdn.csv"},
		{"unbalanced quote runs into the next line", SDNFile, strings.Replace(tinySDN, "\"DOE, John\"", "\"DOE, \"John", 1), "sdn.csv line 1"},
		{"country map without header", CountriesFile, "Freedonia,FD\n", "want ofac_country,iso_alpha2"},
		{"country code not alpha-2", CountriesFile, "ofac_country,iso_alpha2\nFreedonia,FRD\n", "not ISO alpha-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := tinyRelease()
			if tt.content == "" && tt.wantErr == "no such file" {
				delete(files, tt.file)
			} else {
				files[tt.file] = tt.content
			}
			l, err := LoadDir(writeRelease(t, files))
			if err == nil {
				t.Fatalf("LoadDir succeeded with %d entries, want error containing %q", l.Len(), tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseReaders(t *testing.T) {
	// The country map as a spreadsheet might save it: BOM and CRLF.
	countries := "\ufeff" + strings.ReplaceAll(tinyCountries, "\n", "\r\n")
	l, err := Parse(strings.NewReader(tinySDN), strings.NewReader(tinyAdd), strings.NewReader(tinyAlt), strings.NewReader(countries))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if l.Len() != 2 || !strings.HasPrefix(l.Source(), "parsed: ") {
		t.Errorf("Len %d Source %q", l.Len(), l.Source())
	}
	if m := l.Screen(Subject{Name: "John Doe", Country: "FD"}); m == nil || !slices.Equal(m.Signals, nameCountry) {
		t.Errorf("country from a BOM/CRLF map: %+v", m)
	}
}

// The embedded files must be the release documented in data/README.md, byte for byte.
func TestEmbeddedFilesAreTheDocumentedRelease(t *testing.T) {
	want := map[string]string{
		SDNFile:       "d768d28ee9e3ac7b27f9a956c922bf97dc286ebd39eff63faa4ef231f1ef668b",
		AddressFile:   "c9706ac0aacaabc8f6a2f8c66e07d0932161354f67772ddc41ed2e1328561ea5",
		AliasFile:     "72a3520a9544b965cfa1e3301143a67cdf9d6b1588e55b5273c9d2faa4725957",
		CountriesFile: "b532d6974d9c4240f9bda7f8fe6d7e47cf4645ee013b882d3174a6d01378d52d",
	}
	readme, err := os.ReadFile(filepath.Join("data", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, sum := range want {
		got := sha256.Sum256(embeddedFile(name))
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, want %s", name, got, sum)
		}
		if !strings.Contains(string(readme), sum) {
			t.Errorf("data/README.md does not list the sha256 of %s", name)
		}
	}
}

// Counts from data/README.md, computed independently of this parser.
func TestEmbeddedCounts(t *testing.T) {
	l := embedded(t)
	if l.Len() != 13821 {
		t.Errorf("entries %d, want 13821", l.Len())
	}
	var individuals, aliases, withAlias, vessels int
	for _, e := range l.entries {
		switch e.sdnType {
		case "individual":
			individuals++
		case "vessel":
			vessels++
		}
		aliases += len(e.names) - 1
		if len(e.names) > 1 {
			withAlias++
		}
	}
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"individuals", individuals, 6646},
		{"vessels", vessels, 764},
		{"alias rows", aliases, 17091},
		{"entries with an alias", withAlias, 6667},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if got := l.UnmappedCountries(); len(got) != 0 {
		t.Errorf("embedded country map misses %q", got)
	}
	if !strings.Contains(l.Source(), "sdn=d768d28ee9e3") || !strings.HasPrefix(l.Source(), "embedded "+EmbeddedRelease) {
		t.Errorf("Source = %q", l.Source())
	}
}
