package bankaccount

import (
	"strings"
	"testing"

	"github.com/stablepay/payout-operator/internal/apierror"
)

// vector is one recipient to validate. wantErr is empty for a valid account, else a
// piece of the expected message, which starts with the field at fault.
type vector struct {
	currency, typ string
	details       map[string]any
	wantErr       string
	wantCountry   string // checked for valid vectors when set
}

// d builds details from key, value pairs; legalType PRIVATE unless given.
func d(kv ...any) map[string]any {
	m := map[string]any{"legalType": "PRIVATE"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func addr(country string) map[string]any {
	a := map[string]any{"country": country, "city": "Springfield", "firstLine": "1 Main Street", "postCode": "12345"}
	if country == "US" {
		a["state"] = "NY"
	}
	return a
}

func iban(cur, value, wantErr string) vector {
	return vector{currency: cur, typ: "iban", details: d("iban", value), wantErr: wantErr}
}

func swift(cur, bic string) vector {
	return vector{currency: cur, typ: "swift_code", details: d("swiftCode", bic, "accountNumber", "0012345678", "address", addr(bic[4:6])), wantCountry: bic[4:6]}
}

const mod97 = "check digits do not match (ISO 13616 mod-97)"

// vectors cover every currency with valid accounts of each type and invalid ones.
// Sources: IBANs are the registry's examples (php-iban / commons-validator fixtures),
// routing numbers are in the Fed's FedACH directory (shared/data/banks/us), UK pairs are
// Vocalink's published test cases, CLABE/CPF/CNPJ/CUIT/RUT/ABN values are published
// examples (Wikipedia, Receita Federal's alphanumeric CNPJ example, the ATO's own ABN,
// Wise's fixture), NZ numbers are python-stdnum's doctests, IFSCs are in Razorpay's list.
// Local accounts without check digits are shaped after the Wise fixture's examples.
var vectors = []vector{
	// IBAN-only currencies: registry example, then one digit changed.
	iban("AED", "AE070331234567890123456", ""), iban("AED", "AE070331234567890123457", mod97),
	iban("ALL", "AL47212110090000000235698741", ""), iban("ALL", "AL47212110090000000235698742", mod97),
	iban("BAM", "BA391290079401028494", ""), iban("BAM", "BA391290079401028495", mod97),
	iban("BHD", "BH67BMAG00001299123456", ""), iban("BHD", "BH67BMAG0000129912345", "a BH IBAN has 22 characters, got 21"),
	iban("CRC", "CR05015202001026284066", ""), iban("CRC", "CR05015202001026284067", mod97),
	iban("DOP", "DO28BAGR00000001212453611324", ""), iban("DOP", "DO28BAGR0000000121245361132A", "BBAN structure 4!c20!n"),
	iban("GEL", "GE29NB0000000101904917", ""), iban("GEL", "GE29NB0000000101904918", mod97),
	iban("GTQ", "GT82TRAJ01020000001210029690", ""), iban("GTQ", "GT82TRAJ01020000001210029691", mod97),
	iban("HNL", "HN54PISA00000000000000123124", ""), iban("HNL", "HN54PISA00000000000000123125", mod97),
	iban("ISK", "IS140159260076545510730339", ""), iban("ISK", "IS140159260076545510730330", mod97),
	iban("KWD", "KW81CBKU0000000000001234560101", ""), iban("KWD", "KW81CBKU0000000000001234560102", mod97),
	iban("MNT", "MN121234123456789123", ""), iban("MNT", "MN121234123456789124", mod97),
	iban("MUR", "MU17BOMM0101101030300200000MUR", ""), iban("MUR", "MU17BOMM0101101030300200000MUS", mod97),
	iban("NIO", "NI45BAPR00000013000003558124", ""), iban("NIO", "NI92BAMC000000000000000003123123", "a NI IBAN has 28 characters, got 32"),
	iban("NOK", "NO9386011117947", ""), iban("NOK", "NO9386011117948", mod97),
	iban("OMR", "OM810180000001299123456", ""), iban("OMR", "OM810180000001299123457", mod97),
	iban("QAR", "QA58DOHB00001234567890ABCDEFG", ""), iban("QAR", "QA58DOHB00001234567890ABCDEFH", mod97),
	iban("RON", "RO49AAAA1B31007593840000", ""), iban("RON", "RO49AAAA1B31007593840001", mod97),
	iban("RSD", "RS35260005601001611379", ""), iban("RSD", "RS35260005601001611378", mod97),
	iban("SAR", "SA0380000000608010167519", ""), iban("SAR", "SA0380000000608010167518", mod97),
	iban("SCR", "SC18SSCB11010000000000001497USD", ""), iban("SCR", "SC18SSCB11010000000000001497EUR", mod97),
	iban("TND", "TN5910006035183598478831", ""), iban("TND", "TN5910006035183598478832", mod97),
	iban("TRY", "TR330006100519786457841326", ""), iban("TRY", "TR330006100519786457841327", mod97),
	iban("UAH", "UA213996220000026007233566001", ""), iban("UAH", "UA213996220000026007233566002", mod97),
	iban("CHF", "CH9300762011623852957", ""), iban("CHF", "LI21088100002324013AA", ""),
	iban("CHF", "DE89370400440532013000", "DE IBANs are not accepted for CHF payouts"),
	iban("DKK", "DK5000400440116243", ""), iban("DKK", "FO2000400440116243", ""), iban("DKK", "GL2000400440116243", ""),
	iban("DKK", "DK5000400440116244", mod97),

	// EUR: the conformance suite's IBANs, Bulgaria (which pays in EUR), Croatia.
	{currency: "EUR", typ: "iban", details: d("iban", "DE89370400440532013000"), wantCountry: "DE"},
	{currency: "EUR", typ: "iban", details: d("iban", "FR1420041010050500013M02606"), wantCountry: "FR"},
	{currency: "EUR", typ: "iban", details: d("iban", "GB29NWBK60161331926819"), wantCountry: "GB"},
	{currency: "EUR", typ: "iban", details: d("iban", "BG80BNBG96611020345678"), wantCountry: "BG"},
	iban("EUR", "HR1210010051863000160", ""),
	iban("EUR", "1234", "details.iban: must be at least 14 characters, got 4"),
	iban("EUR", "DE89 3704 0044 0532 0130 00", "details.iban: does not match the pattern"),
	iban("EUR", "de89370400440532013000", "details.iban: does not match the pattern"),
	iban("EUR", "DE88370400440532013000", "details.iban: "+mod97),
	iban("EUR", "AE070331234567890123456", "AE IBANs are not accepted for EUR payouts"),
	iban("EUR", "XX89370400440532013000", "XX is not a country code of the SWIFT IBAN registry"),
	{currency: "EUR", typ: EmailRecipientType, details: map[string]any{"email": "payee@example.com"}},
	{currency: "EUR", typ: EmailRecipientType, details: map[string]any{"email": "Payee <payee@example.com>"}, wantErr: "details.email: must be a plain e-mail address"},

	// GBP: the conformance pair (advisory modulus failure, see sortcode.go), Vocalink case 1.
	{currency: "GBP", typ: "sort_code", details: d("sortCode", "040075", "accountNumber", "37618166"), wantCountry: "GB"},
	{currency: "GBP", typ: "sort_code", details: d("sortCode", "08-99-99", "accountNumber", "66374958")},
	{currency: "GBP", typ: "sort_code", details: d("sortCode", "0899999", "accountNumber", "66374958"), wantErr: "details.sortCode: does not match the pattern"},
	{currency: "GBP", typ: "sort_code", details: d("sortCode", "089999", "accountNumber", "6637495"), wantErr: "details.accountNumber: must be at least 8 characters"},
	iban("GBP", "GB29NWBK60161331926819", ""), iban("GBP", "IE29AIBK93115212345678", "IE IBANs are not accepted for GBP payouts"),

	// USD: the conformance aba recipient; Fed directory routing numbers.
	{currency: "USD", typ: "aba", details: d("abartn", "026009593", "accountNumber", "12345678", "accountType", "CHECKING", "address", addr("US")), wantCountry: "US"},
	{currency: "USD", typ: "aba", details: d("abartn", "021000021", "accountNumber", "987654321", "accountType", "SAVINGS", "address", addr("CA")), wantCountry: "CA"},
	{currency: "USD", typ: "aba", details: d("abartn", "011000015", "accountNumber", "1234", "accountType", "CHECKING", "address", addr("US"))},
	{currency: "USD", typ: "aba", details: d("abartn", "026009594", "accountNumber", "12345678", "accountType", "CHECKING", "address", addr("US")), wantErr: "details.abartn: check digit does not match (ABA 3-7-1 checksum)"},
	{currency: "USD", typ: "aba", details: d("abartn", "026009593", "accountNumber", "12345678", "accountType", "CHECKING"), wantErr: "details.address.country: required"},
	swift("USD", "CHASUS33"),
	iban("USD", "SV62CENR00000000000000700025", ""), iban("USD", "TL380080012345678910157", ""), iban("USD", "VG96VPVG0000012345678901", ""),
	iban("USD", "US62CENR00000000000000700025", "US is not a country code of the SWIFT IBAN registry"),
	{currency: "USD", typ: "swift_code", details: d("swiftCode", "chasus33", "accountNumber", "0012345678", "address", addr("US")), wantErr: "details.swiftCode: does not match the pattern"},

	// Generic SWIFT currencies: BICs of each currency's country.
	swift("BMD", "BNTBBMHM"), swift("BOB", "BNBOBOLX"), swift("BWP", "FIRNBWGX"), swift("CVE", "CGDICVCV"),
	swift("GMD", "TRSTGMGM"), swift("GNF", "ECOCGNCN"), swift("KGS", "KICBKG22"), swift("KHR", "ABAAKHPP"),
	swift("LAK", "COEBLALA"), swift("MOP", "BNULMOMX"), swift("NAD", "FIRNNANX"), swift("PYG", "BCNAPYPA"),
	swift("RWF", "BKIGRWRW"), swift("SRD", "DSBBSRPA"), swift("UYU", "BROUUYMM"),
	{currency: "BMD", typ: "swift_code", details: d("swiftCode", "BNTBQQHM", "accountNumber", "0012345678", "address", addr("BM")), wantErr: "characters 5-6 (QQ) must be an ISO 3166-1 country code"},
	{currency: "BOB", typ: "swift_code", details: d("swiftCode", "BNBOBOL0", "accountNumber", "0012345678", "address", addr("BO")), wantErr: "is a test BIC"},
	{currency: "BWP", typ: "swift_code", details: d("swiftCode", "FIRNBWGX", "accountNumber", "001", "address", addr("BW")), wantErr: "details.accountNumber: must be at least 4"},
	{currency: "CVE", typ: "swift_code", details: d("swiftCode", "CGDICVCV", "accountNumber", "0012345678"), wantErr: "details.address.country: required"},
	{currency: "GMD", typ: "swift_code", details: d("swiftCode", "TRSTGMGM", "accountNumber", "0012-345", "address", addr("GM")), wantErr: "details.accountNumber: does not match"},
	{currency: "GNF", typ: "swift_code", details: d("swiftCode", "ECOCGNCNX", "accountNumber", "0012345678", "address", addr("GN")), wantErr: "details.swiftCode: does not match"},
	{currency: "KGS", typ: "swift_code", details: d("swiftCode", "KICBKG22", "accountNumber", "0012345678", "address", addr("KGZ")), wantErr: "details.address.country: must be an ISO 3166-1 alpha-2"},
	{currency: "KHR", typ: "swift_code", details: d("accountNumber", "0012345678", "address", addr("KH")), wantErr: "details.swiftCode: required"},
	{currency: "LAK", typ: "swift_code", details: d("swiftCode", "COEBLALA", "accountNumber", "0012345678", "address", map[string]any{"country": "LA"}), wantErr: "details.address.city: required"},
	{currency: "MOP", typ: "aba", details: d(), wantErr: `type: "aba" is not an account type of MOP`},
	{currency: "NAD", typ: "swift_code", details: d("swiftCode", "FIRNNANX", "accountNumber", "0012345678", "address", addr("NA"), "iban", "x"), wantErr: "details.iban: unknown field of account type swift_code"},
	{currency: "PYG", typ: "swift_code", details: d("swiftCode", 12345678, "accountNumber", "0012345678", "address", addr("PY")), wantErr: "details.swiftCode: must be a string, got a number"},
	{currency: "RWF", typ: "swift_code", details: map[string]any{"swiftCode": "BKIGRWRW", "accountNumber": "0012345678", "address": addr("RW")}, wantErr: "details.legalType: required"},
	{currency: "SRD", typ: "swift_code", details: d("legalType", "COMPANY", "swiftCode", "DSBBSRPA", "accountNumber", "0012345678", "address", addr("SR")), wantErr: "details.legalType: must be one of PRIVATE, BUSINESS"},
	{currency: "UYU", typ: "swift_code", details: d("swiftCode", "BROUUYMM", "accountNumber", "0012345678", "address", "Montevideo"), wantErr: "details.address: must be an object"},

	// Local formats with check digits.
	{currency: "ARS", typ: "argentina", details: d("taxId", "20-34149938-1", "accountNumber", "0110482420048200036238"), wantCountry: "AR"},
	{currency: "ARS", typ: "argentina", details: d("taxId", "30500010912", "accountNumber", "2850590940090418135201")},
	{currency: "ARS", typ: "argentina", details: d("taxId", "20-34149938-2", "accountNumber", "0110482420048200036238"), wantErr: "details.taxId: check digit does not match (CUIT mod-11)"},
	{currency: "ARS", typ: "argentina", details: d("taxId", "20-34149938-1", "accountNumber", "0110482420048200036239"), wantErr: "details.accountNumber: check digit of the second block"},
	{currency: "AUD", typ: "australian", details: d("bsbCode", "023604", "accountNumber", "123456789"), wantCountry: "AU"},
	{currency: "AUD", typ: "australian", details: d("legalType", "BUSINESS", "bsbCode", "062-000", "accountNumber", "12345678", "businessNumber", "51 824 753 556", "address", addr("AU"))},
	{currency: "AUD", typ: "australian", details: d("legalType", "BUSINESS", "bsbCode", "062000", "accountNumber", "12345678", "businessNumber", "51824753557", "address", addr("AU")), wantErr: "details.businessNumber: check digits do not match (ABN mod-89)"},
	{currency: "AUD", typ: "australian", details: d("bsbCode", "023604", "accountNumber", "123456789", "businessNumber", "51824753556"), wantErr: "details.businessNumber: does not apply here: only when legalType is BUSINESS"},
	{currency: "BRL", typ: "brazil", details: d("bankCode", "001", "branchCode", "1234", "accountNumber", "12345678-9", "accountType", "CHECKING", "phoneNumber", "+55 21 5555 5555", "cpf", "529.982.247-25"), wantCountry: "BR"},
	{currency: "BRL", typ: "brazil", details: d("legalType", "BUSINESS", "bankCode", "001", "branchCode", "1234-5", "accountNumber", "123456", "accountType", "SAVINGS", "phoneNumber", "+5521555555555", "cnpj", "12.ABC.345/01DE-35", "address", addr("BR"))},
	{currency: "BRL", typ: "brazil", details: d("legalType", "BUSINESS", "bankCode", "001", "branchCode", "1234", "accountNumber", "123456", "accountType", "SAVINGS", "phoneNumber", "+5521555555555", "cnpj", "14.271.665/0001-44", "address", addr("BR"))},
	{currency: "BRL", typ: "brazil", details: d("bankCode", "001", "branchCode", "1234", "accountNumber", "12345678-9", "accountType", "CHECKING", "phoneNumber", "+55 21 5555 5555", "cpf", "123.456.789-12"), wantErr: "details.cpf: check digits do not match (CPF mod-11)"},
	{currency: "BRL", typ: "brazil", details: d("bankCode", "001", "branchCode", "1234", "accountNumber", "12345678-9", "accountType", "CHECKING", "phoneNumber", "+55 21 5555 5555", "cpf", "111.111.111-11"), wantErr: "details.cpf: is not an issued CPF"},
	{currency: "BRL", typ: "brazil", details: d("legalType", "BUSINESS", "bankCode", "001", "branchCode", "1234", "accountNumber", "123456", "accountType", "SAVINGS", "phoneNumber", "+5521555555555", "cnpj", "12.ABC.345/01DE-36", "address", addr("BR")), wantErr: "details.cnpj: check digits do not match (CNPJ mod-11)"},
	{currency: "CLP", typ: "chile", details: d("bankCode", "001", "accountNumber", "12345678", "rut", "76.086.428-5", "accountType", "CUENTA_VISTA", "phoneNumber", "+56 33 555 5555"), wantCountry: "CL"},
	{currency: "CLP", typ: "chile", details: d("bankCode", "001", "accountNumber", "12345678", "rut", "76086428-4", "accountType", "CHECKING", "phoneNumber", "+56 33 555 5555"), wantErr: "details.rut: check character does not match (RUT mod-11)"},
	{currency: "CZK", typ: "czech", details: d("prefix", "19", "accountNumber", "2000145399", "bankCode", "0800"), wantCountry: "CZ"},
	{currency: "CZK", typ: "czech", details: d("accountNumber", "2000145399", "bankCode", "0800")},
	{currency: "CZK", typ: "czech", details: d("prefix", "19", "accountNumber", "2000145398", "bankCode", "0800"), wantErr: "details.accountNumber: check digit does not match (Czech account mod-11"},
	{currency: "CZK", typ: "czech", details: d("prefix", "18", "accountNumber", "2000145399", "bankCode", "0800"), wantErr: "details.prefix: check digit does not match"},
	iban("CZK", "CZ6508000000192000145399", ""),
	{currency: "HUF", typ: "hungarian", details: d("accountNumber", "11773016-11111018-00000000"), wantCountry: "HU"},
	{currency: "HUF", typ: "hungarian", details: d("accountNumber", "1177301611111018")},
	{currency: "HUF", typ: "hungarian", details: d("accountNumber", "11773016-11111019-00000000"), wantErr: "details.accountNumber: check digit of the account block"},
	iban("HUF", "HU42117730161111101800000000", ""),
	{currency: "INR", typ: "indian", details: d("ifscCode", "SBIN0000001", "accountNumber", "00000012345678"), wantCountry: "IN"},
	{currency: "INR", typ: "indian", details: d("ifscCode", "HDFC0000001", "accountNumber", "50100012345678")},
	{currency: "INR", typ: "indian", details: d("ifscCode", "ABCD0000001", "accountNumber", "50100012345678"), wantErr: "details.ifscCode: bank code ABCD (characters 1-4) is not a bank in the RBI IFSC list"},
	{currency: "INR", typ: "indian", details: d("ifscCode", "hdfc0000001", "accountNumber", "50100012345678"), wantErr: "details.ifscCode: does not match the pattern"},
	{currency: "MXN", typ: "mexican", details: d("clabe", "002010077777777771"), wantCountry: "MX"},
	{currency: "MXN", typ: "mexican", details: d("clabe", "014027000005555558")},
	{currency: "MXN", typ: "mexican", details: d("clabe", "002010077777777772"), wantErr: "details.clabe: check digit does not match"},
	{currency: "MXN", typ: "mexican", details: d("clabe", "032180000118359719"), wantErr: "details.clabe: bank code 032 (digits 1-3) is not a SPEI participant"},
	{currency: "NZD", typ: "newzealand", details: d("accountNumber", "01-0242-0100194-00"), wantCountry: "NZ"},
	{currency: "NZD", typ: "newzealand", details: d("accountNumber", "0102420100194000")},
	{currency: "NZD", typ: "newzealand", details: d("accountNumber", "01-0242-0100195-00"), wantErr: "details.accountNumber: check digit does not match (IRD algorithm A)"},
	{currency: "NZD", typ: "newzealand", details: d("accountNumber", "01-9999-0100197-00"), wantErr: "branch 9999 of bank 01 is not in the Payments NZ bank branch register"},
	{currency: "NZD", typ: "newzealand", details: d("accountNumber", "26-2600-0320871-032"), wantErr: "bank 26 is not in the Payments NZ bank branch register"},
	{currency: "PLN", typ: "polish", details: d("accountNumber", "61109010140000071219812874"), wantCountry: "PL"},
	{currency: "PLN", typ: "polish", details: d("accountNumber", "61109010140000071219812875"), wantErr: "details.accountNumber: check digits do not match (NRB"},
	iban("PLN", "PL61109010140000071219812874", ""),
	{currency: "CNY", typ: "chinese", details: d("bankCode", "LIANLIANPAY_3", "branchName", "Beijing Branch", "province", "Beijing", "city", "Beijing", "accountNumber", "6222021234567890123", "phoneNumber", "+86 10 6559 2688"), wantCountry: "CN"},
	{currency: "CNY", typ: "chinese", details: d("legalType", "BUSINESS", "bankCode", "LIANLIANPAY_3", "branchName", "Beijing Branch", "province", "Beijing", "city", "Beijing", "accountNumber", "6222021234567890123", "phoneNumber", "+86 10 6559 2688", "address", addr("CN")), wantErr: "details.businessNumber: required"},
	{currency: "CNY", typ: "chinese_card", details: d("cardNumber", "6240008631401148")},
	{currency: "CNY", typ: "chinese_card", details: d("cardNumber", "6240008631401149"), wantErr: "details.cardNumber: check digit does not match (Luhn"},

	// Local formats without check digits: shape, length and bank list.
	{currency: "BDT", typ: "bangladesh", details: d("bankCode", "015", "branchCode", "015261726", "accountNumber", "0071220012345"), wantCountry: "BD"},
	{currency: "BDT", typ: "bangladesh", details: d("bankCode", "999", "branchCode", "015261726", "accountNumber", "0071220012345"), wantErr: `details.bankCode: "999" is not one of the`},
	{currency: "CAD", typ: "canadian", details: d("institutionNumber", "006", "transitNumber", "04841", "accountNumber", "1234567", "accountType", "CHECKING"), wantCountry: "CA"},
	{currency: "CAD", typ: "canadian", details: d("institutionNumber", "06", "transitNumber", "04841", "accountNumber", "1234567", "accountType", "CHECKING"), wantErr: "details.institutionNumber: must be at least 3"},
	{currency: "COP", typ: "colombia", details: d("bankCode", "COLOCOBM", "accountNumber", "12345678", "accountType", "SAVINGS", "phoneNumber", "+57 601 555 5555")},
	{currency: "COP", typ: "colombia", details: d("bankCode", "COLOCOBM", "accountNumber", "12345678", "accountType", "CHECKING", "phoneNumber", "+57 601 555 5555"), wantErr: "details.accountType: must be one of CURRENT, SAVINGS"},
	{currency: "EGP", typ: "egypt_local", details: d("bankCode", "NBEGEGCX", "accountNumber", "123456789")},
	{currency: "EGP", typ: "egypt_local", details: d("bankCode", "NBEGEGCX", "accountNumber", "12345"), wantErr: "details.accountNumber: must be at least 6"},
	iban("EGP", "EG380019000500000000263180002", ""),
	{currency: "GHS", typ: "ghana", details: d("bankCode", "040100", "accountNumber", "0011234567890")},
	{currency: "GHS", typ: "ghana", details: d("bankCode", "040100", "accountNumber", "0011-234567890"), wantErr: "details.accountNumber: does not match"},
	{currency: "HKD", typ: "hongkong", details: d("bankCode", "004", "accountNumber", "004-231289-112"), wantCountry: "HK"},
	{currency: "HKD", typ: "hongkong", details: d("bankCode", "004", "accountNumber", "4231289112X"), wantErr: "details.accountNumber: does not match"},
	{currency: "IDR", typ: "indonesian", details: d("bankCode", "140397", "accountNumber", "1234567890")},
	{currency: "IDR", typ: "indonesian", details: d("bankCode", "140397", "accountNumber", "1234567"), wantErr: "details.accountNumber: must be at least 8"},
	{currency: "ILS", typ: "israeli_local", details: d("bankCode", "012", "branchCode", "600", "accountNumber", "123456")},
	{currency: "ILS", typ: "israeli_local", details: d("bankCode", "012", "branchCode", "6000", "accountNumber", "123456"), wantErr: "details.branchCode: must be at most 3"},
	iban("ILS", "IL620108000000099999999", ""), iban("ILS", "PS92PALS000000000400123456702", ""),
	{currency: "JPY", typ: "japanese", details: d("bankCode", "0001", "branchCode", "001", "accountType", "CURRENT", "accountNumber", "1234567"), wantCountry: "JP"},
	{currency: "JPY", typ: "japanese", details: d("bankCode", "0002", "branchCode", "001", "accountType", "CURRENT", "accountNumber", "1234567"), wantErr: `details.bankCode: "0002" is not one of the 1146 values`},
	{currency: "KES", typ: "kenya_local", details: d("bankCode", "01", "accountNumber", "1234567890123")},
	{currency: "KES", typ: "kenya_mobile", details: d("accountNumber", "254712345678")},
	{currency: "KES", typ: "kenya_mobile", details: d("accountNumber", "0712345678"), wantErr: "details.accountNumber: must be at least 12"},
	{currency: "KRW", typ: "south_korean_paygate", details: d("bankCode", "KUKMIN_004", "accountNumber", "1254693521232")},
	{currency: "KRW", typ: "south_korean_paygate", details: d("bankCode", "004", "accountNumber", "1254693521232"), wantErr: "details.bankCode"},
	{currency: "LKR", typ: "srilanka", details: d("bankCode", "7010", "branchCode", "001", "accountNumber", "5060011118")},
	{currency: "LKR", typ: "srilanka", details: d("bankCode", "7010", "accountNumber", "5060011118"), wantErr: "details.branchCode: required"},
	{currency: "MAD", typ: "morocco", details: d("bankCode", "BCMAMAMC", "accountNumber", "007780000123456789012345")},
	{currency: "MAD", typ: "morocco", details: d("bankCode", "BCMAMAMC", "accountNumber", "00778000012345678901234"), wantErr: "details.accountNumber: must be at least 24"},
	{currency: "MYR", typ: "malaysian", details: d("swiftCode", "MBBEMYKL", "accountNumber", "159012938613")},
	{currency: "MYR", typ: "malaysian", details: d("swiftCode", "MBBEMYKLXXX", "accountNumber", "159012938613"), wantErr: "details.swiftCode"},
	{currency: "NGN", typ: "nigeria", details: d("bankCode", "058", "accountNumber", "0123456789")},
	{currency: "NGN", typ: "nigeria", details: d("bankCode", "058", "accountNumber", "012345678A"), wantErr: "details.accountNumber: does not match"},
	{currency: "NPR", typ: "nepal", details: d("bankCode", "NARBNPKA", "accountNumber", "00101234567")},
	{currency: "NPR", typ: "nepal", details: d("bankCode", "NARBNPKA", "accountNumber", "0010-1234567"), wantErr: "details.accountNumber: does not match"},
	{currency: "PEN", typ: "peru", details: d("bankCode", "BCPL", "accountNumber", "191-12345678-0-12", "accountType", "SAVINGS", "idDocumentType", "DNI", "idDocumentNumber", "09740475", "phoneNumber", "+51 987654321")},
	{currency: "PEN", typ: "peru", details: d("bankCode", "BCPL", "accountNumber", "19112345678012", "accountType", "SAVINGS", "idDocumentType", "CE", "idDocumentNumber", "09740475", "phoneNumber", "+51 987654321"), wantErr: "details.idDocumentType: must be one of DNI, RUC, C_EXT, PASSP"},
	{currency: "PHP", typ: "philippines", details: d("bankCode", "BDO", "accountNumber", "001234567890"), wantCountry: "PH"},
	{currency: "PHP", typ: "philippines", details: d("bankCode", "BDO", "accountNumber", "0012345678901234567890"), wantErr: "details.accountNumber: must be at most 20"},
	{currency: "PHP", typ: "philippines", details: d("accountNumber", "001234567890"), wantErr: "details.bankCode: required"},
	{currency: "PKR", typ: "pakistan", details: d("bankCode", "HBL", "accountNumber", "9517384260")},
	{currency: "PKR", typ: "pakistan", details: d("bankCode", "HBL", "accountNumber", "95173"), wantErr: "details.accountNumber: must be at least 6"},
	iban("PKR", "PK36SCBL0000001123456702", ""),
	{currency: "SEK", typ: "sweden_local", details: d("clearingNumber", "8327", "accountNumber", "9354520")},
	{currency: "SEK", typ: "sweden_local", details: d("clearingNumber", "832", "accountNumber", "9354520"), wantErr: "details.clearingNumber: must be at least 4"},
	iban("SEK", "SE4550000000058398257466", ""),
	{currency: "SGD", typ: "singapore", details: d("bankCode", "7171", "accountNumber", "012-345678-9")},
	{currency: "SGD", typ: "singapore", details: d("bankCode", "7171", "accountNumber", "-0123456789"), wantErr: "details.accountNumber: does not match"},
	{currency: "THB", typ: "thailand", details: d("bankCode", "002", "accountNumber", "9517384260")},
	{currency: "THB", typ: "thailand", details: d("bankCode", "002", "accountNumber", "h9517384260"), wantErr: "details.accountNumber: does not match"},
	{currency: "TZS", typ: "tanzania_local", details: d("swiftCode", "SCBLTZTX", "branchCode", "001", "accountNumber", "0123456789012"), wantCountry: "TZ"},
	{currency: "TZS", typ: "tanzania_local", details: d("swiftCode", "SCBLTZTX", "branchCode", "1", "accountNumber", "0123456789012"), wantErr: "details.branchCode: must be at least 2"},
	{currency: "UGX", typ: "uganda_local", details: d("swiftCode", "SBICUGKX", "branchCode", "001", "accountNumber", "9030012345678")},
	{currency: "UGX", typ: "uganda_local", details: d("swiftCode", "SBICUGKX", "branchCode", "001", "accountNumber", "9030-012345678"), wantErr: "details.accountNumber: does not match"},
	{currency: "VND", typ: "vietname_earthport", details: d("swiftCode", "BFTVVNVX", "accountNumber", "0011001234567")},
	{currency: "VND", typ: "vietname_earthport", details: d("swiftCode", "BFTVVNVX", "branchCode", "Hanoi", "accountNumber", "0011001234567", "branchName", "Hanoi"), wantErr: "details.branchName: unknown field"},
	{currency: "ZAR", typ: "southafrica", details: d("swiftCode", "SBZAZAJJ", "accountNumber", "0000000052312891")},
	{currency: "ZAR", typ: "southafrica", details: d("swiftCode", "SBZAZAJJ", "accountNumber", "000052"), wantErr: "details.accountNumber: must be at least 7"},
}

func TestVectors(t *testing.T) {
	c := Default()
	for _, v := range vectors {
		name := v.currency + "/" + v.typ
		if v.wantErr == "" {
			name += "/valid"
		} else {
			name += "/invalid"
		}
		t.Run(name, func(t *testing.T) {
			got, err := c.Validate(v.currency, v.typ, v.details)
			if v.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate(%v) = %v, want valid", v.details, err)
				}
				if v.wantCountry != "" && got.Country != v.wantCountry {
					t.Errorf("Country = %q, want %q", got.Country, v.wantCountry)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%v) = valid, want an error containing %q", v.details, v.wantErr)
			}
			if apierror.CodeOf(err) != apierror.Invalid {
				t.Errorf("code = %s, want invalid", apierror.CodeOf(err))
			}
			if !strings.Contains(err.Error(), v.wantErr) {
				t.Errorf("error %q does not contain %q", err, v.wantErr)
			}
		})
	}
}

// TestVectorsCoverEveryCurrency fails when a currency of the catalog lacks a valid vector
// for one of its account types, or lacks an invalid vector.
func TestVectorsCoverEveryCurrency(t *testing.T) {
	c := Default()
	valid := map[string]bool{}
	invalid := map[string]bool{}
	for _, v := range vectors {
		if v.wantErr == "" {
			valid[v.currency+"/"+v.typ] = true
		} else {
			invalid[v.currency] = true
		}
	}
	for _, cur := range c.Currencies() {
		ats, err := c.Requirements(cur)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range ats {
			if !valid[cur+"/"+at.Type] {
				t.Errorf("%s: no valid vector for type %s", cur, at.Type)
			}
		}
		if !invalid[cur] {
			t.Errorf("%s: no invalid vector", cur)
		}
	}
}
