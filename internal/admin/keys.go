package admin

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/apikey"
)

// IssueKey issues an API key of an existing account, bound to it by its UID and owned by it.
// Only the key's hash is stored: full is the one and only copy of the key.
func IssueKey(ctx context.Context, c client.Client, account string) (full, keyID string, err error) {
	acct, err := GetAccount(ctx, c, account)
	if err != nil {
		return "", "", err
	}
	key, err := apikey.New()
	if err != nil {
		return "", "", fmt.Errorf("generating an API key: %w", err)
	}
	// Named by its id, so the API server's atomic create refuses a duplicate id instead of
	// overwriting a key (64 random bits make one unlikely).
	obj := &payoutv1.APIKey{
		ObjectMeta: metav1.ObjectMeta{Name: key.ID},
		Spec:       payoutv1.APIKeySpec{Account: account, SecretHash: key.Hash},
	}
	// bound to this account, not to its name: a later account of the same name is another
	obj.BindTo(acct)
	if err := c.Create(ctx, obj); err != nil {
		return "", "", fmt.Errorf("storing API key %s of account %q: %w", key.ID, account, err)
	}
	return key.Full, key.ID, nil
}

// RevokeKey revokes a key for good; the record stays for audit. Revoking a revoked key changes
// nothing and is not an error.
func RevokeKey(ctx context.Context, c client.Client, keyID string) error {
	if err := ValidateKeyID(keyID); err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		k := &payoutv1.APIKey{}
		if err := c.Get(ctx, client.ObjectKey{Name: keyID}, k); err != nil {
			if apierrors.IsNotFound(err) {
				return refuse(ErrNotFound, "API key %s does not exist", keyID)
			}
			return fmt.Errorf("reading API key %s: %w", keyID, err)
		}
		if k.Spec.Revoked {
			return nil
		}
		before := k.DeepCopy()
		k.Spec.Revoked = true
		return c.Patch(ctx, k, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
}
