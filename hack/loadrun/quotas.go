package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/tenancy"
	"github.com/stablepay/payout-operator/test/testenv"
	"github.com/stablepay/payout-operator/test/testgen"
)

var quotaAccounts = flag.Int("quota-accounts", 10, "accounts the quotas phase fills to their default caps")

// runQuotas is `-phases quotas` (`make loadrun-quotas`, issue 25 item 6): the facade and the
// controllers run in this process as payoutd runs both, one informer cache between them; it
// fills -quota-accounts accounts to every default cap at once (payoutv1.Quotas.Limits: 100 open
// v1 and 100 open v2 transfers, 1 000 active recipients, and 2 000 claims: one per recipient and
// per open transfer, and the 800 others held by completed transfers not yet archived) through
// the API server, waits until the cache holds them all, and reports the Go heap after a
// collection against the pods' 512 MiB. Then one more recipient through the facade must get
// 403: the caps hold.
func runQuotas(ctx context.Context, env *testenv.Env) error {
	url, err := startService(ctx, env)
	if err != nil {
		return err
	}
	before := heap()
	q := payoutv1.Quotas{}.Limits()
	ended := int(q.MaxClaims - q.MaxOpenV1Transfers - q.MaxOpenV2Transfers - q.MaxActiveRecipients)
	fmt.Printf("quotas: %d accounts at the default caps (%d open v1, %d open v2, %d active recipients, %d claims: %d of completed transfers)\n",
		*quotaAccounts, q.MaxOpenV1Transfers, q.MaxOpenV2Transfers, q.MaxActiveRecipients, q.MaxClaims, ended)
	fmt.Printf("  heap after start-up: %s in use\n", mibU(before.HeapInuse))

	start := time.Now()
	var first *keyed
	for a := range *quotaAccounts {
		name := fmt.Sprintf("quota-%d", a)
		acct, err := admin.CreateAccount(ctx, env.Client, name, admin.DefaultAccountSettings(name))
		if err != nil {
			return err
		}
		if err := tenancy.EnsureNamespace(ctx, env.Client, acct); err != nil {
			return err
		}
		if a == 0 {
			if first, err = newKeyed(env.Client, name); err != nil {
				return err
			}
		}
		if err := fillAccount(ctx, env.Client, name, q, ended); err != nil {
			return err
		}
		fmt.Printf("  account %d of %d filled (%s)\n", a+1, *quotaAccounts, time.Since(start).Round(time.Second))
	}
	wantClaims := int64(*quotaAccounts) * int64(q.MaxClaims)
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(time.Second) {
		n, err := cachedCount(ctx, &payoutv1.ClaimList{})
		if err != nil {
			return err
		}
		t, err := cachedCount(ctx, &payoutv1.TransferList{})
		if err != nil {
			return err
		}
		if n >= wantClaims && t >= int64(*quotaAccounts)*int64(ended+int(q.MaxOpenV1Transfers+q.MaxOpenV2Transfers)) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cache holds %d claims and %d transfers, not all that were written", n, t)
		}
	}
	after := heap()
	fmt.Printf("  heap with every account at its caps: %s in use (%s more), %s obtained from the OS; the pod limit is 512 MiB\n",
		mibU(after.HeapInuse), mibU(after.HeapInuse-min(after.HeapInuse, before.HeapInuse)), mibU(after.Sys))

	status, err := first.do(http.MethodPost, url+"/api/payouts/recipients", map[string]any{"currency": "EUR", "type": "iban",
		"accountHolderName": "One Too Many", "details": map[string]any{"legalType": "PRIVATE", "iban": "DE89370400440532013000"}}, nil)
	if err != nil {
		return err
	}
	fmt.Printf("  one more recipient through the facade: %d\n", status)
	if status != http.StatusForbidden {
		return fmt.Errorf("a recipient past the cap got %d, not 403", status)
	}
	return nil
}

// fillAccount writes an account's objects at its caps, as the facade and the transfer controller
// leave them: recipients and open transfers with their claims, and completed transfers with theirs.
func fillAccount(ctx context.Context, c client.Client, account string, q payoutv1.Quotas, ended int) error {
	ns := payoutv1.AccountNamespace(account)
	rng := rand.New(rand.NewPCG(uint64(len(account)), uint64(time.Now().UnixNano())))
	var jobs []func() error
	for range q.MaxActiveRecipients {
		id := int64(1e12) + rng.Int64N(1e15)
		jobs = append(jobs, func() error {
			name := strconv.FormatInt(id, 10)
			if err := c.Create(ctx, testgen.Claim(payoutv1.ClaimRecipientID, name, payoutv1.ObjectRef{Namespace: ns, Name: name})); err != nil {
				return err
			}
			return c.Create(ctx, testgen.Recipient(ns, id))
		})
	}
	for i := range int(q.MaxOpenV1Transfers + q.MaxOpenV2Transfers) {
		v2 := i >= int(q.MaxOpenV1Transfers)
		id := fmt.Sprintf("%024x", rng.Uint64())
		jobs = append(jobs, func() error {
			customer := uuid.NewString()
			t := testgen.Transfer(ns, id, func(t *payoutv1.Transfer) {
				t.Spec.Account, t.Spec.CustomerUUID, t.Spec.QuoteID = account, customer, uuid.NewString()
				exp := metav1.NewTime(time.Now().Add(24 * time.Hour))
				t.Spec.ExpiresAt = &exp
			})
			if v2 {
				testgen.V2()(t)
			}
			if err := c.Create(ctx, testgen.Claim(payoutv1.ClaimCustomerUUID, customer, payoutv1.ObjectRef{Namespace: ns, Name: id})); err != nil {
				return err
			}
			return c.Create(ctx, t)
		})
	}
	base := rng.IntN(1 << 20)
	for i := range ended {
		jobs = append(jobs, func() error { return writeOne(ctx, c, ns, account, base<<13+i) })
	}
	return runJobs(jobs, *workers)
}

// runJobs runs jobs on n workers and returns the first error.
func runJobs(jobs []func() error, n int) error {
	next := make(chan func() error)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range next {
				if err := job(); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	for _, job := range jobs {
		next <- job
	}
	close(next)
	wg.Wait()
	return first
}

func heap() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

func mibU(b uint64) string { return mib(float64(b)) }

// cachedReader is the service's client (its informer cache), set by startService.
var cachedReader client.Client

// cachedCount counts the objects of a kind in the service's cache, without copying them.
func cachedCount(ctx context.Context, list client.ObjectList) (int64, error) {
	if err := cachedReader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	return int64(apimeta.LenList(list)), nil
}
