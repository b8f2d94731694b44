package kycsite

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestLinkTokens(t *testing.T) {
	now := time.Unix(1_795_669_200, 0)
	tok := IssueLink(linkKey, "acme", now.Add(time.Hour))
	if got, err := ReadLink(linkKey, tok, now); err != nil || got != "acme" {
		t.Fatalf("read %q, %v", got, err)
	}
	parts := strings.Split(tok, ".")
	other := base64.RawURLEncoding.EncodeToString([]byte("evil")) + "." + parts[1] + "." + parts[2]
	later := parts[0] + "." + "9999999999" + "." + parts[2]
	for name, bad := range map[string]string{
		"another account":    other,
		"a later expiry":     later,
		"another key":        IssueLink([]byte(strings.Repeat("k", 32)), "acme", now.Add(time.Hour)),
		"a session as link":  issueSession(linkKey, "acme", "0x8ba1f109551bD432803012645Ac136ddd64DBA72", now.Add(time.Hour)),
		"empty":              "",
		"no signature":       parts[0] + "." + parts[1],
		"an expired link":    IssueLink(linkKey, "acme", now),
		"a truncated digest": tok[:len(tok)-2],
	} {
		if got, err := ReadLink(linkKey, bad, now); err == nil {
			t.Errorf("%s: read as %q", name, got)
		}
	}
	if _, err := ReadLink(linkKey, IssueLink(linkKey, "acme", now), now); err != errLinkExpired {
		t.Errorf("an expired link: %v", err)
	}
}
