package admin

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/internal/tenancy"
)

// CreateAccount stores a new account and its namespace. An existing account is refused with
// ErrAccountExists and left as it is: settings of a live account are not changed by accident.
// The account carries payoutv1.MoneyFinalizer from its create, so that its deletion waits until
// nothing in its namespace is owed (the account controller).
func CreateAccount(ctx context.Context, c client.Client, name string, s AccountSettings) (*payoutv1.PayoutAccount, error) {
	if err := ValidateAccountName(name); err != nil {
		return nil, err
	}
	spec, err := s.Spec()
	if err != nil {
		return nil, err
	}
	acct := &payoutv1.PayoutAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{payoutv1.MoneyFinalizer}}, Spec: spec}
	if err := c.Create(ctx, acct); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, refuse(ErrAccountExists, "account %q already exists", name)
		}
		return nil, fmt.Errorf("creating account %q: %w", name, err)
	}
	// The account controller creates the namespace too, but only while it runs; creating it
	// here makes the account usable the moment this returns.
	if err := tenancy.EnsureNamespace(ctx, c, acct); err != nil {
		return acct, fmt.Errorf("account %q is stored, but creating its namespace %s failed (the account controller retries): %w",
			name, payoutv1.AccountNamespace(name), err)
	}
	return acct, nil
}

// GetAccount reads an account that must exist; a missing one is ErrNotFound.
func GetAccount(ctx context.Context, c client.Client, name string) (*payoutv1.PayoutAccount, error) {
	if err := ValidateAccountName(name); err != nil {
		return nil, err
	}
	acct := &payoutv1.PayoutAccount{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, acct); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, refuse(ErrNotFound, "account %q does not exist", name)
		}
		return nil, fmt.Errorf("reading account %q: %w", name, err)
	}
	return acct, nil
}
