package cli

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
)

// completionTimeout bounds a completion's call to the cluster: a shell waits for it.
const completionTimeout = 5 * time.Second

// What completion reads (config/rbac/operator/role.yaml): without it, it offers nothing.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts;apikeys;transfers,verbs=list

// Completion functions for arguments and flags: names read from the cluster, each with a
// short description, or nothing when the cluster cannot be asked (never file names).

// CompleteAccounts completes account names.
func CompleteAccounts(f *Factory) cobra.CompletionFunc {
	return complete(f, func(ctx context.Context, c client.Client) ([]string, error) {
		list := &payoutv1.PayoutAccountList{}
		if err := c.List(ctx, list); err != nil {
			return nil, err
		}
		var out []string
		for _, a := range list.Items {
			out = append(out, a.Name+"\t"+a.Spec.Email)
		}
		return out, nil
	})
}

// CompleteTransferIDs completes transfer ids, newest first, each with its account and status.
func CompleteTransferIDs(f *Factory) cobra.CompletionFunc {
	return complete(f, func(ctx context.Context, c client.Client) ([]string, error) {
		list := &payoutv1.TransferList{}
		if err := c.List(ctx, list); err != nil {
			return nil, err
		}
		sort.SliceStable(list.Items, func(i, j int) bool {
			return list.Items[j].CreationTimestamp.Before(&list.Items[i].CreationTimestamp)
		})
		var out []string
		for _, t := range list.Items {
			status := string(t.Status.Phase)
			if status == "" {
				status = "new"
			}
			out = append(out, t.Name+"\t"+t.Spec.Account+", "+status)
		}
		return out, nil
	})
}

// CompleteKeyIDs completes the ids of API keys that are not revoked, each with its account.
func CompleteKeyIDs(f *Factory) cobra.CompletionFunc {
	return complete(f, func(ctx context.Context, c client.Client) ([]string, error) {
		list := &payoutv1.APIKeyList{}
		if err := c.List(ctx, list); err != nil {
			return nil, err
		}
		var out []string
		for _, k := range list.Items {
			if !k.Spec.Revoked {
				out = append(out, k.Name+"\t"+k.Spec.Account)
			}
		}
		return out, nil
	})
}

// CompleteWords completes a fixed set of words.
func CompleteWords(words ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return words, cobra.ShellCompDirectiveNoFileComp
	}
}

// FirstArg completes only the first positional argument with fn.
func FirstArg(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, toComplete)
	}
}

// complete completes from names, filtered by what is typed so far.
func complete(f *Factory, names func(context.Context, client.Client) ([]string, error)) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := f.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		all, err := names(ctx, c)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, n := range all {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
