package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

// bookRecipients are n recipients of namespace ns, created a second apart in pairs (two share
// each second, so the id breaks ties), in random order as an informer's first list gives them.
func bookRecipients(ns string, n int) []*payoutv1.Recipient {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]*payoutv1.Recipient, n)
	for i := range out {
		rc := testgen.Recipient(ns, int64(1e12)+rng.Int64N(1e15))
		rc.CreationTimestamp = metav1.NewTime(testgen.Epoch.Add(time.Duration(i/2) * time.Second))
		out[i] = rc
	}
	rng.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func listOrder(rcs []*payoutv1.Recipient) []int64 {
	sorted := slices.Clone(rcs)
	slices.SortFunc(sorted, func(a, b *payoutv1.Recipient) int { return entryOf(a).compare(entryOf(b)) })
	ids := make([]int64, len(sorted))
	for i, rc := range sorted {
		ids[i] = rc.Spec.ID
	}
	return ids
}

func TestRecipientBookPages(t *testing.T) {
	const ns = "payout-book"
	rcs := bookRecipients(ns, 501)
	b := newRecipientBook()
	for _, rc := range rcs {
		b.update(nil, rc)
	}
	b.update(nil, testgen.Recipient("payout-other", 1)) // another account's
	deleted := rcs[7].DeepCopy()
	deleted.Spec.Deactivated = true
	b.update(rcs[7], deleted)
	want := listOrder(append(slices.Clone(rcs[:7]), rcs[8:]...))

	var got []int64
	var after *bookEntry
	for pages := 0; ; pages++ {
		ids, more := b.page(ns, after, 64)
		got = append(got, ids...)
		if !more {
			break
		}
		if pages > 10 {
			t.Fatal("the pages do not end")
		}
		last := bookEntry{id: ids[len(ids)-1]}
		for _, rc := range rcs {
			if rc.Spec.ID == last.id {
				last = entryOf(rc)
			}
		}
		after = &last
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages of 64 list %d recipients, not the %d active ones in list order", len(got), len(want))
	}
	// a page starting after the deleted recipient starts at its place
	e := entryOf(rcs[7])
	ids, _ := b.page(ns, &e, 1)
	if i := slices.Index(listOrder(rcs), rcs[7].Spec.ID); len(ids) != 1 || ids[0] != listOrder(rcs)[i+1] {
		t.Fatalf("the page after a deleted recipient is %v", ids)
	}
	// a recipient deleted from the API server leaves the book; adding twice lists it once
	b.update(rcs[0], nil)
	b.update(nil, rcs[1])
	if all, _ := b.page(ns, nil, 1000); len(all) != len(want)-1 || slices.Contains(all, rcs[0].Spec.ID) {
		t.Fatalf("after a deletion and a second add: %d recipients", len(all))
	}
}

// cacheLike stands for the informer cache behind the facade's client as controller-runtime's
// cache reader serves it: Get copies one object, List copies every object it lists (shallow with
// UnsafeDisableDeepCopy).
type cacheLike struct {
	client.Client
	byKey map[client.ObjectKey]*payoutv1.Recipient
	all   []*payoutv1.Recipient
}

func (c *cacheLike) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	rc, ok := c.byKey[key]
	if !ok {
		return fmt.Errorf("recipient %s not cached", key)
	}
	rc.DeepCopyInto(obj.(*payoutv1.Recipient))
	return nil
}

func (c *cacheLike) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	items := make([]payoutv1.Recipient, 0, len(c.all))
	for _, rc := range c.all {
		if o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy {
			items = append(items, *rc)
		} else {
			items = append(items, *rc.DeepCopy())
		}
	}
	list.(*payoutv1.RecipientList).Items = items
	return nil
}

// BenchmarkRecipientList measures GET /api/payouts/recipients (the handler, after
// authentication) for an account of 1 000 and of 100 000 active recipients: from the book, which
// copies only the page (1 000, the default page, or 100), and listed, as the facade did before the
// book: every recipient copied and sorted.
func BenchmarkRecipientList(b *testing.B) {
	const ns = "payout-bench"
	for _, n := range []int{1000, 100000} {
		rcs := bookRecipients(ns, n)
		cache := &cacheLike{byKey: map[client.ObjectKey]*payoutv1.Recipient{}, all: rcs}
		book := newRecipientBook()
		for _, rc := range rcs {
			cache.byKey[client.ObjectKeyFromObject(rc)] = rc
			book.update(nil, rc)
		}
		book.page(ns, nil, 1) // the first read sorts the informer's first list
		caller := &Caller{Account: testgen.Account("bench")}
		for _, mode := range []struct {
			name  string
			book  *recipientBook
			query string
		}{
			{"book", book, ""}, {"book-limit-100", book, "?limit=100"}, {"listed", nil, ""},
		} {
			s := &Server{cfg: Config{Client: cache}, book: mode.book}
			if mode.book != nil {
				s.book.hasSynced = func() bool { return true } // fed by hand
			}
			b.Run(fmt.Sprintf("%s/%d", mode.name, n), func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, "/api/payouts/recipients"+mode.query, nil)
				b.ReportAllocs()
				for b.Loop() {
					rec := httptest.NewRecorder()
					if err := s.handleRecipientList(rec, req, caller); err != nil {
						b.Fatal(err)
					}
				}
				rec := httptest.NewRecorder()
				_ = s.handleRecipientList(rec, req, caller)
				var page struct {
					Data    []json.RawMessage `json:"data"`
					HasMore bool              `json:"has_more"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || len(page.Data) != min(n, pageOf(mode.query)) || page.HasMore != (n > pageOf(mode.query)) {
					b.Fatalf("a page of %d recipients, has_more %v (%v)", len(page.Data), page.HasMore, err)
				}
			})
		}
	}
}

func pageOf(query string) int {
	if query == "" {
		return maxRecipientPage
	}
	n, _ := strconv.Atoi(query[len("?limit="):])
	return n
}
