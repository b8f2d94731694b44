package wallet

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/kycsite"
)

// What `wallet link` needs: the account, and the Secret the wallet verification site reads
// its link key from (config/manager/kycsite.yaml), by name only.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts,verbs=get
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get,resourceNames=payout-kyc-site

// The Secret of the site's link key, as config/default installs it, and its keys.
const (
	DefaultSiteSecret = "payout-system/payout-kyc-site"
	SecretLinkKey     = "link-key"
	SecretURL         = "url"
)

// Bounds of --ttl: a link lets whoever holds it prove a wallet for the account until it
// expires (docs/threat-model.md), so it lives no longer than a customer needs to act on it.
const (
	minLinkTTL     = time.Minute
	maxLinkTTL     = 30 * 24 * time.Hour
	defaultLinkTTL = 72 * time.Hour
)

// LinkOptions are the inputs of `wallet link ACCOUNT [--ttl D] [--secret NS/NAME]`.
type LinkOptions struct {
	*cli.Factory

	TTL    time.Duration
	Secret string
}

// NewCmdLink is `wallet link`.
func NewCmdLink(f *cli.Factory) *cobra.Command {
	o := &LinkOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "link ACCOUNT [--ttl DURATION]",
		Short: "Print a wallet verification link ({kyc_url}) for an account",
		Long: `Print a link to the wallet verification site (the spec's {kyc_url}) naming an
account: whoever opens it can prove a wallet for that account, and for no other,
until it expires. Hand it to the account's customer.

The link is signed with the site's link key, read from the Secret the site reads it
from (--secret, key "link-key"); the site's public origin is that Secret's "url".
The facade's pod is not needed.`,
		Example:           `  kubectl payout wallet link acme --ttl 24h`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cli.FirstArg(cli.CompleteAccounts(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	cmd.Flags().DurationVar(&o.TTL, "ttl", defaultLinkTTL, "how long the link is valid (1m to 720h)")
	cmd.Flags().StringVar(&o.Secret, "secret", DefaultSiteSecret, "NAMESPACE/NAME of the Secret holding the site's link key and URL")
	return cmd
}

// Validate checks the account name and the link's life before anything is sent.
func (o *LinkOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the account"); err != nil {
		return err
	}
	if o.TTL < minLinkTTL || o.TTL > maxLinkTTL {
		return cli.UsageErrorf("--ttl %v is not between %v and %v", o.TTL, minLinkTTL, maxLinkTTL)
	}
	if ns, name, ok := strings.Cut(o.Secret, "/"); !ok || ns == "" || name == "" {
		return cli.UsageErrorf("--secret %q is not NAMESPACE/NAME", o.Secret)
	}
	return admin.ValidateAccountName(args[0])
}

// Run prints the link.
func (o *LinkOptions) Run(ctx context.Context, args []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	// a link for an account that does not exist would only fail on the site, in the customer's hands
	if _, err := admin.GetAccount(ctx, c, args[0]); err != nil {
		return err
	}
	ns, name, _ := strings.Cut(o.Secret, "/")
	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the wallet verification site's Secret %s does not exist (docs/kyc-site.md)", o.Secret)
		}
		return fmt.Errorf("reading the wallet verification site's Secret %s: %w", o.Secret, err)
	}
	key, site := sec.Data[SecretLinkKey], strings.TrimSpace(string(sec.Data[SecretURL]))
	switch {
	case len(key) < 32:
		return fmt.Errorf("the Secret %s has no %q of at least 32 bytes", o.Secret, SecretLinkKey)
	case site == "":
		return fmt.Errorf("the Secret %s has no %q, the site's public origin", o.Secret, SecretURL)
	}
	expires := o.Clock.Now().Add(o.TTL)
	fmt.Fprintln(o.Out, kycsite.LinkURL(site, kycsite.IssueLink(key, args[0], expires)))
	fmt.Fprintf(o.ErrOut, "Link for account %q, valid until %s\n", args[0], expires.UTC().Format(time.RFC3339))
	return nil
}
