package watch

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/dev/devchain"
	"github.com/stablepay/payout-operator/test/chaintest"
	"github.com/stablepay/payout-operator/test/testenv"
)

// TestCursorWriteKeepsANewerReleasesField: after a rollback, this release's watcher writes a
// cursor whose status holds a field of the newer release (its CRD stays installed,
// docs/operations/upgrade.md); the field is not in this release's types, and the write keeps it.
func TestCursorWriteKeepsANewerReleasesField(t *testing.T) {
	set := devchain.StartForTest(t, devchain.Arbitrum)
	c := set.Chains[devchain.Arbitrum]
	network := payoutv1.NetworkArbitrum
	deleteCursor(t, network)
	_, restore, err := env.WithNewerField(ctx, "status")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := restore(); err != nil {
			t.Error(err)
		}
	})

	startOperator(t, configOf(c, 2))
	chaintest.Mine(t, c, 1)
	head, err := c.Client.BlockNumber(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitScanned(t, network, int64(head)-2)

	// the newer release writes its field (again until the API server serves the newer schema,
	// a moment after the CRD's update); the cursor is written again once more blocks are scanned
	newer := &unstructured.Unstructured{}
	newer.SetGroupVersionKind(payoutv1.GroupVersion.WithKind("ChainCursor"))
	newer.SetName(string(network))
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"`+testenv.NewerField+`":"kept"}}`))
	eventually(t, 10*time.Second, "the newer release's field stored", func() bool {
		if err := env.Client.Status().Patch(ctx, newer, patch); err != nil {
			t.Fatal(err)
		}
		v, _, _ := unstructured.NestedString(newer.Object, "status", testenv.NewerField)
		return v == "kept"
	})
	chaintest.Mine(t, c, 3)
	waitScanned(t, network, int64(head)+1)

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(newer.GroupVersionKind())
	if err := env.Client.Get(ctx, client.ObjectKey{Name: string(network)}, got); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "status", testenv.NewerField); v != "kept" {
		t.Fatalf("the watcher's write dropped the newer release's status field: %v", got.Object["status"])
	}
}
