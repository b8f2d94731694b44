package flagfile

import (
	"flag"
	"strings"
	"testing"
	"time"
)

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func flags() (*flag.FlagSet, *string, *time.Duration, *bool, *int, *repeated) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	url := fs.String("fiat-url", "", "")
	expiry := fs.Duration("transfer-expiry", time.Hour, "")
	elect := fs.Bool("leader-elect", false, "")
	workers := fs.Int("transfer-workers", 8, "")
	rpc := &repeated{}
	fs.Var(rpc, "chain-rpc", "")
	fs.String("config", "", "")
	return fs, url, expiry, elect, workers, rpc
}

func TestApplyNestedListsAndCommandLineWins(t *testing.T) {
	fs, url, expiry, elect, workers, rpc := flags()
	doc := `
fiat:
  url: https://bank.example
transfer-expiry: 12h
transfer-workers: 16
leader-elect: true
chain-rpc: [base=http://a, base=http://b]
`
	if err := Apply(fs, "c.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--transfer-workers", "4", "--chain-rpc", "ethereum=http://c"}); err != nil {
		t.Fatal(err)
	}
	if *url != "https://bank.example" || *expiry != 12*time.Hour || !*elect || *workers != 4 {
		t.Errorf("got url=%q expiry=%v elect=%v workers=%d", *url, *expiry, *elect, *workers)
	}
	if got := rpc.String(); got != "base=http://a,base=http://b,ethereum=http://c" {
		t.Errorf("chain-rpc = %s", got)
	}
}

func TestApplyNamesTheBadSetting(t *testing.T) {
	for doc, want := range map[string]string{
		"fiat-urll: x":                     `unknown setting "fiat-urll"`,
		"fiat: {urll: x}":                  `unknown setting "fiat-urll"`,
		"transfer-expiry: soon":            `setting "transfer-expiry": invalid value "soon"`,
		"transfer-workers: 2.5":            `setting "transfer-workers": invalid value "2.5"`,
		"leader-elect:":                    `setting "leader-elect" has no value`,
		"chain-rpc: [{base: x}]":           `setting "chain-rpc": a value is a string, number or boolean`,
		"transfer-expiry: [":               "config c.yaml",
		"--fiat-url: x":                    `a key is a flag name without dashes`,
		"fiat-urll: x\ntransfer-expiry: y": `setting "transfer-expiry"`,
	} {
		fs, _, _, _, _, _ := flags()
		err := Apply(fs, "c.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", doc, err, want)
		}
	}
}

func TestPath(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", "a.yaml"}, "a.yaml"},
		{[]string{"-config=b.yaml", "--x"}, "b.yaml"},
		{[]string{"--configx", "c"}, ""},
		{[]string{"--", "--config", "d"}, ""},
		{[]string{"--config"}, ""},
	} {
		if got := Path(c.args, "config"); got != c.want {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
}
