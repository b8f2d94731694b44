// Package browser drives Debian's Chromium (make chromium) through the DevTools protocol
// (chromedp) for the tests of the pages in a real browser: the dashboard and the wallet
// verification site. Start starts one headless browser per test; Page opens a tab in a
// browser context of its own (its own cookies, as a second person's browser); SignIn goes
// through the OpenID Provider's login page; Axe runs axe-core (make axe-core) on the page.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser is a running headless Chromium.
type Browser struct {
	ctx context.Context
}

// Chromium is where the browser is looked for: $PAYOUT_CHROMIUM, else Debian's.
func Chromium() string {
	if p := os.Getenv("PAYOUT_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// Start starts a headless Chromium for t, stopped when t ends. Under -short the test skips;
// without the browser it fails, saying how to install it.
func Start(t testing.TB) *Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the browser tests run a real Chromium")
	}
	bin := Chromium()
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("no Chromium at %s (%v): run make chromium (Debian's package, installed as root)", bin, err)
	}
	// the flags that work on a closed network: without the background-networking ones the
	// browser's own connections to Google's hosts fail at every start
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting Chromium: %v", err)
	}
	return &Browser{ctx: ctx}
}

// Page opens a tab in a new browser context: its cookies and storage are its own. The tab is
// closed when t ends.
func (b *Browser) Page(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

// Timeout bounds one step of a test (a navigation, a wait for an element).
const Timeout = 20 * time.Second

// Do runs steps on the page, each run bounded by Timeout.
func Do(page context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(page, Timeout)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// Navigates runs steps that end in a navigation (a click on a link or on a form's button, or a
// chromedp.SetValue on a refresh-on-change field: SetValue sends a change event, and app.js
// sends the form) and returns once the new document has loaded (chromedp.RunResponse), bounded
// by Timeout. An action that follows such a step in the same Do can otherwise query the
// document being replaced and fail with "Could not find node with given id" (seen in CI).
func Navigates(page context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(page, Timeout)
	defer cancel()
	_, err := chromedp.RunResponse(ctx, steps...)
	return err
}

// Run runs one action that returns a value, bounded by Timeout.
func Run[T any](page context.Context, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(page, Timeout)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// SignIn signs in to the dashboard at dashURL (ending in /dashboard/) as a person would: the
// start page's sign-in link, the provider's login form (typed), back to the developer area.
func SignIn(page context.Context, dashURL, user, password string) error {
	if err := Do(page, chromedp.Navigate(dashURL),
		chromedp.Click(chromedp.CSS(`a[href="login"]`), chromedp.NodeVisible),
		chromedp.SendKeys(chromedp.ID("username"), user, chromedp.NodeVisible),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Submit(chromedp.ID("password"))); err != nil {
		return fmt.Errorf("signing in as %s: %w", user, err)
	}
	return WaitURL(page, dashURL+"keys")
}

// WaitURL waits until the page's address is want (the redirects after a form have run).
func WaitURL(page context.Context, want string) error {
	deadline := time.Now().Add(Timeout)
	var at string
	for time.Now().Before(deadline) {
		loc, err := Run(page, chromedp.Location())
		if err == nil && loc == want {
			// and the document is there
			return Do(page, chromedp.WaitReady(chromedp.CSS("body")))
		}
		at = loc
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the page is at %s, not %s", at, want)
}

// Violation is a rule of axe-core that the page breaks.
type Violation struct {
	ID, Impact, Help string
	Nodes            []struct {
		Target []any `json:"target"`
		HTML   string
	}
}

func (v Violation) String() string {
	var where []string
	for _, n := range v.Nodes {
		where = append(where, n.HTML)
	}
	return fmt.Sprintf("%s (%s): %s: %s", v.ID, v.Impact, v.Help, strings.Join(where, " | "))
}

// AxeScript is axe-core's axe.min.js: $PAYOUT_AXE_JS, else bin/axe.min.js of the module
// (make axe-core links it there).
func AxeScript() (string, error) {
	p := os.Getenv("PAYOUT_AXE_JS")
	if p == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", err
		}
		p = filepath.Join(root, "bin", "axe.min.js")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("axe-core: %w (run make axe-core)", err)
	}
	return string(data), nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

// Axe runs axe-core on the page as it is now and returns its serious and critical violations.
// The script is evaluated through the protocol, which the pages' CSP does not govern: the
// pages themselves load no script but their own.
func Axe(page context.Context) ([]Violation, error) {
	script, err := AxeScript()
	if err != nil {
		return nil, err
	}
	if _, err := Run(page, chromedp.Evaluate[chromedp.Void](script)); err != nil {
		return nil, fmt.Errorf("loading axe-core: %w", err)
	}
	raw, err := Run(page, chromedp.Evaluate[string](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("running axe-core: %w", err)
	}
	var all []Violation
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		return nil, err
	}
	var bad []Violation
	for _, v := range all {
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, v)
		}
	}
	return bad, nil
}

// CheckAxe fails t when axe-core finds a serious or critical violation on the page.
func CheckAxe(t testing.TB, page context.Context, what string) {
	t.Helper()
	bad, err := Axe(page)
	if err != nil {
		t.Fatalf("axe-core on %s: %v", what, err)
	}
	for _, v := range bad {
		t.Errorf("axe-core on %s: %s", what, v)
	}
}

// Screenshot writes a PNG of the whole page to $PAYOUT_SCREENSHOTS/name when that is set (the
// README's pictures: PAYOUT_SCREENSHOTS=docs/img, relative to the module), and nothing
// otherwise.
func Screenshot(t testing.TB, page context.Context, name string) {
	t.Helper()
	dir := os.Getenv("PAYOUT_SCREENSHOTS")
	if dir == "" {
		return
	}
	if !filepath.IsAbs(dir) {
		// relative to the module, not to the test's package directory
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, dir)
	}
	// the whole page, not the window: the transfer page's status is below the fold
	png, err := Run(page, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
