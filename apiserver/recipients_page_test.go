package apiserver

import (
	"net/http"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// listIDs is a page of the recipient list: its ids and has_more.
func listIDs(c *caller, query string) ([]int64, bool) {
	GinkgoHelper()
	r := c.get("/api/payouts/recipients" + query)
	Expect(r.status).To(Equal(200), "%s", r)
	m := r.json()
	var ids []int64
	for _, x := range m["data"].([]any) {
		ids = append(ids, idOf(x.(map[string]any)))
	}
	return ids, m["has_more"].(bool)
}

// nextActive is the first of active (in list order) that the list places after the recipient
// id: the stored creation times decide.
func nextActive(acct *account, id int64, active []int64) []int64 {
	GinkgoHelper()
	entry := func(id int64) bookEntry {
		rc := &payoutv1.Recipient{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: payoutv1.AccountNamespace(acct.name), Name: strconv.FormatInt(id, 10)}, rc)).To(Succeed())
		return entryOf(rc)
	}
	after := entry(id)
	for _, a := range active {
		if entry(a).compare(after) > 0 {
			return []int64{a}
		}
	}
	return nil
}

var _ = Describe("the recipient list's pages (issue 25 item 7)", func() {
	It("pages the active recipients oldest first with limit and starting_after, from the book and without it", func() {
		acct := newAccount()
		var all []int64
		for i := range 5 {
			all = append(all, idOf(acct.create(ibanBody("Page Holder "+strconv.Itoa(i)))))
		}
		deleted := all[2]
		Expect(acct.c.do("DELETE", rpath(deleted), nil).status).To(Equal(200))
		active := []int64{all[0], all[1], all[3], all[4]}

		listed := acct.c.on(openServer(baseCfg, func(s *Server) { s.book = nil })) // lists and copies the namespace
		for _, c := range []*caller{acct.c, listed} {
			ids, more := listIDs(c, "")
			Expect(more).To(BeFalse())
			Expect(ids).To(HaveLen(4))
			Expect(ids).To(ConsistOf(active))

			// pages of 2 walk the same list in the same order
			page, more := listIDs(c, "?limit=2")
			Expect(more).To(BeTrue())
			Expect(page).To(Equal(ids[:2]))
			page, more = listIDs(c, "?limit=2&starting_after="+strconv.FormatInt(ids[1], 10))
			Expect(more).To(BeFalse())
			Expect(page).To(Equal(ids[2:]))
			// a page may end at a recipient deleted since: the next starts after its place
			page, _ = listIDs(c, "?limit=1&starting_after="+strconv.FormatInt(deleted, 10))
			Expect(page).To(Equal(nextActive(acct, deleted, ids)))
		}
	})

	It("answers a bad limit or a starting_after of no recipient of the account with 400 naming the parameter", func() {
		acct, other := newAccount(), newAccount()
		foreign := idOf(other.create(ibanBody("Foreign Holder")))
		for _, q := range []string{"?limit=0", "?limit=1001", "?limit=x", "?limit=-1"} {
			Expect(errorText(acct.c.get("/api/payouts/recipients"+q), http.StatusBadRequest)).To(ContainSubstring("limit"), q)
		}
		for _, q := range []string{"?starting_after=12", "?starting_after=abc", "?starting_after=" + strconv.FormatInt(foreign, 10)} {
			Expect(errorText(acct.c.get("/api/payouts/recipients"+q), http.StatusBadRequest)).To(ContainSubstring("starting_after"), q)
		}
	})
})
