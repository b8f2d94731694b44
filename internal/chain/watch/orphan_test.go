package watch

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
)

// TestDepositOfADeletedAccountIsRecordedApart (issue 23 item 7): a deposit for a transfer whose
// account was deleted is recorded in OrphanNamespace, where `kubectl payout refund` finds it:
// when its namespace is released (nothing was owed when the account went) and when its
// namespace is being deleted (it takes no new object). It was passed (or, while the namespace
// was terminating, stopped the watcher) before.
func TestDepositOfADeletedAccountIsRecordedApart(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Base)
	c := set.Chains[devchain.Base]
	chaintest.ManualMining(t, c)
	deleteCursor(t, payoutv1.NetworkBase)
	accountNamespace := func(account string) string {
		ns := payoutv1.AccountNamespace(account)
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		return ns
	}
	suffix := time.Now().UnixNano() % 1_000_000
	releasedAcct, goingAcct := fmt.Sprintf("released-%d", suffix), fmt.Sprintf("going-%d", suffix)
	released, going := accountNamespace(releasedAcct), accountNamespace(goingAcct)
	releasedID, goingID := newID(), newID()
	releasedAddr := transfer(t, released, releasedID, payoutv1.NetworkBase)
	goingAddr := transfer(t, going, goingID, payoutv1.NetworkBase)
	op := startOperator(t, configOf(c, 1))
	eventually(t, 10*time.Second, "the book", func() bool { return op.chains.Book.Len() >= 2 })
	waitScanned(t, payoutv1.NetworkBase, chaintest.Head(t, c))

	// one account was deleted with nothing owed: its namespace is released
	ns := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: released}, ns); err != nil {
		t.Fatal(err)
	}
	metav1.SetMetaDataLabel(&ns.ObjectMeta, payoutv1.ReleasedLabel, "true")
	if err := env.Client.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// the other's namespace is being deleted (envtest runs no namespace controller: it stays
	// terminating, and its transfer in the book)
	if err := env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: going}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the watcher's cache to see both", func() bool {
		r, g := &corev1.Namespace{}, &corev1.Namespace{}
		return op.client.Get(ctx, client.ObjectKey{Name: released}, r) == nil && payoutv1.NamespaceReleased(r.Labels) &&
			op.client.Get(ctx, client.ObjectKey{Name: going}, g) == nil && !g.DeletionTimestamp.IsZero()
	})

	_, b1 := chaintest.Send(t, c, set.FundedKey, devchain.USDC, releasedAddr, 1_000_000)
	_, b2 := chaintest.Send(t, c, set.FundedKey, devchain.USDC, goingAddr, 2_000_000)
	waitScanned(t, payoutv1.NetworkBase, max(b1, b2))

	for _, want := range []struct{ ns, id, account, amount string }{{released, releasedID, releasedAcct, "1000000"}, {going, goingID, goingAcct, "2000000"}} {
		if got := depositsOf(t, want.ns); len(got) != 0 {
			t.Errorf("recorded in %s: %+v", want.ns, got)
		}
		list := &payoutv1.DepositList{}
		if err := env.Client.List(ctx, list, client.InNamespace(payoutv1.OrphanNamespace), client.MatchingLabels{payoutv1.DepositTransferLabel: want.id}); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Spec.Amount != want.amount || list.Items[0].Labels[payoutv1.AccountLabel] != want.account {
			t.Errorf("the deposit of %s in %s: %+v", want.id, payoutv1.OrphanNamespace, list.Items)
		}
	}
	waitEvent(t, "base", CursorDepositOrphanedReason)
}
