package devenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	chainconfig "github.com/stablepay/payout-operator/internal/chain/config"
	"github.com/stablepay/payout-operator/internal/chain/depositkey"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/internal/dev/refdata"
	"github.com/stablepay/payout-operator/internal/dev/simbank"
	"github.com/stablepay/payout-operator/internal/dev/simkyc"
	"github.com/stablepay/payout-operator/internal/dev/smtpsink"
	"github.com/stablepay/payout-operator/internal/freeport"
)

// The dev services beside the control plane and the chains: the simulated bank, the SMTP sink,
// and the key material and chain configuration payoutd reads.

// devPlatformAddress is the fixed v2 deposit address of every dev token: anvil's default account
// 3, so a developer holds its key (anvil's well-known mnemonic) and can move what lands there.
const devPlatformAddress = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"

// devTreasury is every dev network's treasury, where the sweeper moves deposits: anvil's default
// account 4. devSweeperGasKey is the sweeper's gas wallet: anvil's default account 5 (0x9965...),
// funded with native gas at genesis. Both are public dev keys, never to be used on a real chain.
const (
	devTreasury      = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"
	devSweeperGasKey = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba"
)

// DevTreasury is the treasury address of every dev network.
func DevTreasury() string { return devTreasury }

// DevPlatformAddress is the fixed v2 deposit address of the dev chains' USDC.
func DevPlatformAddress() string { return devPlatformAddress }

// devBankProfile is the simulated bank's profile id the dev payoutd pays from.
const devBankProfile = 1

// services are the dev services of one run.
type services struct {
	bank *simbank.Server
	// bankToken authenticates payoutd at the bank; fresh for every run.
	bankToken string
	mail      *smtpsink.Sink
	mailDir   string
	// refs serves the embedded sanctions release and rate snapshot to payoutd's refreshers.
	refs *refdata.Server
	// chainConfig is the payoutd chain configuration file.
	chainConfig string
	// kycSiteURL is the wallet verification site's origin (payoutd serves it on that address);
	// linkKey signs its links, vendorSecret the simulated KYC vendor's callbacks: fresh every run.
	kycSiteURL, linkKey, vendorSecret string
	vendor                            *simkyc.Server
	// gasKey is the file of the sweeper's gas wallet key.
	gasKey string
}

func (s *services) stop() {
	if s.bank != nil {
		_ = s.bank.Close()
	}
	if s.mail != nil {
		_ = s.mail.Close()
	}
	if s.refs != nil {
		_ = s.refs.Close()
	}
	if s.vendor != nil {
		_ = s.vendor.Close()
	}
}

