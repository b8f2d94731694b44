package account

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	payoutv1 "github.com/stablepay/payout-operator/api/v1alpha1"
	"github.com/stablepay/payout-operator/cmd/kubectl-payout/internal/cli"
	"github.com/stablepay/payout-operator/internal/admin"
)

// What `account create` needs (config/rbac/operator/role.yaml, generated): it stores the
// account and makes its namespace at once.
//
// +kubebuilder:rbac:groups=payout.stablepay.dev,resources=payoutaccounts,verbs=get;create
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=create

// CreateOptions are the inputs of `account create NAME`.
type CreateOptions struct {
	*cli.Factory

	Email                                                    string
	KYCRequired, V1, V2Screening, V2Offloader, SmartWallet   bool
	BindWallets                                              bool
	MinAmount, MaxAmount, ServiceFeePercent, ServiceFeeFixed string
	AllowedIPs                                               []string
	MaxOpenTransfers                                         int32
	Quotas                                                   payoutv1.Quotas
}

// NewCmdCreate is `account create`.
func NewCmdCreate(f *cli.Factory) *cobra.Command {
	o := &CreateOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an account and its namespace",
		Long: `Create an account and the namespace that holds its recipients, quotes, transfers
and wallets. Unset flags take the settings of the local 'default' account.
Amounts are USD with at most 2 decimals; --min-amount and --max-amount are
inclusive bounds. A bare IP in --allowed-ips means that one address (/32, /128).`,
		Example: `  kubectl payout account create acme
  kubectl payout account create acme --email ops@acme.example --kyc-required \
      --min-amount 10 --max-amount 5000 --allowed-ips 192.0.2.0/24,198.51.100.7
  kubectl payout account create acme --max-open-transfers 500 --max-active-recipients 5000 \
      --max-claims 20000`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(cmd.Context(), args)
		},
	}
	// The defaults come from admin.DefaultAccountSettings, so the plugin and `make run` agree.
	d := admin.DefaultAccountSettings("")
	fs := cmd.Flags()
	fs.StringVar(&o.Email, "email", "", "e-mail of the account (default NAME@example.com)")
	fs.BoolVar(&o.KYCRequired, "kyc-required", d.KYCRequired, "require KYC-verified wallets for recipients and transfers")
	fs.BoolVar(&o.V1, "v1", d.V1Enabled, "provision the account for v1 transfers")
	fs.BoolVar(&o.V2Screening, "v2-screening", d.V2WalletScreening, "screen v2 sender wallets")
	fs.BoolVar(&o.V2Offloader, "v2-offloader", d.V2FeeStructure, "put the account on the v2 fee structure (quotes with v2_offloader=true)")
	fs.BoolVar(&o.SmartWallet, "smart-wallet", d.SmartWalletDeployed, "the account has a deployed smart-contract wallet")
	fs.BoolVar(&o.BindWallets, "bind-wallets", d.BindWallets, "bind the v2 sender wallets whose owners proved control for this account on the wallet verification site (docs/kyc-site.md): other accounts naming one get 403, and its deposits pay no other account's transfer")
	fs.StringVar(&o.MinAmount, "min-amount", d.MinAmount, "smallest USD amount accepted, inclusive (default no limit)")
	fs.StringVar(&o.MaxAmount, "max-amount", d.MaxAmount, "largest USD amount accepted, inclusive (default no limit)")
	fs.StringSliceVar(&o.AllowedIPs, "allowed-ips", d.AllowedIPs, "CIDRs callers must come from, comma-separated (default any address)")
	fs.StringVar(&o.ServiceFeePercent, "service-fee-percent", d.ServiceFeePercent, "service fee in percent, at least 0 and below 100 (default 0)")
	fs.StringVar(&o.ServiceFeeFixed, "service-fee-fixed", d.ServiceFeeFixed, "fixed service fee in USD, display only (default none)")
	fs.Int32Var(&o.MaxOpenTransfers, "max-open-transfers", 0, "cap on open transfers of each method, v1 and v2 (--max-open-v1-transfers and --max-open-v2-transfers override it)")
	fs.Int32Var(&o.Quotas.MaxOpenV1Transfers, "max-open-v1-transfers", d.Quotas.MaxOpenV1Transfers, "cap on the account's v1 transfers that have not ended; past it a create gets 403")
	fs.Int32Var(&o.Quotas.MaxOpenV2Transfers, "max-open-v2-transfers", d.Quotas.MaxOpenV2Transfers, "cap on the account's v2 transfers that have not ended; past it a create gets 403")
	fs.Int32Var(&o.Quotas.MaxActiveRecipients, "max-active-recipients", d.Quotas.MaxActiveRecipients, "cap on the account's active recipients; past it a create gets 403")
	fs.Int32Var(&o.Quotas.MaxClaims, "max-claims", d.Quotas.MaxClaims, "cap on the claims the account's transfers and recipients hold until they are archived; at least the three caps above added up")
	cmd.PreRun = func(cmd *cobra.Command, _ []string) {
		if fs.Changed("max-open-transfers") {
			if !fs.Changed("max-open-v1-transfers") {
				o.Quotas.MaxOpenV1Transfers = o.MaxOpenTransfers
			}
			if !fs.Changed("max-open-v2-transfers") {
				o.Quotas.MaxOpenV2Transfers = o.MaxOpenTransfers
			}
		}
	}
	return cmd
}

