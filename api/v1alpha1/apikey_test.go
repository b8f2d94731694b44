package v1alpha1_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/test/testgen"
)

func TestAPIKeyBindingTo(t *testing.T) {
	issued := testgen.Epoch.Time
	acct := func(uid types.UID, made time.Time) *payoutv1.PayoutAccount {
		return &payoutv1.PayoutAccount{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: uid, CreationTimestamp: metav1.NewTime(made)}}
	}
	key := func(uid string) *payoutv1.APIKey {
		return testgen.APIKey("0123456789abcdef", "acme", func(k *payoutv1.APIKey) {
			k.CreationTimestamp, k.Spec.AccountUID = metav1.NewTime(issued), uid
		})
	}
	for _, tc := range []struct {
		name string
		key  *payoutv1.APIKey
		acct *payoutv1.PayoutAccount
		want payoutv1.KeyBinding
	}{
		{"issued to this account", key("u1"), acct("u1", issued.Add(-time.Hour)), payoutv1.KeyBound},
		{"issued to an earlier account of the name", key("u1"), acct("u2", issued.Add(time.Hour)), payoutv1.KeyOfAnotherAccount},
		{"issued to another account, whatever its age", key("u1"), acct("u2", issued.Add(-time.Hour)), payoutv1.KeyOfAnotherAccount},
		{"an older release's key of an account made before it", key(""), acct("u1", issued.Add(-time.Hour)), payoutv1.KeyUnstamped},
		{"an older release's key of an account made in its second", key(""), acct("u1", issued), payoutv1.KeyUnstamped},
		{"an older release's key of an account made after it", key(""), acct("u2", issued.Add(time.Second)), payoutv1.KeyOfAnotherAccount},
	} {
		if got := tc.key.BindingTo(tc.acct); got != tc.want {
			t.Errorf("%s: BindingTo = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAPIKeyBindTo(t *testing.T) {
	a := &payoutv1.PayoutAccount{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: "u1"}}
	k := testgen.APIKey("0123456789abcdef", "acme")
	k.BindTo(a)
	k.BindTo(a)
	want := metav1.OwnerReference{APIVersion: payoutv1.GroupVersion.String(), Kind: "PayoutAccount", Name: "acme", UID: "u1"}
	if k.Spec.AccountUID != "u1" || len(k.OwnerReferences) != 1 || k.OwnerReferences[0] != want {
		t.Errorf("bound twice: accountUID %q, owner references %+v; want u1 and one %+v", k.Spec.AccountUID, k.OwnerReferences, want)
	}
	if k.BindingTo(a) != payoutv1.KeyBound {
		t.Errorf("a key bound to an account is not bound to it")
	}
}
