package bankaccount

import (
	"strconv"
	"strings"
	"testing"
)

// TestIBANRegistryExamples: every registry example passes, and every change of one of its
// characters fails: a digit to another digit or a letter to another letter is caught by
// mod-97 (97 is prime and above the largest difference, 25); a digit in the check-digit
// position changed to a letter is caught as not a digit.
func TestIBANRegistryExamples(t *testing.T) {
	c := Default()
	n := 0
	for cc, f := range c.iban {
		if f.example == "" {
			continue
		}
		n++
		if err := f.validate(f.example); err != nil {
			t.Errorf("%s example %s: %v", cc, f.example, err)
		}
		for i := 2; i < len(f.example); i++ {
			same := "0123456789"
			if f.example[i] >= 'A' {
				same = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			}
			if i < 4 {
				same += "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			}
			for _, r := range same {
				if byte(r) == f.example[i] {
					continue
				}
				mutated := f.example[:i] + string(r) + f.example[i+1:]
				if f.validate(mutated) == nil {
					t.Errorf("%s: %s (position %d changed) passes", cc, mutated, i)
				}
			}
		}
	}
	if n != 102 {
		t.Errorf("%d registry examples, want the 102 the registry README lists", n)
	}
}

// ibanFor computes the check digits of a country and BBAN (ISO 13616), for tests.
func ibanFor(cc, bban string, check int) string {
	rem := 0
	for _, r := range bban + cc + "00" {
		if r >= 'A' {
			rem = (rem*100 + int(r-'A') + 10) % 97
		} else {
			rem = (rem*10 + int(r-'0')) % 97
		}
	}
	if check < 0 {
		check = 98 - rem
	}
	return cc + strconv.Itoa(100 + check)[1:] + bban
}

// TestIBANCheckDigitAliases: check digits 00 and 01 are congruent to 97 and 98, so they
// pass the bare remainder test but are never issued.
func TestIBANCheckDigitAliases(t *testing.T) {
	found := 0
	for acct := 0; acct < 2000 && found < 2; acct++ {
		bban := "37040044" + strconv.Itoa(1000000000 + acct)[1:]
		valid := ibanFor("DE", bban, -1)
		cd := valid[2:4]
		if cd != "97" && cd != "98" {
			continue
		}
		found++
		if err := ibanCheckDigits(valid); err != nil {
			t.Errorf("%s: %v", valid, err)
		}
		alias := ibanFor("DE", bban, map[string]int{"97": 0, "98": 1}[cd])
		if err := ibanCheckDigits(alias); err == nil || !strings.Contains(err.Error(), "never issued") {
			t.Errorf("%s (alias of %s) = %v, want never issued", alias, valid, err)
		}
	}
	if found == 0 {
		t.Fatal("no BBAN with check digits 97 or 98 found")
	}
	if err := ibanCheckDigits("DE99370400440532013000"); err == nil || !strings.Contains(err.Error(), "never issued") {
		t.Errorf("check digits 99: %v", err)
	}
}

func TestABA(t *testing.T) {
	// Routing numbers of the FedACH participant directory (shared/data/banks/us).
	for _, rtn := range []string{"026009593", "021000021", "011000015", "011000028", "011000138", "121000358", "322271627", "063100277"} {
		if err := checkABA(rtn); err != nil {
			t.Errorf("%s: %v", rtn, err)
		}
	}
	for rtn, want := range map[string]string{
		"026009594": "check digit does not match",
		"021000022": "check digit does not match",
		"000000000": "prefix 00",
		"800000000": "prefix 80",
		"130000000": "prefix 13",
		"02600959":  "must be 9 digits",
	} {
		if err := checkABA(rtn); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", rtn, err, want)
		}
	}
}

