package apikey

import (
	"strings"
	"testing"
)

func TestNewKeyRoundTrip(t *testing.T) {
	k, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.Full, "svc_live_"+k.ID+"_") {
		t.Fatalf("key %q does not start with svc_live_<id>_", k.Full)
	}
	if strings.Contains(k.ID, "_") {
		t.Fatalf("key id %q contains an underscore", k.ID)
	}
	cred, id, full := ParseAuthorization("Bearer " + k.Full)
	if cred != WellFormed || id != k.ID || full != k.Full {
		t.Fatalf("ParseAuthorization = %v %q %q", cred, id, full)
	}
	if !Matches(k.Hash, k.Full) {
		t.Fatal("a key does not match its own hash")
	}
	other, _ := New()
	if Matches(k.Hash, other.Full) {
		t.Fatal("a key matches another key's hash")
	}
	if strings.Contains(k.Hash, k.Full[len(Prefix)+KeyIDLen+1:]) {
		t.Fatal("the hash contains the secret")
	}
}

func TestParseAuthorization(t *testing.T) {
	good := "svc_live_0123456789abcdef_" + strings.Repeat("ab", 32)
	cases := []struct {
		header string
		want   Credential
	}{
		{"", Missing},
		{"Basic dXNlcjpwYXNz", Missing},
		{"Bearer", Missing},
		{"Bearer " + good, WellFormed},
		{"bearer " + good, WellFormed},
		{"Bearer not-a-valid-key", Malformed},
		{"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", Malformed},
		{"Bearer svc_live_0123456789abcdef", Malformed},
		{"Bearer svc_live__" + strings.Repeat("ab", 32), Malformed},
		{"Bearer svc_live_0123456789abcdef_", Malformed},
		{"Bearer svc_test_0123456789abcdef_" + strings.Repeat("ab", 32), Malformed},
		{"Bearer " + good + "_extra", Malformed},
		{"Bearer svc_live_01234567-9abcdef_" + strings.Repeat("ab", 32), Malformed},
		// right form, not a length we issue: looked up (and unknown), not malformed
		{"Bearer svc_live_0123456789ABCDEF_" + strings.Repeat("ab", 32), WellFormed},
		{"Bearer svc_live_0123456789abcdef_" + strings.Repeat("ab", 16), WellFormed},
	}
	for _, tc := range cases {
		if got, _, _ := ParseAuthorization(tc.header); got != tc.want {
			t.Errorf("ParseAuthorization(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{"", "Bearer ", "Bearer svc_live_0123456789abcdef_" + strings.Repeat("0", 64), "Basic x", "Bearer a.b.c", "Bearer svc_live__"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		cred, id, full := ParseAuthorization(header)
		switch cred {
		case WellFormed:
			if id == "" || strings.Contains(id, "_") || !strings.HasPrefix(full, Prefix+id+"_") {
				t.Fatalf("well-formed %q gave id %q full %q", header, id, full)
			}
			if again, ok := ParseKey(full); !ok || again != id {
				t.Fatalf("ParseKey(%q) disagrees: %q %v", full, again, ok)
			}
		default:
			if id != "" || full != "" {
				t.Fatalf("%v credential %q returned id %q", cred, header, id)
			}
		}
	})
}

func BenchmarkMatches(b *testing.B) {
	k, _ := New()
	b.ReportAllocs()
	for b.Loop() {
		Matches(k.Hash, k.Full)
	}
}

// TestMatchesAllocatesNothing: every request checks its key's hash.
func TestMatchesAllocatesNothing(t *testing.T) {
	k, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if !Matches(k.Hash, k.Full) || Matches(k.Hash, k.Full+"0") {
		t.Fatal("Matches does not tell the key")
	}
	long := Prefix + strings.Repeat("a", maxIDLen) + "_" + strings.Repeat("b", maxSecretLen+1)
	if !Matches(Hash(long), long) {
		t.Fatal("Matches does not tell a key past the longest it is asked of")
	}
	if n := testing.AllocsPerRun(100, func() { Matches(k.Hash, k.Full) }); n != 0 {
		t.Errorf("Matches: %.1f allocations, want none", n)
	}
}
