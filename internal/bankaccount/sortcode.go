package bankaccount

// UK sort code + account number modulus checking, as specified by Vocalink (Pay.UK) in
// "Validating account numbers - UK modulus checking" (v8.x/v9.00), with the weight
// table data/uk-valacdos.txt and the substitution table data/uk-scsubtab.txt.
//
// Validate does not refuse an account that fails this check; it reports it in
// Details.Warnings. The spec's own test account (sort code 04-00-75, account 37618166)
// fails the MOD11 check that valacdos v8.50 gives 040074-040075, and the conformance
// suite must accept it. Callers that want to refuse can use UKModulusCheck.

import (
	"bufio"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/stablepay/payout-operator/internal/apierror"
)

type ukMethod int

const (
	mod10 ukMethod = iota
	mod11
	dblAl
)

type ukRow struct {
	start, end int // sort code range, inclusive
	method     ukMethod
	weights    [14]int // u v w x y z a b c d e f g h
	exception  int
}

type ukModulusTable struct {
	rows []ukRow
	subs map[string]string // exception 5: sort code -> substitute
}

func readUKModulusTable(fsys fs.FS) (*ukModulusTable, error) {
	t := &ukModulusTable{subs: map[string]string{}}
	err := eachLine(fsys, ukValacdosFile, func(n int, fields []string) error {
		if len(fields) != 17 && len(fields) != 18 {
			return fmt.Errorf("want 17 or 18 fields, got %d", len(fields))
		}
		var r ukRow
		var err error
		if r.start, err = sortCodeNumber(fields[0]); err != nil {
			return err
		}
		if r.end, err = sortCodeNumber(fields[1]); err != nil {
			return err
		}
		switch fields[2] {
		case "MOD10":
			r.method = mod10
		case "MOD11":
			r.method = mod11
		case "DBLAL":
			r.method = dblAl
		default:
			return fmt.Errorf("unknown method %q", fields[2])
		}
		for i := range 14 {
			if r.weights[i], err = strconv.Atoi(fields[3+i]); err != nil {
				return fmt.Errorf("weight %d: %w", i+1, err)
			}
		}
		if len(fields) == 18 {
			if r.exception, err = strconv.Atoi(fields[17]); err != nil || r.exception < 1 || r.exception > 14 {
				return fmt.Errorf("exception %q is not 1-14", fields[17])
			}
		}
		t.rows = append(t.rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachLine(fsys, ukScsubtabFile, func(n int, fields []string) error {
		if len(fields) != 2 {
			return fmt.Errorf("want 2 fields, got %d", len(fields))
		}
		for _, f := range fields {
			if _, err := sortCodeNumber(f); err != nil {
				return err
			}
		}
		t.subs[fields[0]] = fields[1]
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", ukValacdosFile)
	}
	return t, nil
}

// eachLine calls fn with the whitespace-separated fields of each non-blank line.
func eachLine(fsys fs.FS, name string, fn func(line int, fields []string) error) error {
	f, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if err := fn(n, fields); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	return sc.Err()
}

func sortCodeNumber(s string) (int, error) {
	if len(s) != 6 || !allDigits(s) {
		return 0, fmt.Errorf("sort code %q is not 6 digits", s)
	}
	return strconv.Atoi(s)
}

// ModulusResult is the outcome of a UK modulus check.
type ModulusResult int

const (
	// ModulusValid: the account number passes the checks Vocalink gives its sort code.
	ModulusValid ModulusResult = iota
	// ModulusInvalid: it fails them; a payment to it is likely to be returned.
	ModulusInvalid
	// ModulusUnchecked: the sort code is not in the table, so Vocalink's rules deem
	// the account valid without a check.
	ModulusUnchecked
)

// UKModulusCheck checks a 6-digit sort code and 8-digit account number (no separators).
func (c *Catalog) UKModulusCheck(sortCode, accountNumber string) (ModulusResult, error) {
	if len(sortCode) != 6 || !allDigits(sortCode) || len(accountNumber) != 8 || !allDigits(accountNumber) {
		return ModulusInvalid, fmt.Errorf("want a 6-digit sort code and an 8-digit account number")
	}
	return c.uk.check(sortCode, accountNumber), nil
}

func (t *ukModulusTable) check(sortCode, account string) ModulusResult {
	sc, _ := strconv.Atoi(sortCode)
	var rows []ukRow
	for _, r := range t.rows {
		if r.start <= sc && sc <= r.end {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return ModulusUnchecked
	}
	// Exception 6: a foreign currency account (a in 4-8 and g = h) cannot be checked
	// and is deemed valid.
	if rows[0].exception == 6 && account[0] >= '4' && account[0] <= '8' && account[6] == account[7] {
		return ModulusValid
	}
	first := t.checkRow(rows[0], sortCode, account)
	if len(rows) == 1 {
		return result(first)
	}
	second := rows[1]
	switch {
	case rows[0].exception == 2 && second.exception == 9:
		// Exception 2 & 9: a pass on the first row settles it; otherwise the second
		// row is tried with sort code 309634.
		return result(first || t.checkRow(second, "309634", account))
	case rows[0].exception == 10 && second.exception == 11,
		rows[0].exception == 12 && second.exception == 13:
		// Exceptions 10 & 11 and 12 & 13: either check passing is enough.
		return result(first || t.checkRow(second, sortCode, account))
	}
	if !first {
		return ModulusInvalid
	}
	// Exception 3: when c is 6 or 9 the second (double alternate) check is not made.
	if second.exception == 3 && (account[2] == '6' || account[2] == '9') {
		return ModulusValid
	}
	return result(t.checkRow(second, sortCode, account))
}

func result(ok bool) ModulusResult {
	if ok {
		return ModulusValid
	}
	return ModulusInvalid
}

// checkRow runs one row's method on sort code + account, with the row's exception.
func (t *ukModulusTable) checkRow(r ukRow, sortCode, account string) bool {
	w := r.weights
	switch r.exception {
	case 5:
		if s, ok := t.subs[sortCode]; ok {
			sortCode = s
		}
	case 8:
		sortCode = "090126"
	case 2:
		if account[0] != '0' {
			if account[6] == '9' {
				w = [14]int{0, 0, 0, 0, 0, 0, 0, 0, 8, 7, 10, 9, 3, 1}
			} else {
				w = [14]int{0, 0, 1, 2, 5, 3, 6, 4, 8, 7, 10, 9, 3, 1}
			}
		}
	case 7:
		if account[6] == '9' {
			zeroUB(&w)
		}
	case 10:
		if ab := account[:2]; (ab == "09" || ab == "99") && account[6] == '9' {
			zeroUB(&w)
		}
	}
	digits := sortCode + account
	total := 0
	for i := range 14 {
		p := int(digits[i]-'0') * w[i]
		if r.method == dblAl {
			// Double alternate adds the digits of each product (all below 100).
			p = p/10 + p%10
		}
		total += p
	}
	g, h := int(account[6]-'0'), int(account[7]-'0')
	switch r.method {
	case mod10:
		return posMod(total, 10) == 0
	case dblAl:
		if r.exception == 1 {
			total += 27
		}
		if r.exception == 5 {
			rem := posMod(total, 10)
			return (rem == 0 && h == 0) || 10-rem == h
		}
		return posMod(total, 10) == 0
	default: // mod11
		rem := posMod(total, 11)
		switch r.exception {
		case 4:
			return rem == g*10+h
		case 5:
			if rem == 1 {
				return false
			}
			return (rem == 0 && g == 0) || 11-rem == g
		case 14:
			if rem == 0 {
				return true
			}
			// Exception 14: if h is 0, 1 or 9, drop it, shift the account right with a
			// leading 0 and check again.
			if h != 0 && h != 1 && h != 9 {
				return false
			}
			shifted := r
			shifted.exception = 0
			return t.checkRow(shifted, sortCode, "0"+account[:7])
		}
		return rem == 0
	}
}

// posMod is the non-negative remainder: some valacdos rows have a weight of -1.
func posMod(a, m int) int { return (a%m + m) % m }

// zeroUB zeroises the weights of u to b (sort code and first two account digits).
func zeroUB(w *[14]int) {
	for i := range 8 {
		w[i] = 0
	}
}

// checkUKSortCodeAccount is the sort_code type's cross-field check; see the file
// comment for why a failure is a warning.
func checkUKSortCodeAccount(c *Catalog, values map[string]string) (string, *apierror.Error) {
	sc, acct := digitsOnly(values["sortCode"]), values["accountNumber"]
	res, err := c.UKModulusCheck(sc, acct)
	if err != nil || res != ModulusInvalid {
		return "", nil
	}
	return fmt.Sprintf("details.accountNumber: %s fails the UK modulus check for sort code %s (Vocalink valacdos); payments to it may be returned", acct, sc), nil
}
