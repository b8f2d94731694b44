package hostport

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	if err := Check("smtp.example.com:587"); err != nil {
		t.Error(err)
	}
	for addr, want := range map[string]string{
		"smtp.example.com": "is not host:port",
		":587":             "has no host",
		"h:0":              `port "0" is not a number from 1 to 65535`,
		"h:65536":          `port "65536"`,
		"h:smtp":           `port "smtp"`,
	} {
		if err := Check(addr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", addr, err, want)
		}
	}
}
