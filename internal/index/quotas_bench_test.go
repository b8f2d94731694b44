package index_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

// TestCacheAtQuotas measures what the informer cache of one process (facade and controllers
// share it in payoutd) holds with 10 accounts at every default cap: the objects in client-go
// indexers, one per kind, with an index per field of internal/index, as they are after
// TransformStripManagedFields. It reports the Go heap in use after a collection; run it with
// `go test -run TestCacheAtQuotas -v ./internal/index/` (docs/benchmarks.md, "Quotas").
func TestCacheAtQuotas(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 100 000 objects")
	}
	const accounts = 10
	q := payoutv1.Quotas{}.Limits()
	ended := int(q.MaxClaims - q.MaxOpenV1Transfers - q.MaxOpenV2Transfers - q.MaxActiveRecipients)
	keys := toolscache.MetaNamespaceKeyFunc
	byNS := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}
	transfers := toolscache.NewIndexer(keys, byNS)
	recipients := toolscache.NewIndexer(keys, byNS)
	claims := toolscache.NewIndexer(keys, toolscache.Indexers{"holder": func(o any) ([]string, error) {
		return []string{o.(*payoutv1.Claim).Spec.Holder.Namespace}, nil
	}})
	before := heapInUse()
	now := metav1.Now()
	for a := range accounts {
		ns := payoutv1.AccountNamespace(fmt.Sprintf("quota-%d", a))
		meta := func(o metav1.Object, i int) {
			o.SetUID(types.UID(uuid.NewString()))
			o.SetResourceVersion(strconv.Itoa(1000000 + i))
			o.SetCreationTimestamp(now)
		}
		for i := range int(q.MaxActiveRecipients) {
			id := int64(1e12) + int64(a)*1e9 + int64(i)
			rc := testgen.Recipient(ns, id)
			meta(rc, i)
			rc.Labels = map[string]string{payoutv1.RecipientLineageLabel: rc.Name}
			_ = recipients.Add(rc)
			c := testgen.Claim(payoutv1.ClaimRecipientID, rc.Name, payoutv1.ObjectRef{Namespace: ns, Name: rc.Name})
			meta(c, i)
			_ = claims.Add(c)
		}
		for i := range int(q.MaxOpenV1Transfers+q.MaxOpenV2Transfers) + ended {
			id := fmt.Sprintf("%08x%016x", a, i)
			customer := uuid.NewString()
			tr := testgen.Transfer(ns, id, func(t *payoutv1.Transfer) {
				t.Spec.Account, t.Spec.CustomerUUID, t.Spec.QuoteID = fmt.Sprintf("quota-%d", a), customer, uuid.NewString()
				t.Spec.DepositAddress = "0x" + fmt.Sprintf("%040x", a<<32+i)
			})
			meta(tr, i)
			switch {
			case i >= int(q.MaxOpenV1Transfers+q.MaxOpenV2Transfers): // completed, as writeOne leaves it
				tr.Status = payoutv1.TransferStatus{Phase: payoutv1.PhaseCompleted, UpdatedAt: &now,
					Deposit: testgen.Deposit(),
					Payout: &payoutv1.PayoutFacts{Reference: id, Provider: "wise", State: payoutv1.PayoutCompleted, RequestedAt: now,
						ProviderID: strconv.Itoa(1000000 + i)}}
			case i >= int(q.MaxOpenV1Transfers):
				testgen.V2()(tr)
			}
			_ = transfers.Add(tr)
			c := testgen.Claim(payoutv1.ClaimCustomerUUID, customer, payoutv1.ObjectRef{Namespace: ns, Name: id})
			meta(c, i)
			_ = claims.Add(c)
		}
	}
	after := heapInUse()
	t.Logf("%d accounts at their caps: %d transfers, %d recipients, %d claims cached: %.1f MiB of heap (%.0f bytes an object)",
		accounts, len(transfers.ListKeys()), len(recipients.ListKeys()), len(claims.ListKeys()),
		float64(after-before)/(1<<20), float64(after-before)/float64(len(transfers.ListKeys())+len(recipients.ListKeys())+len(claims.ListKeys())))
	// the pod's 512 MiB less what payoutd holds before any account (about 30 MiB measured by
	// make loadrun-quotas) and room for its work: the cache may take at most 384 MiB
	if grown := after - min(after, before); grown > 384<<20 {
		t.Fatalf("the cache of %d accounts at their caps takes %.1f MiB, past 384 MiB", accounts, float64(grown)/(1<<20))
	}
	if n := len(claims.ListKeys()); n != accounts*int(q.MaxClaims) {
		t.Fatalf("%d claims cached, not %d accounts' caps", n, accounts)
	}
	runtime.KeepAlive(transfers)
	runtime.KeepAlive(recipients)
	runtime.KeepAlive(claims)
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
