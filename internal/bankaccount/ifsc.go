package bankaccount

import (
	"fmt"
	"io/fs"
)

// readIFSCBanks reads the 4-letter bank codes of Razorpay's IFSC list
// (data/in-ifsc-banks.csv, derived by gen from IFSC.json).
func readIFSCBanks(fsys fs.FS) (map[string]bool, error) {
	vals, err := readValueList(fsys, ifscBanksFile)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(vals))
	for _, v := range vals {
		if len(v.Key) != 4 {
			return nil, fmt.Errorf("%s: bank code %q is not 4 characters", ifscBanksFile, v.Key)
		}
		m[v.Key] = true
	}
	return m, nil
}

// checkIFSCField checks an IFSC (4-letter bank, "0", 6-character branch; the pattern
// has checked the shape) against the banks of the RBI's list as Razorpay publishes it.
// Branches are not checked: new ones open every week and the list would go stale.
func checkIFSCField(c *Catalog, _ *offer, _ map[string]string, v string) (string, error) {
	if len(v) != 11 || v[4] != '0' {
		return "", fmt.Errorf("must be 4 letters, 0, then 6 letters or digits")
	}
	if !c.ifscBanks[v[:4]] {
		return "", fmt.Errorf("bank code %s (characters 1-4) is not a bank in the RBI IFSC list", v[:4])
	}
	return "IN", nil
}