func TestCLABE(t *testing.T) {
	// 032180000118359719 is Wikipedia's CLABE example (bank 032, IXE, now merged).
	for _, v := range []string{"032180000118359719", "002010077777777771", "014027000005555558"} {
		if got := clabeCheckDigit(v[:17]); got != v[17] {
			t.Errorf("%s: check digit %c, want %c", v, got, v[17])
		}
	}
}

// TestUKModulusVocalink runs the test cases of Vocalink's "Validating account numbers -
// UK modulus checking" (v9.00, as the cs278/bank-modulus fixtures carry them).
func TestUKModulusVocalink(t *testing.T) {
	c := Default()
	cases := []struct {
		sortCode, account string
		want              ModulusResult
		about             string
	}{
		{"089999", "66374958", ModulusValid, "1 pass modulus 10"},
		{"107999", "88837491", ModulusValid, "2 pass modulus 11"},
		{"202959", "63748472", ModulusValid, "3 pass modulus 11 and double alternate"},
		{"871427", "46238510", ModulusValid, "4 exception 10 & 11, first passes, second fails"},
		{"872427", "46238510", ModulusValid, "5 exception 10 & 11, first fails, second passes"},
		{"871427", "09123496", ModulusValid, "6 exception 10, ab=09 g=9"},
		{"871427", "99123496", ModulusValid, "7 exception 10, ab=99 g=9"},
		{"820000", "73688637", ModulusValid, "8 exception 3, c=6"},
		{"827999", "73988638", ModulusValid, "9 exception 3, c=9"},
		{"827101", "28748352", ModulusValid, "10 exception 3, both checks"},
		{"134020", "63849203", ModulusValid, "11 exception 4"},
		{"118765", "64371389", ModulusValid, "12 exception 1"},
		{"200915", "41011166", ModulusValid, "13 exception 6, foreign currency account"},
		{"938611", "07806039", ModulusValid, "14 exception 5"},
		{"938600", "42368003", ModulusValid, "15 exception 5 with substitution"},
		{"938063", "55065200", ModulusValid, "16 exception 5, both remainders 0"},
		{"772798", "99345694", ModulusValid, "17 exception 7"},
		{"086090", "06774744", ModulusValid, "18 exception 8"},
		{"309070", "02355688", ModulusValid, "19 exception 2 & 9, first passes"},
		{"309070", "12345668", ModulusValid, "20 exception 2 & 9, second passes with substitution"},
		{"309070", "12345677", ModulusValid, "21 exception 2 & 9, a!=0 g!=9"},
		{"309070", "99345694", ModulusValid, "22 exception 2 & 9, a!=0 g=9"},
		{"938063", "15764273", ModulusInvalid, "23 exception 5, second check digit wrong"},
		{"938063", "15764264", ModulusInvalid, "24 exception 5, first check digit wrong"},
		{"938063", "15763217", ModulusInvalid, "25 exception 5, remainder 1"},
		{"118765", "64371388", ModulusInvalid, "26 exception 1 fails"},
		{"203099", "66831036", ModulusInvalid, "27 passes modulus 11, fails double alternate"},
		{"203099", "58716970", ModulusInvalid, "28 fails modulus 11, passes double alternate"},
		{"089999", "66374959", ModulusInvalid, "29 fails modulus 10"},
		{"107999", "88837493", ModulusInvalid, "30 fails modulus 11"},
		{"074456", "12345112", ModulusValid, "31 exception 12/13, modulus 11 passes"},
		{"070116", "34012583", ModulusValid, "32 exception 12/13, both pass"},
		{"074456", "11104102", ModulusValid, "33 exception 12/13, modulus 10 passes"},
		{"180002", "00000190", ModulusValid, "34 exception 14, second check passes"},
		{"180002", "98093517", ModulusValid, "exception 14, first check passes"},
		{"180002", "98093520", ModulusInvalid, "exception 14, h not 0, 1 or 9"},
		{"001100", "12345678", ModulusUnchecked, "sort code not in the table"},
		{"040075", "37618166", ModulusInvalid, "the spec's test account: MOD11 remainder 2"},
	}
	for _, tc := range cases {
		got, err := c.UKModulusCheck(tc.sortCode, tc.account)
		if err != nil || got != tc.want {
			t.Errorf("%s %s (%s) = %v, %v; want %v", tc.sortCode, tc.account, tc.about, got, err, tc.want)
		}
	}
	if _, err := c.UKModulusCheck("04-00-75", "37618166"); err == nil {
		t.Error("UKModulusCheck takes separators")
	}
}

