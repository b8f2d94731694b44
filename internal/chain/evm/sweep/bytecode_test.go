package sweep

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The embedded delegate must be SweepDelegate.sol as the pinned solc compiles it: a fresh
// compile (hack/compile-token.sh, offline from the per-user npm cache) must give the committed
// SweepDelegate.bin and SweepDelegate.abi byte for byte. The delegate's address is the hash of
// that bytecode, so a stale file would sign authorizations for code nobody reviewed. Skipped
// under -short (it runs node for seconds) and when solc and OpenZeppelin are not cached (`make
// solc` caches them; `make test-integration` does first).
func TestEmbeddedDelegateIsCompiledSource(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test runs solc-js")
	}
	const solc, oz = "0.8.37", "4.9.6" // the Makefile's SOLC_VERSION and OPENZEPPELIN_VERSION
	cache := os.Getenv("TOOLS_CACHE")
	if cache == "" {
		home, err := os.UserCacheDir()
		if err != nil {
			t.Skip(err)
		}
		cache = filepath.Join(home, "payout-operator")
	}
	for _, pkg := range []string{"solc-" + solc + "/node_modules/solc", "@openzeppelin/contracts-" + oz + "/node_modules/@openzeppelin/contracts"} {
		if _, err := os.Stat(filepath.Join(cache, "npm", pkg, "package.json")); err != nil {
			t.Skipf("%s is not cached: run `make solc`", pkg)
		}
	}
	out := t.TempDir()
	cmd := exec.Command("../../../../hack/compile-token.sh", solc, oz, out, "SweepDelegate.sol", "SweepDelegate")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling SweepDelegate.sol: %v\n%s", err, b)
	}
	for name, embedded := range map[string]string{"SweepDelegate.bin": delegateBin, "SweepDelegate.abi": delegateABIJSON} {
		fresh, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(fresh) != embedded {
			t.Errorf("the embedded %s differs from a fresh compile of SweepDelegate.sol: run `make sweep-delegate`", name)
		}
	}
}
