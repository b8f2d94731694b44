// Package index declares the field indexes of the informer cache. Controllers, the REST facade
// and tests register and query the same names through this one file.
package index

import (
	"context"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

const (
	// Name indexes objects by metadata.name across namespaces: transfer ids and recipient ids
	// are global, but their objects live in the owning account's namespace.
	Name = "metadata.name"
	// APIKeyAccount indexes API keys by their account.
	APIKeyAccount = "spec.account"
	// TransferRecipient indexes transfers by "<namespace>/<recipientId>".
	TransferRecipient = "spec.recipientId"
	// TransferDepositAddress indexes transfers by deposit address.
	TransferDepositAddress = "spec.depositAddress"
	// DepositTxHash indexes the chain watcher's deposits by lower-case transaction hash.
	DepositTxHash = "spec.txHash"
	// RecipientActive indexes the recipients that are active (not deactivated) by "true".
	RecipientActive = "spec.active"
)

// FieldIndexer is the part of a manager or cache that registers indexes.
type FieldIndexer = client.FieldIndexer

// Register adds every index of the service to the cache behind indexer.
func Register(ctx context.Context, indexer FieldIndexer) error {
	for _, ix := range []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&payoutv1.Transfer{}, Name, byName},
		{&payoutv1.Recipient{}, Name, byName},
		{&payoutv1.APIKey{}, APIKeyAccount, func(o client.Object) []string {
			return []string{o.(*payoutv1.APIKey).Spec.Account}
		}},
		{&payoutv1.Transfer{}, TransferRecipient, func(o client.Object) []string {
			t := o.(*payoutv1.Transfer)
			return []string{RecipientKey(t.Namespace, t.Spec.RecipientID)}
		}},
		{&payoutv1.Transfer{}, TransferDepositAddress, func(o client.Object) []string {
			return []string{payoutv1.NormalizeWallet(o.(*payoutv1.Transfer).Spec.DepositAddress)}
		}},
		{&payoutv1.Deposit{}, DepositTxHash, func(o client.Object) []string {
			return []string{strings.ToLower(o.(*payoutv1.Deposit).Spec.TxHash)}
		}},
		{&payoutv1.Recipient{}, RecipientActive, func(o client.Object) []string {
			if o.(*payoutv1.Recipient).Spec.Deactivated {
				return nil
			}
			return []string{"true"}
		}},
	} {
		if err := indexer.IndexField(ctx, ix.obj, ix.field, ix.fn); err != nil {
			return err
		}
	}
	return nil
}

// RecipientKey is the TransferRecipient index value of a recipient.
func RecipientKey(namespace string, id int64) string {
	return namespace + "/" + strconv.FormatInt(id, 10)
}

func byName(o client.Object) []string { return []string{o.GetName()} }
