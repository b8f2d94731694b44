package browser_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/stablepay/payout-operator/internal/bankaccount"
	"github.com/stablepay/payout-operator/test/browser"
)

// must fails t on a browser step's error.
func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval runs a script on the page and returns its value.
func eval[T any](t *testing.T, page context.Context, script string) T {
	t.Helper()
	v, err := browser.Run(page, chromedp.Evaluate[T](script, chromedp.EvalAwaitPromise))
	must(t, err, script)
	return v
}

// waitTrue polls a script until it is true: the page changing by itself (a form the script
// sends on change, a status line).
func waitTrue(t *testing.T, page context.Context, script string) {
	t.Helper()
	if !waitFor(page, script) {
		t.Fatalf("still false after %s: %s", browser.Timeout, script)
	}
}

// waitFor polls a script until it is true, for browser.Timeout at most.
func waitFor(page context.Context, script string) bool {
	deadline := time.Now().Add(browser.Timeout)
	for time.Now().Before(deadline) {
		if ok, err := browser.Run(page, chromedp.Evaluate[bool](script)); err == nil && ok {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// text is the text of the element that selector finds, waiting for it.
func text(t *testing.T, page context.Context, selector string) string {
	t.Helper()
	v, err := browser.Run(page, chromedp.Text(chromedp.CSS(selector), chromedp.NodeVisible))
	must(t, err, "the text of "+selector)
	return v
}

// tabTo presses Tab until selector has the focus, as a keyboard user moves through the page;
// fails when it takes more than 40 presses (the element is not reachable by keyboard).
func tabTo(t *testing.T, page context.Context, selector string) {
	t.Helper()
	for range 40 {
		if eval[bool](t, page, fmt.Sprintf("document.activeElement !== null && document.activeElement.matches(%q)", selector)) {
			return
		}
		must(t, browser.Do(page, chromedp.KeyEvent(kb.Tab)), "Tab")
	}
	t.Fatalf("%s is not reached with Tab", selector)
}

// curlStatus is the HTTP status curl gets for GET url with the API key.
func curlStatus(t *testing.T, url, key string) string {
	t.Helper()
	out, err := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer "+key, url).Output()
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	return string(out)
}

// The start page, the sign-in through the provider's login page, a key created in the
// developer area and used with curl, the recipients pages: each page checked by axe-core.
func TestDeveloperAreaAndRecipients(t *testing.T) {
	b := browser.Start(t)
	page := b.Page(t)
	must(t, browser.Do(page, chromedp.Navigate(stack.dash), chromedp.WaitVisible(chromedp.CSS("h1"))), "the start page")
	browser.CheckAxe(t, page, "the start page")
	must(t, browser.SignIn(page, stack.dash, "alice", "alice-pw"), "sign-in")
	browser.CheckAxe(t, page, "the developer area")

	// a key: shown once, in full; the facade takes it from curl
	must(t, browser.Do(page, chromedp.Click(chromedp.CSS(`form[action="keys"] button`), chromedp.NodeVisible),
		chromedp.WaitVisible(chromedp.ID("new-key"))), "creating a key")
	key, err := browser.Run(page, chromedp.Value(chromedp.ID("new-key")))
	must(t, err, "reading the key")
	if !strings.HasPrefix(key, "svc_live_") {
		t.Fatalf("the page shows %q as the new key", key)
	}
	browser.CheckAxe(t, page, "the developer area with a new key")
	deadline := time.Now().Add(browser.Timeout)
	for code := ""; code != "200"; {
		if time.Now().After(deadline) {
			t.Fatalf("curl with the new key: %s", code)
		}
		code = curlStatus(t, stack.api+"/api/payouts/deposit-options", key)
	}
	if code := curlStatus(t, stack.api+"/api/payouts/deposit-options", key[:len(key)-2]+"xx"); code != "401" {
		t.Errorf("a key with another secret: %s, want 401", code)
	}
	// not a reload: that sends the form again, a second key
	must(t, browser.Do(page, chromedp.Navigate(stack.dash+"keys"), chromedp.WaitVisible(chromedp.CSS("table"))), "the developer area again")
	if n := eval[int](t, page, `document.querySelectorAll("#new-key").length`); n != 0 {
		t.Errorf("the key is shown again after a reload")
	}

	catalog := bankaccount.Default()
	t.Run("EUR IBAN", func(t *testing.T) {
		must(t, browser.Do(page, chromedp.Click(chromedp.CSS(`nav a[href="recipients"]`), chromedp.NodeVisible),
			chromedp.WaitVisible(chromedp.ID("currency"))), "the recipients page")
		browser.CheckAxe(t, page, "the recipients page")
		must(t, browser.Do(page, chromedp.SetValue(chromedp.ID("currency"), "EUR"),
			chromedp.Click(chromedp.CSS(`form[action="recipient"] button`)),
			chromedp.WaitVisible(chromedp.ID("d-iban"))), "a new EUR recipient")
		if typ := eval[string](t, page, `document.getElementById("type").value`); typ != "iban" {
			t.Fatalf("EUR's first type is %q", typ)
		}
		browser.CheckAxe(t, page, "the EUR recipient form")
		bad := "DE89370400440532013001"
		_, want := catalog.Validate("EUR", "iban", map[string]any{"legalType": "PRIVATE", "iban": bad})
		if want == nil {
			t.Fatal("the catalog takes the bad IBAN")
		}
		// the recipient type is a refresh-on-change field: its change event (SetValue sends one)
		// sends the form, and the fields are typed into the page that comes back
		must(t, browser.Navigates(page, chromedp.SetValue(chromedp.ID("d-legalType"), "PRIVATE")), "a person")
		must(t, browser.Do(page, chromedp.WaitVisible(chromedp.ID("d-iban")),
			chromedp.SendKeys(chromedp.ID("accountHolderName"), "Erika Mustermann"),
			chromedp.SendKeys(chromedp.ID("d-iban"), bad)), "a bad IBAN")
		must(t, browser.Navigates(page, chromedp.Click(chromedp.CSS(`button.primary`))), "saving a bad IBAN")
		if got := text(t, page, "#d-iban-error"); got != want.Error() {
			t.Errorf("beside the IBAN: %q, want the API's %q", got, want.Error())
		}
		if d := eval[string](t, page, `document.getElementById("d-iban").getAttribute("aria-describedby")`); !strings.Contains(d, "d-iban-error") {
			t.Errorf("the IBAN field is not described by its error: %q", d)
		}
		browser.CheckAxe(t, page, "the EUR form with an error")
		must(t, browser.Do(page, chromedp.SetValue(chromedp.ID("d-iban"), "DE89370400440532013000")), "the good IBAN")
		must(t, browser.Navigates(page, chromedp.Click(chromedp.CSS(`button.primary`))), "saving the good IBAN")
		must(t, browser.WaitURL(page, stack.dash+"recipients"), "back to the list")
		waitTrue(t, page, `document.body.innerText.includes("Erika Mustermann")`)
	})

	t.Run("USD ABA", func(t *testing.T) {
		must(t, browser.Do(page, chromedp.Navigate(stack.dash+"recipients"), chromedp.WaitVisible(chromedp.ID("currency")),
			chromedp.SetValue(chromedp.ID("currency"), "USD"),
			chromedp.Click(chromedp.CSS(`form[action="recipient"] button`)),
			chromedp.WaitVisible(chromedp.ID("type"))), "a new USD recipient")
		if eval[string](t, page, `document.getElementById("type").value`) != "aba" {
			// the type's change sends the form: the page comes back with ABA's fields
			eval[bool](t, page, `(() => { const s = document.getElementById("type"); s.value = "aba"; s.dispatchEvent(new Event("change", {bubbles: true})); return true })()`)
		}
		must(t, browser.Do(page, chromedp.WaitVisible(chromedp.ID("d-abartn"))), "ABA's fields")
		if l := text(t, page, `label[for="d-address-state"]`); l != "State" {
			t.Fatalf("before the country, the state's label is %q", l)
		}
		browser.CheckAxe(t, page, "the USD ABA form")
		must(t, browser.Navigates(page, chromedp.SetValue(chromedp.ID("d-legalType"), "PRIVATE")), "a person")
		must(t, browser.Do(page, chromedp.WaitVisible(chromedp.ID("d-abartn")),
			chromedp.SendKeys(chromedp.ID("accountHolderName"), "Acme Widgets Inc"),
			chromedp.SendKeys(chromedp.ID("d-abartn"), "021000021"),
			chromedp.SendKeys(chromedp.ID("d-accountNumber"), "123456789"),
			chromedp.Click(chromedp.CSS(`input[name="d.accountType"][value="CHECKING"]`)),
			chromedp.SendKeys(chromedp.ID("d-address-city"), "New York"),
			chromedp.SendKeys(chromedp.ID("d-address-postCode"), "10001"),
			chromedp.SendKeys(chromedp.ID("d-address-firstLine"), "1 Main Street")), "filling the ABA form")
		// the country is a refresh-on-change field: its change event sends the form (app.js)
		eval[bool](t, page, `(() => { const s = document.getElementById("d-address-country"); s.value = "US"; s.dispatchEvent(new Event("change", {bubbles: true})); return true })()`)
		waitTrue(t, page, `(() => { const l = document.querySelector('label[for="d-address-state"]'); return l !== null && l.textContent === "State (required)" })()`)
		if v := eval[string](t, page, `document.getElementById("d-abartn").value`); v != "021000021" {
			t.Errorf("the refresh lost the routing number: %q", v)
		}
		browser.CheckAxe(t, page, "the USD ABA form after the refresh")
		must(t, browser.Do(page, chromedp.SendKeys(chromedp.ID("d-address-state"), "NY"),
			chromedp.Click(chromedp.CSS(`button.primary`))), "saving the ABA recipient")
		if err := browser.WaitURL(page, stack.dash+"recipients"); err != nil {
			body, _ := browser.Run(page, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%v: %s", err, body)
		}
		waitTrue(t, page, `document.body.innerText.includes("Acme Widgets Inc")`)
		browser.CheckAxe(t, page, "the recipients list")
		browser.Screenshot(t, page, "dashboard-recipients.png")
	})
}

// Sign-in and a recipient's creation with the keyboard alone: Tab to move, typing, Enter.
func TestKeyboardOnly(t *testing.T) {
	b := browser.Start(t)
	page := b.Page(t)
	must(t, browser.Do(page, chromedp.Navigate(stack.dash), chromedp.WaitVisible(chromedp.CSS("h1"))), "the start page")
	tabTo(t, page, `a[href="login"]`)
	must(t, browser.Do(page, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("username"))), "Enter on Sign in")
	tabTo(t, page, "#username")
	must(t, browser.Do(page, chromedp.KeyEvent("bob")), "typing the user")
	tabTo(t, page, "#password")
	must(t, browser.Do(page, chromedp.KeyEvent("bob-pw"+kb.Enter)), "typing the password, Enter")
	must(t, browser.WaitURL(page, stack.dash+"keys"), "signed in")

	tabTo(t, page, `nav a[href="recipients"]`)
	must(t, browser.Do(page, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("currency"))), "Enter on Recipients")
	tabTo(t, page, "#currency")
	// a closed select takes the typed option's first letters (EUR), Enter sends its form
	must(t, browser.Do(page, chromedp.KeyEvent("EUR")), "choosing EUR")
	if v := eval[string](t, page, `document.getElementById("currency").value`); v != "EUR" {
		t.Fatalf("typing EUR on the currency chose %q", v)
	}
	tabTo(t, page, `form[action="recipient"] button`)
	must(t, browser.Do(page, chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("d-iban"))), "Enter on New recipient")
	tabTo(t, page, "#d-legalType")
	// the legal type refreshes the form on change: the page comes back, the focus at its top
	must(t, browser.Do(page, chromedp.KeyEvent("P")), "choosing the legal type")
	waitTrue(t, page, `document.getElementById("d-legalType") !== null && document.getElementById("d-legalType").value === "PRIVATE" && document.readyState === "complete"`)
	tabTo(t, page, "#accountHolderName")
	must(t, browser.Do(page, chromedp.KeyEvent("Keyboard User")), "typing the holder")
	tabTo(t, page, "#d-iban")
	must(t, browser.Do(page, chromedp.KeyEvent("DE89370400440532013000"+kb.Enter)), "typing the IBAN, Enter")
	must(t, browser.WaitURL(page, stack.dash+"recipients"), "saved")
	waitTrue(t, page, `document.body.innerText.includes("Keyboard User")`)
}