// Validate checks the name and every setting before anything is sent to the cluster.
func (o *CreateOptions) Validate(args []string) error {
	if err := cli.ExpectArgs(args, "the account name"); err != nil {
		return err
	}
	if err := admin.ValidateAccountName(args[0]); err != nil {
		return err
	}
	return inFlagTerms(o.settings(args[0]).Validate())
}

// Run creates the account.
func (o *CreateOptions) Run(ctx context.Context, args []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	acct, err := admin.CreateAccount(ctx, c, args[0], o.settings(args[0]))
	if err != nil {
		return inFlagTerms(err)
	}
	fmt.Fprintf(o.Out, "Created account %q with namespace %s\n", acct.Name, payoutv1.AccountNamespace(acct.Name))
	return nil
}

func (o *CreateOptions) settings(name string) admin.AccountSettings {
	s := admin.DefaultAccountSettings(name)
	if o.Email != "" {
		s.Email = o.Email
	}
	s.KYCRequired = o.KYCRequired
	s.V1Enabled = o.V1
	s.V2WalletScreening = o.V2Screening
	s.V2FeeStructure = o.V2Offloader
	s.SmartWalletDeployed = o.SmartWallet
	s.BindWallets = o.BindWallets
	s.MinAmount, s.MaxAmount = o.MinAmount, o.MaxAmount
	s.ServiceFeePercent, s.ServiceFeeFixed = o.ServiceFeePercent, o.ServiceFeeFixed
	s.AllowedIPs = o.AllowedIPs
	s.Quotas = o.Quotas
	return s
}

var flagOfField = map[string]string{
	admin.FieldEmail:             "--email",
	admin.FieldMinAmount:         "--min-amount",
	admin.FieldMaxAmount:         "--max-amount",
	admin.FieldServiceFeePercent: "--service-fee-percent",
	admin.FieldServiceFeeFixed:   "--service-fee-fixed",
	admin.FieldAllowedIPs:        "--allowed-ips",
	admin.FieldMaxOpenV1:         "--max-open-v1-transfers",
	admin.FieldMaxOpenV2:         "--max-open-v2-transfers",
	admin.FieldMaxRecipients:     "--max-active-recipients",
	admin.FieldMaxClaims:         "--max-claims",
}

// inFlagTerms names the flag an invalid setting came from, the word the operator typed.
func inFlagTerms(err error) error {
	var fe *admin.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	flag, ok := flagOfField[fe.Field]
	if !ok {
		return err
	}
	named := *fe
	named.Field = flag
	return &named
}
