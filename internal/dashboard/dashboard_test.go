package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/stablepay/payout-operator/internal/apikey"
)

var _ = Describe("sign-in with the OpenID Provider and the developer area", func() {
	It("signs a user in through the provider's login page, on the account of its claim, and manages its keys", func() {
		s := newSite()
		b := newBrowser()
		keys := s.signIn(b, "alice", "alice-pw")
		Expect(keys.body).To(ContainSubstring("Account <strong>" + s.user1 + "</strong>"))
		Expect(keys.header.Get("Content-Security-Policy")).To(ContainSubstring("script-src 'self'"))
		Expect(keys.header.Get("Content-Security-Policy")).NotTo(ContainSubstring("unsafe-inline"))
		Expect(keys.body).NotTo(ContainSubstring("<script>"), "no inline script")

		created := b.do("POST", s.url+"keys", url.Values{"csrf": {csrfOf(keys)}})
		Expect(created.status).To(Equal(http.StatusCreated), created.body)
		full := fullKey.FindString(created.body)
		Expect(full).NotTo(BeEmpty(), "the new key is shown in full once")
		Expect(created.body).To(ContainSubstring(`data-copy="new-key"`), "with a copy button")
		id, ok := apikey.ParseKey(full)
		Expect(ok).To(BeTrue())
		stored := keysOf(s.user1)
		Expect(stored).To(HaveLen(1))
		Expect(stored[0].Name).To(Equal(id))
		Expect(stored[0].Spec.AccountUID).To(Equal(string(s.accounts[s.user1].UID)), "issued as kubectl payout apikey create does: bound to the account")
		Expect(apikey.Matches(stored[0].Spec.SecretHash, full)).To(BeTrue())
		Eventually(func() string { return b.get(s.url + "keys").body }).Should(ContainSubstring(id))
		Expect(b.get(s.url+"keys").body).NotTo(ContainSubstring(full), "never shown again")

		revoked := b.do("POST", s.url+"keys/"+id+"/revoke", url.Values{"csrf": {csrfOf(keys)}})
		Expect(revoked.status).To(Equal(http.StatusSeeOther), revoked.body)
		Expect(keysOf(s.user1)[0].Spec.Revoked).To(BeTrue())
	})

	It("sets the session cookie HttpOnly and SameSite=Strict, and a fresh one whatever the browser brought (session fixation)", func() {
		s := newSite()
		b := newBrowser()
		u, _ := url.Parse(s.url)
		planted := &http.Cookie{Name: "payout_session", Value: "planted-by-an-attacker", Path: "/"}
		b.hc.Jar.SetCookies(u, []*http.Cookie{planted})
		login, at := b.follow(s.url + "login")
		m := hiddenID.FindStringSubmatch(login.body)
		Expect(m).NotTo(BeNil(), "%s: %s", at, login.body)
		posted := b.do("POST", s.op+"/login/username", url.Values{"username": {"alice"}, "password": {"alice-pw"}, "id": {m[1]}})
		callback, at := b.follow(posted.loc)
		Expect(callback.status).To(Equal(200), callback.body)
		Expect(at).To(HavePrefix(s.url + "callback"))
		set := callback.header.Values("Set-Cookie")
		var session string
		for _, c := range set {
			if strings.HasPrefix(c, "payout_session=") {
				session = c
			}
		}
		Expect(session).To(ContainSubstring("HttpOnly"))
		Expect(session).To(ContainSubstring("SameSite=Strict"))
		Expect(session).NotTo(ContainSubstring("Secure"), "plain http on loopback (make run) only")
		Expect(s.sessionCookie(b).Value).NotTo(Equal(planted.Value))
		Expect(b.get(s.url + "keys").status).To(Equal(200))
	})

	It("keeps each user to its own account: user 2 cannot see or revoke user 1's keys", func() {
		s := newSite()
		alice, bob := newBrowser(), newBrowser()
		ak := s.signIn(alice, "alice", "alice-pw")
		created := alice.do("POST", s.url+"keys", url.Values{"csrf": {csrfOf(ak)}})
		id, _ := apikey.ParseKey(fullKey.FindString(created.body))
		Expect(id).NotTo(BeEmpty())

		bk := s.signIn(bob, "bob", "bob-pw")
		Expect(bk.body).To(ContainSubstring("Account <strong>" + s.user2 + "</strong>"))
		Consistently(func() string { return bob.get(s.url + "keys").body }, 500*time.Millisecond).ShouldNot(ContainSubstring(id))
		r := bob.do("POST", s.url+"keys/"+id+"/revoke", url.Values{"csrf": {csrfOf(bk)}})
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(keysOf(s.user1)[0].Spec.Revoked).To(BeFalse())
	})

	It("refuses a wrong password at the provider", func() {
		s := newSite()
		b := newBrowser()
		login, _ := b.follow(s.url + "login")
		m := hiddenID.FindStringSubmatch(login.body)
		r := b.do("POST", s.op+"/login/username", url.Values{"username": {"alice"}, "password": {"wrong"}, "id": {m[1]}})
		Expect(r.status).NotTo(Equal(http.StatusFound))
		Expect(b.get(s.url+"keys").status).To(Equal(http.StatusSeeOther), "not signed in")
	})

	It("refuses a callback this browser did not start (login CSRF)", func() {
		s := newSite()
		// the attacker signs in as itself up to the provider's redirect, and sends the callback
		// URL (its own code and state) to the victim's browser
		attacker := newBrowser()
		login, _ := attacker.follow(s.url + "login")
		m := hiddenID.FindStringSubmatch(login.body)
		Expect(m).NotTo(BeNil())
		next := attacker.do("POST", s.op+"/login/username", url.Values{"username": {"bob"}, "password": {"bob-pw"}, "id": {m[1]}}).loc
		for strings.HasPrefix(next, s.op) {
			next = attacker.get(next).loc
		}
		Expect(next).To(HavePrefix(s.url + "callback?"))
		victim := newBrowser()
		Expect(victim.get(next).status).To(Equal(http.StatusBadRequest))
		Expect(victim.get(s.url+"keys").status).To(Equal(http.StatusSeeOther), "the victim is not signed in as the attacker")
		Expect(newBrowser().get(s.url + "callback?state=forged&code=forged").status).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("CSRF, logout and expiry", func() {
	It("refuses every state change without the session's CSRF token", func() {
		s := newSite()
		b := newBrowser()
		keys := s.signIn(b, "alice", "alice-pw")
		for _, path := range []string{"keys", "logout", "token"} {
			Expect(b.do("POST", s.url+path, url.Values{}).status).To(Equal(http.StatusForbidden), path)
			Expect(b.do("POST", s.url+path, url.Values{"csrf": {"not-the-token"}}).status).To(Equal(http.StatusForbidden), path)
		}
		Expect(keysOf(s.user1)).To(BeEmpty(), "no key was made")
		Expect(b.get(s.url+"keys").status).To(Equal(200), "still signed in")
		Expect(b.do("POST", s.url+"token", nil, "X-CSRF-Token", csrfOf(keys)).status).To(Equal(200), "the script's header works")
	})

	It("ends the session on the server at logout: the old cookie is refused", func() {
		s := newSite()
		b := newBrowser()
		keys := s.signIn(b, "alice", "alice-pw")
		old := s.sessionCookie(b)
		csrf := csrfOf(keys)
		out := b.do("POST", s.url+"logout", url.Values{"csrf": {csrf}})
		Expect(out.status).To(Equal(200))
		Expect(out.body).To(ContainSubstring("Signed out"))

		replay := newBrowser()
		u, _ := url.Parse(s.url)
		replay.hc.Jar.SetCookies(u, []*http.Cookie{{Name: old.Name, Value: old.Value, Path: "/"}})
		Expect(replay.get(s.url+"keys").status).To(Equal(http.StatusSeeOther), "the old cookie is no session")
		Expect(replay.do("POST", s.url+"token", url.Values{"csrf": {csrf}}).status).To(Equal(http.StatusUnauthorized))
		Expect(replay.do("POST", s.url+"keys", url.Values{"csrf": {csrf}}).status).To(Equal(http.StatusUnauthorized))
	})

	It("ends a session idle for the idle timeout, and one older than the absolute timeout however used", func() {
		s := newSite()
		b := newBrowser()
		s.signIn(b, "alice", "alice-pw")
		s.clock.Step(9 * time.Minute)
		Expect(b.get(s.url+"keys").status).To(Equal(200), "used within the idle timeout")
		s.clock.Step(10*time.Minute + time.Second)
		Expect(b.get(s.url+"keys").status).To(Equal(http.StatusSeeOther), "idle past the timeout")

		s.clock.Step(-20 * time.Minute) // back to now: the provider's tokens are checked on this clock
		s.signIn(b, "alice", "alice-pw")
		for range 6 {
			s.clock.Step(9 * time.Minute)
			Expect(b.get(s.url + "keys").status).To(Equal(200))
		}
		s.clock.Step(9 * time.Minute)
		Expect(b.get(s.url+"keys").status).To(Equal(http.StatusSeeOther), "past the absolute timeout")
	})

	It("issues browser tokens for the REST API bound to the account and the API's audience", func() {
		s := newSite()
		b := newBrowser()
		keys := s.signIn(b, "alice", "alice-pw")
		r := b.do("POST", s.url+"token", url.Values{"csrf": {csrfOf(keys)}})
		Expect(r.status).To(Equal(200), r.body)
		var body struct {
			Token     string `json:"token"`
			ExpiresAt string `json:"expiresAt"`
		}
		Expect(json.Unmarshal([]byte(r.body), &body)).To(Succeed())
		claims, err := s.keys.Verify(body.Token, s.url, audience, s.clock.Now())
		Expect(err).NotTo(HaveOccurred())
		Expect(claims.Account).To(Equal(s.user1))
		Expect(claims.AccountUID).To(Equal(string(s.accounts[s.user1].UID)))
		_, err = s.keys.Verify(body.Token, s.url, "https://another-api.test", s.clock.Now())
		Expect(err).To(HaveOccurred(), "another audience")
		_, err = s.keys.Verify(body.Token, s.url, audience, s.clock.Now().Add(6*time.Minute))
		Expect(err).To(HaveOccurred(), "expired")
	})
})
