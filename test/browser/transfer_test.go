package browser_test

import (
	"context"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/browser"
)

// A v1 transfer on the dashboard's pages, on the whole service: a recipient, the quote with its
// fees, the transfer's page with the address, the exact amount and the QR code; the deposit
// sent on anvil, and the page's status reaching completed by itself, in the same document;
// the transfers list; another account's user gets 404 on its URLs. axe-core on each page.
//
// Pages are opened by address (chromedp.Navigate waits for their load), and every action that
// sends a form (a click on its button, a refresh-on-change field's change) is run by
// browser.Navigates, which returns once the next document has loaded.
func TestTransferPage(t *testing.T) {
	p := startPayoutd(t)
	b := browser.Start(t)
	page := b.Page(t)
	must(t, browser.SignIn(page, p.dash, "carol", "carol-pw"), "sign-in")

	must(t, browser.Do(page, chromedp.Navigate(p.dash+"recipients"),
		chromedp.WaitVisible(chromedp.ID("currency")), chromedp.SetValue(chromedp.ID("currency"), "EUR")), "the recipients page")
	must(t, browser.Navigates(page, chromedp.Click(chromedp.CSS(`form[action="recipient"] button`))), "the EUR recipient form")
	// the recipient type is a refresh-on-change field: its change event (SetValue sends one)
	// sends the form, and the fields are typed into the page that comes back
	must(t, browser.Navigates(page, chromedp.SetValue(chromedp.ID("d-legalType"), "PRIVATE")), "a person")
	must(t, browser.Do(page, chromedp.WaitVisible(chromedp.ID("d-iban")),
		chromedp.SendKeys(chromedp.ID("accountHolderName"), "Erika Mustermann"),
		chromedp.SendKeys(chromedp.ID("d-iban"), "DE89370400440532013000")), "an EUR recipient's details")
	must(t, browser.Navigates(page, chromedp.Click(chromedp.CSS(`button.primary`))), "an EUR recipient")
	must(t, browser.WaitURL(page, p.dash+"recipients"), "back to the recipients")

	// the quote: the recipient, the amount, USDC on base, v1
	must(t, browser.Do(page, chromedp.Navigate(p.dash+"transfer-new"),
		chromedp.WaitVisible(chromedp.ID("recipientId"))), "the new transfer page")
	browser.CheckAxe(t, page, "the new transfer page")
	rid := eval[string](t, page, `[...document.querySelectorAll("#recipientId option")].find(o => o.textContent.startsWith("Erika Mustermann")).value`)
	if eval[bool](t, page, `document.querySelector('#option option[value="usdc/base"]').disabled`) {
		t.Fatal("USDC on base is offered as unavailable")
	}
	must(t, browser.Do(page, chromedp.SetValue(chromedp.ID("recipientId"), rid),
		chromedp.SendKeys(chromedp.ID("amount"), "12.50"), chromedp.SetValue(chromedp.ID("option"), "usdc/base"),
		chromedp.Click(chromedp.ID("method-v1"))), "the quote's fields")
	must(t, browser.Navigates(page, chromedp.Click(chromedp.ID("get-quote"))), "the quote")
	must(t, browser.Do(page, chromedp.WaitVisible(chromedp.ID("quote"))), "the quote shown")
	if got := text(t, page, "#quote-source-amount"); got != "12.50 USD" {
		t.Errorf("the quote sends %q, want 12.50 USD", got)
	}
	for _, fee := range []string{"#quote-service-fee", "#quote-transfer-fee", "#quote-rate", "#quote-target-amount"} {
		if !regexp.MustCompile(`\d`).MatchString(text(t, page, fee)) {
			t.Errorf("the quote shows no figure in %s", fee)
		}
	}
	browser.CheckAxe(t, page, "the new transfer page with a quote")

	wallet := crypto.PubkeyToAddress(p.funded.PublicKey).Hex()
	must(t, browser.Do(page, chromedp.SetValue(chromedp.ID("customer_email"), "payer@example.com"),
		chromedp.SetValue(chromedp.ID("wallet_address"), wallet)), "the transfer's fields")
	must(t, browser.Navigates(page, chromedp.Click(chromedp.ID("create-transfer"))), "creating the transfer")
	must(t, browser.Do(page, chromedp.WaitVisible(chromedp.ID("transfer-id"))), "the transfer's page")
	id := text(t, page, "#transfer-id")
	if loc, err := browser.Run(page, chromedp.Location()); err != nil || loc != p.dash+"transfer?id="+id {
		t.Fatalf("after the create the page is at %s (%v)", loc, err)
	}
	if got := text(t, page, "#transfer-amount"); got != "12.50" {
		t.Errorf("the page asks for %q, want exactly 12.50", got)
	}
	address := text(t, page, "#deposit-address")
	if !common.IsHexAddress(address) || !strings.HasPrefix(address, "0x") {
		t.Fatalf("the deposit address shown is %q", address)
	}
	waitTrue(t, page, `(() => { const q = document.getElementById("deposit-qr"); return q.complete && q.naturalWidth > 0 })()`)
	if s := eval[string](t, page, `document.getElementById("transfer-status").dataset.status`); s == "completed" || s == "failed" {
		t.Fatalf("before the deposit the transfer is %s", s)
	}
	browser.CheckAxe(t, page, "the transfer page")

	// the page changes by itself: the document that sees completed is the one loaded here
	origin := eval[float64](t, page, `window.__marker = "before the deposit"; performance.timeOrigin`)
	if _, err := p.base.SendTransfer(context.Background(), p.funded, devchain.USDC, common.HexToAddress(address), big.NewInt(12_500_000)); err != nil {
		t.Fatalf("the deposit: %v", err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for status := ""; status != "completed"; {
		if time.Now().After(deadline) {
			t.Fatalf("the page's status is %q two minutes after the deposit", status)
		}
		time.Sleep(250 * time.Millisecond)
		status = eval[string](t, page, `document.getElementById("transfer-status").dataset.status`)
		if status == "failed" {
			t.Fatalf("the transfer failed: %s", text(t, page, "#transfer-error"))
		}
	}
	if m := eval[string](t, page, `String(window.__marker)`); m != "before the deposit" {
		t.Errorf("the page was loaded again: the marker is %q", m)
	}
	if o := eval[float64](t, page, `performance.timeOrigin`); o != origin {
		t.Errorf("the document changed: time origin %v, was %v", o, origin)
	}
	if l := eval[string](t, page, `document.getElementById("transfer-status").textContent`); !strings.Contains(strings.ToLower(l), "complete") {
		t.Errorf("the status reads %q", l)
	}
	if n := eval[int](t, page, `document.querySelectorAll("#transfer-timeline li").length`); n < 2 {
		t.Errorf("the timeline has %d entries after completion", n)
	}
	browser.CheckAxe(t, page, "the completed transfer page")
	browser.Screenshot(t, page, "dashboard-transfer.png")

	must(t, browser.Do(page, chromedp.Navigate(p.dash+"transfers"),
		chromedp.WaitVisible(chromedp.ID("transfers-table"))), "the transfers list")
	row := fmt.Sprintf(`tr[data-transfer-id=%q]`, id)
	if got := eval[string](t, page, fmt.Sprintf(`(() => { const r = document.querySelector(%q); return r === null ? "" : r.querySelector("td[data-status]").dataset.status })()`, row)); got != "completed" {
		t.Errorf("the list's row of %s has status %q", id, got)
	}
	browser.CheckAxe(t, page, "the transfers list")

	// dave, on another account, in a browser of his own
	other := b.Page(t)
	must(t, browser.SignIn(other, p.dash, "dave", "dave-pw"), "dave's sign-in")
	for _, u := range []string{"transfer?id=", "transfer-status?id=", "transfer-qr?id="} {
		code := eval[int](t, other, fmt.Sprintf(`fetch(%q, {credentials: "same-origin"}).then(r => r.status)`, u+id))
		if code != 404 {
			t.Errorf("dave's %s%s: %d, want 404", u, id, code)
		}
	}
	must(t, browser.Do(other, chromedp.Navigate(p.dash+"transfer?id="+id), chromedp.WaitReady(chromedp.CSS("body"))), "dave on the URL")
	if body := eval[string](t, other, `document.body.innerText`); strings.Contains(body, address) {
		t.Errorf("dave's page shows the deposit address")
	}
	must(t, browser.Do(other, chromedp.Navigate(p.dash+"transfers"), chromedp.WaitVisible(chromedp.ID("transfers-table"))), "dave's list")
	if n := eval[int](t, other, fmt.Sprintf(`document.querySelectorAll(%q).length`, row)); n != 0 {
		t.Errorf("dave's list shows carol's transfer")
	}
}
