package token

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The generated bindings embed the ABI and bytecode they were generated from: they must be the
// committed StableToken.abi and StableToken.bin (`make bindings` after `make token`).
func TestBindingsMatchCompiledToken(t *testing.T) {
	bin, err := os.ReadFile("StableToken.bin")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := StableTokenMetaData.Bin, "0x"+strings.TrimSpace(string(bin)); got != want {
		t.Errorf("stabletoken.go's bytecode differs from StableToken.bin: run `make bindings`")
	}
	abiJSON, err := os.ReadFile("StableToken.abi")
	if err != nil {
		t.Fatal(err)
	}
	var committed, embedded bytes.Buffer
	if err := json.Compact(&committed, abiJSON); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&embedded, []byte(StableTokenMetaData.ABI)); err != nil {
		t.Fatal(err)
	}
	if committed.String() != embedded.String() {
		t.Errorf("stabletoken.go's ABI differs from StableToken.abi: run `make bindings`")
	}
	if _, err := StableTokenMetaData.ParseABI(); err != nil {
		t.Fatal(err)
	}
}
