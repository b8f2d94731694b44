package browser_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/test/browser"
)

// fetchStatus is the status the page's own fetch gets (same origin, its cookies): a call as
// the page's script would make it, or as a forged page script would.
func fetchStatus(t *testing.T, page context.Context, script string) int {
	t.Helper()
	return eval[int](t, page, `(async () => { const r = await `+script+`; return r.status })()`)
}

// Bob, signed in beside Alice in a browser of his own, neither sees nor touches her account
// through any page or API call, direct addresses included; a forged or expired browser token
// and a state change without the CSRF token are refused.
func TestAccountIsolationAndTokens(t *testing.T) {
	b := browser.Start(t)
	alice, bob := b.Page(t), b.Page(t)
	must(t, browser.SignIn(alice, stack.dash, "alice", "alice-pw"), "alice's sign-in")
	must(t, browser.SignIn(bob, stack.dash, "bob", "bob-pw"), "bob's sign-in")

	ctx := context.Background()
	full, _, err := admin.IssueKey(ctx, env.Client, stack.user1)
	must(t, err, "a key of alice's")
	var id string
	deadline := time.Now().Add(browser.Timeout)
	for id == "" {
		code, body := apiPost(t, "/api/payouts/recipients", full, map[string]any{"currency": "EUR", "type": "iban", "accountHolderName": "Alice Secret",
			"details": map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}})
		if code == 201 {
			var made struct{ ID int64 }
			must(t, json.Unmarshal([]byte(body), &made), body)
			id = strconv.FormatInt(made.ID, 10)
		} else if time.Now().After(deadline) {
			t.Fatalf("alice's recipient: %d %s", code, body)
		} else {
			time.Sleep(100 * time.Millisecond) // the new key reaches the facade's cache
		}
	}
	rc := recipientOf(t, stack.user1, id)
	// alice sees both: what bob must not
	// once a second: each page is a call of the facade's, within its per-minute budget
	for i := 0; eval[int](t, alice, `fetch("recipient?id=`+id+`").then(r => r.status)`) != 200; i++ {
		if i == 15 {
			t.Fatal("alice does not see her recipient's page")
		}
		time.Sleep(time.Second)
	}
	// alice's key as her developer area shows it
	must(t, browser.Do(alice, chromedp.Navigate(stack.dash+"keys"), chromedp.WaitVisible(chromedp.CSS("td code"))), "alice's keys")
	aliceKey := eval[string](t, alice, `document.querySelector("td code").textContent`)

	t.Run("pages", func(t *testing.T) {
		for _, path := range []string{"keys", "recipients", "recipient?id=" + id} {
			must(t, browser.Do(bob, chromedp.Navigate(stack.dash+path), chromedp.WaitReady(chromedp.CSS("body"))), path)
			body := eval[string](t, bob, `document.documentElement.outerHTML`)
			if strings.Contains(body, aliceKey) || strings.Contains(body, "Alice Secret") || strings.Contains(body, stack.user1) {
				t.Errorf("bob's %s shows alice's account: %s", path, body)
			}
		}
		if code := fetchStatus(t, bob, `fetch("recipient?id=`+id+`")`); code != 403 && code != 404 {
			t.Errorf("bob's direct address of alice's recipient: %d, want 403 or 404", code)
		}
	})

	t.Run("state changes", func(t *testing.T) {
		csrf := eval[string](t, bob, `document.querySelector('meta[name="csrf-token"]').content`)
		form := func(fields string) string {
			return `{method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "csrf=" + encodeURIComponent("` + csrf + `")` + fields + `}`
		}
		fetchStatus(t, bob, `fetch("keys/`+aliceKey+`/revoke", `+form("")+`)`)
		fetchStatus(t, bob, `fetch("recipient-delete?id=`+id+`", `+form("")+`)`)
		fetchStatus(t, bob, `fetch("recipient?id=`+id+`", `+form(` + "&action=save&type=iban&accountHolderName=Bob+Was+Here&d.legalType=PRIVATE&d.iban=DE89370400440532013000"`)+`)`)
		key := &payoutv1.APIKey{}
		must(t, env.Client.Get(ctx, client.ObjectKey{Name: aliceKey}, key), "alice's key")
		if key.Spec.Revoked {
			t.Error("bob revoked alice's key")
		}
		got := &payoutv1.Recipient{}
		must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(rc), got), "alice's recipient")
		if got.Spec.Deactivated || got.Spec.AccountHolderName != "Alice Secret" {
			t.Errorf("bob changed alice's recipient: %+v", got.Spec)
		}
	})

	t.Run("API calls with bob's browser token", func(t *testing.T) {
		for _, call := range []string{
			`payoutAPI("/api/payouts/recipients/` + id + `")`,
			`payoutAPI("/api/payouts/recipients/` + id + `", {method: "DELETE"})`,
			`payoutAPI("/api/payouts/recipients/` + id + `", {method: "PATCH", headers: {"Content-Type": "application/json"}, body: JSON.stringify({accountHolderName: "Bob Was Here"})})`,
		} {
			// the API's answer for another account's recipient (spec 4.5)
			if code := fetchStatus(t, bob, call); code != 403 {
				t.Errorf("%s: %d, want 403", call, code)
			}
		}
		list := eval[string](t, bob, `payoutAPI("/api/payouts/recipients").then(r => r.text())`)
		if strings.Contains(list, "Alice Secret") {
			t.Errorf("bob's list has alice's recipient: %s", list)
		}
	})

	t.Run("CSRF", func(t *testing.T) {
		before := len(keysOf(t, stack.user2))
		// bob is signed in: with the page's token the same calls pass
		if code := fetchStatus(t, bob, `fetch("token", {method: "POST", headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}})`); code != 200 {
			t.Fatalf("a token with the CSRF token: %d", code)
		}
		if code := fetchStatus(t, bob, `fetch("keys", {method: "POST"})`); code != 403 {
			t.Errorf("a key created without the CSRF token: %d, want 403", code)
		}
		if code := fetchStatus(t, bob, `fetch("token", {method: "POST"})`); code != 403 {
			t.Errorf("a token without the CSRF token: %d, want 403", code)
		}
		if code := fetchStatus(t, bob, `fetch("keys", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "csrf=not-the-token"})`); code != 403 {
			t.Errorf("a key created with another CSRF token: %d, want 403", code)
		}
		if n := len(keysOf(t, stack.user2)); n != before {
			t.Errorf("bob has %d keys, had %d", n, before)
		}
	})

	t.Run("forged and expired tokens", func(t *testing.T) {
		mint := `fetch("token", {method: "POST", headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}}).then(r => r.json()).then(b => b.token)`
		call := func(token string) int {
			return fetchStatus(t, bob, `fetch("/api/payouts/recipients", {headers: {Authorization: "Bearer `+token+`"}})`)
		}
		good := eval[string](t, bob, mint)
		if code := call(good); code != 200 {
			t.Fatalf("bob's own token: %d", code)
		}
		// another signature: a character inside it changed (not the last, whose low bits
		// base64url drops)
		i := len(good) - 10
		swap := byte('A')
		if good[i] == 'A' {
			swap = 'B'
		}
		if code := call(good[:i] + string(swap) + good[i+1:]); code != 401 {
			t.Errorf("a forged token: %d, want 401", code)
		}
		// a token minted an hour ago: expired (last: the session's idle clock moves back too,
		// which ends the session)
		stack.dashClock.Set(-time.Hour)
		old := eval[string](t, bob, mint)
		stack.dashClock.Set(0)
		if code := call(old); code != 401 {
			t.Errorf("an expired token: %d, want 401", code)
		}
	})

}

// recipientOf is the account's recipient of id, read from the API server.
func recipientOf(t *testing.T, account, id string) *payoutv1.Recipient {
	t.Helper()
	var list payoutv1.RecipientList
	must(t, env.Client.List(context.Background(), &list, client.InNamespace(payoutv1.AccountNamespace(account))), "the recipients")
	for i, rc := range list.Items {
		if strconv.FormatInt(rc.Spec.ID, 10) == id {
			return &list.Items[i]
		}
	}
	t.Fatalf("no recipient %s of %s", id, account)
	return nil
}

// keysOf are the account's keys, read from the API server.
func keysOf(t *testing.T, account string) []payoutv1.APIKey {
	t.Helper()
	var list payoutv1.APIKeyList
	must(t, env.Client.List(context.Background(), &list), "the keys")
	var out []payoutv1.APIKey
	for _, k := range list.Items {
		if k.Spec.Account == account {
			out = append(out, k)
		}
	}
	return out
}
