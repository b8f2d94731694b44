// Command gen refreshes internal/bankaccount/data from the project's reference data set (kept
// beside the repository, not in it: -src or $PAYOUT_REFERENCE_DATA names its folder). It copies the small files the package reads
// verbatim and derives compact key,name tables from the large ones, so the binary embeds
// a few hundred kilobytes instead of the 13 MB of source files.
//
// Run from internal/bankaccount (see the go:generate line in data.go):
//
//	PAYOUT_REFERENCE_DATA=/path/to/data go generate .
//
// data/catalog.json is written by hand and is not touched here: it is the policy (which
// account types each currency pays out to, with which fields); this program only supplies
// the facts it refers to. After a run, update the dates in data/README.md.
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// copies are used as published: their provenance stays simple and a newer upstream
// release can be dropped in unchanged.
var copies = []struct{ from, to string }{
	{"iban/registry.csv", "iban-registry.csv"},
	{"banks/gb/valacdos-v8-50.txt", "uk-valacdos.txt"},
	{"banks/gb/scsubtab.txt", "uk-scsubtab.txt"},
	{"banks/mx/banks.json", "mx-banks.json"},
	{"banks/nz/banks.dat", "nz-banks.dat"},
}

// wiseLists are the bank lists inside Wise's account-requirement fixture
// (valuesAllowed of a select field), one output file per account type.
var wiseLists = []struct{ wiseType, field, out string }{
	{"BANGLADESH", "bankCode", "banks/bangladesh.csv"},
	{"BRAZIL", "bankCode", "banks/brazil.csv"},
	{"CHILE", "bankCode", "banks/chile.csv"},
	{"CHINESE", "bankCode", "banks/chinese.csv"},
	{"COLOMBIA", "bankCode", "banks/colombia.csv"},
	{"EGYPT_LOCAL", "bankCode", "banks/egypt_local.csv"},
	{"GHANA", "bankCode", "banks/ghana.csv"},
	{"HONGKONG", "bankCode", "banks/hongkong.csv"},
	{"INDONESIAN", "bankCode", "banks/indonesian.csv"},
	{"ISRAELI_BANK_CODE", "bankCode", "banks/israeli_local.csv"},
	{"KENYA_LOCAL", "bankCode", "banks/kenya_local.csv"},
	{"MALAYSIAN", "swiftCode", "banks/malaysian.csv"},
	{"MOROCCO", "bankCode", "banks/morocco.csv"},
	{"NEPAL", "bankCode", "banks/nepal.csv"},
	{"NIGERIA", "bankCode", "banks/nigeria.csv"},
	{"PAKISTAN", "bankCode", "banks/pakistan.csv"},
	{"PERU", "bankCode", "banks/peru.csv"},
	{"PHILIPPINES", "bankCode", "banks/philippines.csv"},
	{"SINGAPORE", "bankCode", "banks/singapore.csv"},
	{"SOUTHAFRICA", "swiftCode", "banks/southafrica.csv"},
	{"SOUTH_KOREAN_PAYGATE", "bankCode", "banks/south_korean_paygate.csv"},
	{"SRILANKA", "bankCode", "banks/srilanka.csv"},
	{"THAILAND", "bankCode", "banks/thailand.csv"},
	{"VIETNAME_EARTHPORT", "swiftCode", "banks/vietname_earthport.csv"},
}

type entry struct{ key, name string }

func main() {
	src := flag.String("src", os.Getenv("PAYOUT_REFERENCE_DATA"), "the reference data folder (default: $PAYOUT_REFERENCE_DATA)")
	out := flag.String("out", "data", "the package's data folder")
	flag.Parse()
	if *src == "" {
		log.Fatal("no reference data folder: set -src or PAYOUT_REFERENCE_DATA")
	}
	if err := run(*src, *out); err != nil {
		log.Fatal(err)
	}
}

func run(src, out string) error {
	for _, c := range copies {
		if err := copyFile(filepath.Join(src, c.from), filepath.Join(out, c.to)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(out, "banks"), 0o755); err != nil {
		return err
	}
	wise, err := readWise(filepath.Join(src, "banks/wise/list-type-requirements.json"))
	if err != nil {
		return err
	}
	for _, l := range wiseLists {
		entries, ok := wise[l.wiseType+"."+l.field]
		if !ok {
			return fmt.Errorf("wise fixture has no field %s.%s", l.wiseType, l.field)
		}
		if err := writeCSV(filepath.Join(out, l.out), entries); err != nil {
			return err
		}
	}
	zengin, err := readZengin(filepath.Join(src, "banks/jp/banks.json"))
	if err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(out, "banks/japanese.csv"), zengin); err != nil {
		return err
	}
	ifsc, err := readIFSCBanks(filepath.Join(src, "banks/in"))
	if err != nil {
		return err
	}
	return writeCSV(filepath.Join(out, "in-ifsc-banks.csv"), ifsc)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	o, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

// readWise returns the select lists of the older Wise fixture shape, keyed "TYPE.field".
// The blank "Choose recipient bank" placeholder is dropped, and a code listed twice keeps
// its first name: a select needs unique keys.
func readWise(path string) (map[string][]entry, error) {
	var types []struct {
		Type        string `json:"type"`
		FieldGroups []struct {
			Fields []struct {
				Name          string `json:"name"`
				ValuesAllowed []struct {
					Code  string `json:"code"`
					Title string `json:"title"`
				} `json:"valuesAllowed"`
			} `json:"fields"`
		} `json:"fieldGroups"`
	}
	if err := readJSON(path, &types); err != nil {
		return nil, err
	}
	lists := map[string][]entry{}
	for _, t := range types {
		for _, g := range t.FieldGroups {
			for _, f := range g.Fields {
				seen := map[string]bool{}
				var es []entry
				for _, v := range f.ValuesAllowed {
					code := strings.TrimSpace(v.Code)
					if code == "" || seen[code] {
						continue
					}
					seen[code] = true
					es = append(es, entry{code, oneLine(v.Title)})
				}
				if len(es) > 0 {
					lists[t.Type+"."+f.Name] = es
				}
			}
		}
	}
	return lists, nil
}

// readZengin lists the Zengin 4-digit bank codes, named as Wise names them ("name [code]"),
// in code order.
func readZengin(path string) ([]entry, error) {
	var banks map[string]struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	if err := readJSON(path, &banks); err != nil {
		return nil, err
	}
	es := make([]entry, 0, len(banks))
	for _, b := range banks {
		es = append(es, entry{b.Code, oneLine(b.Name) + " [" + b.Code + "]"})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].key < es[j].key })
	return es, nil
}

// readIFSCBanks keeps only the 4-letter bank codes of Razorpay's IFSC list (the package
// checks the bank part of an IFSC, not each of the 182,295 branches), with the bank names.
func readIFSCBanks(dir string) ([]entry, error) {
	var ifsc map[string]json.RawMessage
	if err := readJSON(filepath.Join(dir, "IFSC.json"), &ifsc); err != nil {
		return nil, err
	}
	var names map[string]string
	if err := readJSON(filepath.Join(dir, "banknames.json"), &names); err != nil {
		return nil, err
	}
	es := make([]entry, 0, len(ifsc))
	for code := range ifsc {
		es = append(es, entry{code, oneLine(names[code])})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].key < es[j].key })
	return es, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeCSV(path string, es []entry) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	rows := [][]string{{"key", "name"}}
	for _, e := range es {
		rows = append(rows, []string{e.key, e.name})
	}
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// oneLine folds the line breaks and runs of spaces some fixture names carry.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
