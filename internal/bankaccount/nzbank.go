package bankaccount

// New Zealand bank account numbers: bank (2 digits), branch (4), account base (7),
// suffix (2-3). The bank and branch must be in the Payments NZ bank branch register
// (data/nz-banks.dat, python-stdnum's numdb format) and the number must pass the Inland
// Revenue check-digit algorithm for its bank (IRD, RWT/NRWT certificate filing
// specification, "Bank account number validation", with a 7-digit base as python-stdnum
// reads it).
//
// IRD's algorithms E and G (banks 09, 26, 28, 29) are not implemented: none of those
// banks is in the 2026 register, so their numbers are refused as an unknown bank before
// any checksum would run.

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

type nzRegister struct {
	banks    map[string]string   // bank code -> name
	branches map[string][][2]int // bank code -> inclusive branch ranges
}

func readNZRegister(fsys fs.FS) (*nzRegister, error) {
	reg := &nzRegister{banks: map[string]string{}, branches: map[string][][2]int{}}
	b, err := fs.ReadFile(fsys, nzBanksFile)
	if err != nil {
		return nil, err
	}
	bank := ""
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		codes, props, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !strings.HasPrefix(line, " ") {
			if len(codes) != 2 || !allDigits(codes) {
				return nil, fmt.Errorf("%s:%d: bank code %q is not 2 digits", nzBanksFile, n+1, codes)
			}
			bank = codes
			reg.banks[bank] = strings.Trim(strings.TrimPrefix(props, "bank="), `"`)
			continue
		}
		if bank == "" {
			return nil, fmt.Errorf("%s:%d: branch line before any bank", nzBanksFile, n+1)
		}
		for _, item := range strings.Split(codes, ",") {
			lo, hi, isRange := strings.Cut(item, "-")
			if !isRange {
				hi = lo
			}
			from, err1 := strconv.Atoi(lo)
			to, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || len(lo) != 4 || len(hi) != 4 || from > to {
				return nil, fmt.Errorf("%s:%d: bad branch range %q", nzBanksFile, n+1, item)
			}
			reg.branches[bank] = append(reg.branches[bank], [2]int{from, to})
		}
	}
	if len(reg.banks) == 0 {
		return nil, fmt.Errorf("%s: no banks", nzBanksFile)
	}
	return reg, nil
}

func (r *nzRegister) hasBranch(bank, branch string) bool {
	b, err := strconv.Atoi(branch)
	if err != nil {
		return false
	}
	for _, rg := range r.branches[bank] {
		if rg[0] <= b && b <= rg[1] {
			return true
		}
	}
	return false
}

// nzAlgorithms gives the IRD algorithm per bank; a bank not listed (31 Citibank and
// banks that IRD's table predates) has no check digit.
var nzAlgorithms = map[string]byte{
	"01": 'A', "02": 'A', "03": 'A', "04": 'A', "06": 'A', "08": 'D', "10": 'A', "11": 'A',
	"12": 'A', "13": 'A', "14": 'A', "15": 'A', "16": 'A', "17": 'A', "18": 'A', "19": 'A',
	"20": 'A', "21": 'A', "22": 'A', "23": 'A', "24": 'A', "25": 'F', "27": 'A', "30": 'A',
	"33": 'F', "35": 'A', "38": 'A',
}

// nzWeights are per digit of bank(2) branch(4) base(7) suffix(3), with the modulus.
var nzWeights = map[byte]struct {
	w   [16]int
	mod int
}{
	'A': {[16]int{0, 0, 6, 3, 7, 9, 0, 10, 5, 8, 4, 2, 1, 0, 0, 0}, 11},
	'B': {[16]int{0, 0, 0, 0, 0, 0, 0, 10, 5, 8, 4, 2, 1, 0, 0, 0}, 11},
	'D': {[16]int{0, 0, 0, 0, 0, 0, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0}, 11},
	'F': {[16]int{0, 0, 0, 0, 0, 0, 1, 7, 3, 1, 7, 3, 1, 0, 0, 0}, 10},
}

// nzDigits returns the 16-digit form of a number that matched the field pattern; a
// 2-digit suffix gets a leading zero.
func nzDigits(v string) string {
	d := digitsOnly(v)
	if len(d) == 15 {
		d = d[:13] + "0" + d[13:]
	}
	return d
}

func checkNZAccountField(c *Catalog, _ *offer, _ map[string]string, v string) (string, error) {
	d := nzDigits(v)
	if len(d) != 16 || !allDigits(d) {
		return "", errors.New("must be bank (2), branch (4), account (7) and suffix (2-3) digits")
	}
	bank, branch := d[:2], d[2:6]
	if c.nz.banks[bank] == "" {
		return "", fmt.Errorf("bank %s is not in the Payments NZ bank branch register", bank)
	}
	if !c.nz.hasBranch(bank, branch) {
		return "", fmt.Errorf("branch %s of bank %s is not in the Payments NZ bank branch register", branch, bank)
	}
	alg, ok := nzAlgorithms[bank]
	if !ok {
		return "NZ", nil
	}
	if alg == 'A' && d[6:13] >= "0990000" {
		alg = 'B'
	}
	spec := nzWeights[alg]
	sum := 0
	for i, w := range spec.w {
		sum += int(d[i]-'0') * w
	}
	if sum%spec.mod != 0 {
		return "", fmt.Errorf("check digit does not match (IRD algorithm %c)", alg)
	}
	return "NZ", nil
}