func TestTaxIDs(t *testing.T) {
	cases := []struct {
		check func(string) error
		v     string
		ok    bool
	}{
		{checkCPF, "529.982.247-25", true},
		{checkCPF, "52998224725", true},
		{checkCPF, "529.982.247-24", false},
		{checkCPF, "000.000.000-00", false},
		{checkCNPJ, "14.271.665/0001-44", true}, // Wise fixture
		{checkCNPJ, "12.ABC.345/01DE-35", true}, // Receita Federal's alphanumeric example
		{checkCNPJ, "12ABC34501DE35", true},
		{checkCNPJ, "12.ABC.345/01DE-53", false},
		{checkCNPJ, "00.000.000/0000-00", false},
		{checkRUT, "76.086.428-5", true}, // Wise fixture
		{checkRUT, "12.345.670-K", true},
		{checkRUT, "12.345.670-0", false},
		{checkCUIT, "20-34149938-1", true}, // Wise fixture
		{checkCUIT, "30-50001091-2", true},
		{checkCUIT, "20-34149938-0", false},
		{checkCUIT, "99-34149938-1", false},
		{checkABN, "51 824 753 556", true}, // the ATO's own ABN
		{checkABN, "53 004 085 616", true},
		{checkABN, "51 824 753 555", false},
		{checkABN, "01 824 753 556", false},
	}
	for _, tc := range cases {
		if err := tc.check(tc.v); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.v, err, tc.ok)
		}
	}
}

func TestLocalAccountChecks(t *testing.T) {
	cases := []struct {
		check func(string) error
		v     string
		ok    bool
	}{
		{checkCBU, "0110482420048200036238", true}, // Wise fixture
		{checkCBU, "2850590940090418135201", true},
		{checkCBU, "0110482520048200036238", false},
		{checkCzechAccount, "2000145399", true}, // CZ registry example CZ6508000000192000145399
		{checkCzechAccount, "0000000000", false},
		{checkCzechAccount, "0000000010", false},
		{checkCzechPrefix, "19", true},
		{checkCzechPrefix, "000019", true},
		{checkCzechPrefix, "20", false},
		{checkHungarianGiro, "11773016-11111018-00000000", true}, // HU registry example
		{checkHungarianGiro, "1177301611111018", true},
		{checkHungarianGiro, "11773017-11111018-00000000", false},
		{checkHungarianGiro, "12000000-12345678-00000000", false}, // Wise's placeholder
		{checkLuhn, "4111111111111111", true},
		{checkLuhn, "6240008631401148", true},
		{checkLuhn, "4111111111111112", false},
	}
	for _, tc := range cases {
		if err := tc.check(tc.v); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.v, err, tc.ok)
		}
	}
}

func TestNZAccount(t *testing.T) {
	c := Default()
	cases := []struct {
		v, want string // want "" = valid
	}{
		{"01-0242-0100194-00", ""},  // python-stdnum doctest
		{"01 0242 0100194 000", ""}, // the same, 3-digit suffix
		{"01-0242-0100195-00", "IRD algorithm A"},
		{"01-9999-0100197-00", "branch 9999 of bank 01"},
		{"99-0001-0100194-00", "bank 99 is not"},
		{"01-0242-0990000-00", "IRD algorithm B"},
	}
	for _, tc := range cases {
		_, err := checkNZAccountField(c, nil, nil, tc.v)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.v, err, tc.want)
		}
	}
}