// startServices starts the bank (its ledger kept in <dir>/bank across runs), the SMTP sink
// (messages in <dir>/mail) and the reference data server, and writes the keys and the chain configuration of the chains.
func startServices(dir string, chains *devchain.Set) (*services, error) {
	s := &services{mailDir: filepath.Join(dir, "mail")}
	var err error
	s.bankToken, err = randomToken()
	if err != nil {
		return nil, err
	}
	if s.bank, err = simbank.Start(simbank.Options{Addr: "127.0.0.1:0", Dir: filepath.Join(dir, "bank"), Token: s.bankToken}); err != nil {
		return nil, fmt.Errorf("the simulated bank: %w", err)
	}
	if s.mail, err = smtpsink.Start(smtpsink.Options{Addr: "127.0.0.1:0", Dir: s.mailDir}); err != nil {
		s.stop()
		return nil, fmt.Errorf("the SMTP sink: %w", err)
	}
	if s.refs, err = refdata.Start("127.0.0.1:0"); err != nil {
		s.stop()
		return nil, fmt.Errorf("the reference data server: %w", err)
	}
	if s.chainConfig, err = WriteChainConfig(dir, chains); err != nil {
		s.stop()
		return nil, err
	}
	if err := s.startKYC(); err != nil {
		s.stop()
		return nil, err
	}
	s.gasKey = filepath.Join(dir, "keys", "sweeper-gas-key")
	if err := writeAtomic(s.gasKey, []byte(devSweeperGasKey+"\n"), 0o600); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// payoutdArgs are payoutd's flags for the services.
func (s *services) payoutdArgs() []string {
	return []string{
		"--chains-config", s.chainConfig,
		"--fiat-url", s.bank.URL(),
		"--fiat-profile-id", strconv.Itoa(devBankProfile),
		"--fiat-provider-name", "simbank",
		"--smtp-addr", s.mail.Addr(),
		"--smtp-tls", "none",
		"--smtp-from", "Payouts <payouts@payout.localhost>",
		// The project's own copies of the reference data, through the refresh paths of a
		// deployment. The embedded sanctions release is from 2023: its age is not limited here
		// (CONTRACT.md: the local run screens against it); the rate snapshot is served fresh
		// at every poll, so quotes never count it stale.
		"--sanctions-url", s.refs.SanctionsURL(),
		"--sanctions-max-age", "0",
		"--rates-url", s.refs.RatesURL(),
		"--kyc-site-bind-address", strings.TrimPrefix(s.kycSiteURL, "http://"),
		"--kyc-site-url", s.kycSiteURL,
		"--kyc-vendor-url", s.vendor.URL(),
	}
}

// startKYC picks the wallet verification site's address and starts the simulated KYC vendor
// that calls it back.
func (s *services) startKYC() error {
	addr, err := freeport.Loopback()
	if err != nil {
		return err
	}
	s.kycSiteURL = "http://" + addr
	if s.linkKey, err = randomToken(); err != nil {
		return err
	}
	if s.vendorSecret, err = randomToken(); err != nil {
		return err
	}
	s.vendor, err = simkyc.Start(simkyc.Options{Addr: "127.0.0.1:0", CallbackURL: s.kycSiteURL + "/vendor/callback", Secret: []byte(s.vendorSecret)})
	if err != nil {
		return fmt.Errorf("the simulated KYC vendor: %w", err)
	}
	return nil
}

// sweeperArgs are the flags of the dev sweeper (payoutd --sweeper): the same chain configuration
// (its xprv and the treasuries), its gas wallet, and batches that go within seconds of a
// deposit becoming due, so that the README walk-through's deposit is swept while one watches.
func (s *services) sweeperArgs() []string {
	return []string{"--sweeper", "--controllers=false", "--api=false",
		"--chains-config", s.chainConfig, "--sweeper-gas-key-file", s.gasKey,
		"--sweep-max-age", "5s", "--sweep-interval", "2s"}
}

// payoutdEnv is payoutd's environment for the services: the secrets stay out of argv.
func (s *services) payoutdEnv() []string {
	return []string{"PAYOUT_FIAT_TOKEN=" + s.bankToken, "PAYOUT_KYC_LINK_KEY=" + s.linkKey, "PAYOUT_KYC_VENDOR_SECRET=" + s.vendorSecret}
}

// WriteChainConfig writes payoutd's chain configuration of the dev chains into dir, with the
// refund wallet's key and the deposit key in files beside it (mode 0600), and returns its path.
// Tests that run payoutd use it too.
func WriteChainConfig(dir string, chains *devchain.Set) (string, error) {
	keys := filepath.Join(dir, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		return "", err
	}
	xprv, xpub, err := depositkey.EnsureDevKey(keys)
	if err != nil {
		return "", fmt.Errorf("the dev deposit key: %w", err)
	}
	refundKey := filepath.Join(keys, "refund-key")
	if err := writeAtomic(refundKey, []byte(hexutil.Encode(crypto.FromECDSA(chains.RefundKey))+"\n"), 0o600); err != nil {
		return "", err
	}
	cfg := chainConfig(chains, refundKey, xpub, xprv)
	if err := cfg.Validate(); err != nil {
		return "", fmt.Errorf("the dev chain configuration: %w", err)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "chains.yaml")
	header := "# written by `make run` for its payoutd; the format is config/samples/chains.yaml\n"
	return path, writeAtomic(path, append([]byte(header), data...), 0o600)
}

// chainConfig is the chain configuration of the dev chains: every network watched at the dev
// depth, its tokens, the fixed v2 address of USDC, the refund wallet on base and the deposit key.
func chainConfig(chains *devchain.Set, refundKeyFile, xpubFile, xprvFile string) *chainconfig.Config {
	cfg := &chainconfig.Config{
		Networks: map[payoutv1.Network]*chainconfig.Network{},
		Refund: &chainconfig.Refund{Network: payoutv1.NetworkBase, Token: payoutv1.TokenUSDC,
			Key: chainconfig.KeySource{File: refundKeyFile}},
		DepositKey: &chainconfig.DepositKey{XPub: chainconfig.KeySource{File: xpubFile}, XPrv: &chainconfig.KeySource{File: xprvFile}},
	}
	for name, c := range chains.Chains {
		n := &chainconfig.Network{
			RPC: []string{c.RPCURL}, ChainID: int64(c.ChainID), Confirmations: chainconfig.Depth(chains.Confirmations),
			// a quarter block: a deposit is recorded within ~250 ms of reaching depth (a 1 s poll
			// takes up to a second; see docs/benchmarks.md)
			PollInterval: metav1.Duration{Duration: 250 * time.Millisecond},
			Tokens:       map[payoutv1.Token]*chainconfig.Token{},
			Treasury:     devTreasury,
		}
		for token, addr := range c.Tokens {
			t := &chainconfig.Token{Contract: addr.Hex()}
			if token == devchain.USDC {
				t.PlatformAddress = devPlatformAddress
			}
			n.Tokens[payoutv1.Token(token)] = t
		}
		cfg.Networks[payoutv1.Network(name)] = n
	}
	return cfg
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
