package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AccountNamespacePrefix prefixes the namespace that holds an account's recipients, quotes,
// transfers and wallets: the namespace is the tenancy boundary of an account.
const AccountNamespacePrefix = "payout-"

// AccountNamespace is the namespace of the account named name.
func AccountNamespace(name string) string { return AccountNamespacePrefix + name }

// AccountLabel names an account: on its namespace, and on a deposit recorded in OrphanNamespace.
const AccountLabel = "payout.stablepay.dev/account"

// ReleasedLabel marks an account namespace that may be deleted: its account is being deleted and
// nothing in it is owed (set by the account controller, value "true"). The ValidatingAdmission
// Policy of config/policy refuses to delete an account namespace without it, since deleting a
// namespace deletes its transfers, deposits and refunds, the record of what is owed; and the
// chain watcher records a deposit for a released namespace in OrphanNamespace instead.
const ReleasedLabel = "payout.stablepay.dev/released"

// NamespaceReleased reports whether the namespace's labels mark it released.
func NamespaceReleased(labels map[string]string) bool { return labels[ReleasedLabel] == "true" }

// OrphanAccountName is reserved: no account may take it, so that its namespace, OrphanNamespace,
// is never an account's.
const OrphanAccountName = "orphaned"

// OrphanNamespace holds the deposits that arrived for a transfer whose account was deleted (its
// namespace going or gone), labelled with the transfer and the account, and the refunds of them
// (`kubectl payout refund ID`): the chain watcher records them here rather than pass them.
const OrphanNamespace = AccountNamespacePrefix + OrphanAccountName

// PayoutAccountSpec holds the account-level settings of spec sections 1 and 4.
// Defaults are those of the `default` account of the local-run contract.
type PayoutAccountSpec struct {
	// email receives the account's notifications and is the v2 customer_email default.
	// +required
	// +kubebuilder:validation:MaxLength=254
	// +kubebuilder:validation:Pattern=`^[^@\s]+@[^@\s]+$`
	Email string `json:"email"`

	// kycRequired makes wallet KYC verification mandatory for recipients and transfers.
	// +optional
	// +kubebuilder:default=false
	KYCRequired bool `json:"kycRequired"`

	// v1Enabled: the account is provisioned for v1 transfers (spec 4.10 rule 3).
	// +optional
	// +kubebuilder:default=true
	V1Enabled bool `json:"v1Enabled"`

	// v2WalletScreening screens v2 sender wallets against the risk provider (spec 4.11).
	// +optional
	// +kubebuilder:default=true
	V2WalletScreening bool `json:"v2WalletScreening"`

	// v2FeeStructure: quotes asked with v2_offloader=true carry the v2 fees (spec 2.4).
	// +optional
	// +kubebuilder:default=false
	V2FeeStructure bool `json:"v2FeeStructure"`

	// bindWallets binds a v2 sender wallet to this account once its owner proved control for
	// the account on the wallet verification site (Wallet spec.proof): at the proof, or when a v2
	// transfer of the account paid from a proven wallet completes. From then on another account
	// that names the wallet in a v2 transfer is refused (403), and a v2 deposit from it pays no
	// other account's transfer.
	// Off by default: the spec has no such rule; it closes, for accounts that want it, the
	// shared v2 address's weakness that anyone may declare anyone's wallet.
	// +optional
	// +kubebuilder:default=false
	BindWallets bool `json:"bindWallets,omitempty"`

	// smartWalletDeployed: the account has a deployed smart-contract wallet (spec 4.10 rule 4).
	// +optional
	// +kubebuilder:default=true
	SmartWalletDeployed bool `json:"smartWalletDeployed"`

	// amountLimits are inclusive USD bounds on quotes and transfers (spec 4.13).
	// +optional
	AmountLimits AmountLimits `json:"amountLimits,omitempty"`

	// serviceFee is the platform fee of spec 2.4 and 4.14.
	// +optional
	ServiceFee ServiceFee `json:"serviceFee,omitempty"`

	// allowedIPs restricts callers to these CIDRs; empty allows every address (spec 5.4).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=49
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="allowedIPs entries must be CIDRs such as 192.0.2.0/24"
	AllowedIPs []string `json:"allowedIPs,omitempty"`

	// quotas cap what the account holds at once (every object sits in every replica's cache).
	// +optional
	// +kubebuilder:default={maxOpenV1Transfers:100,maxOpenV2Transfers:100,maxActiveRecipients:1000,maxClaims:2000}
	Quotas Quotas `json:"quotas,omitempty"`
}

// The default quotas, equal to the markers' defaults (the schema suite's "checks account settings").
// With them, ten accounts at their caps hold the facade's and the controllers' caches far below
// the pods' 512 MiB (docs/benchmarks.md, "Quotas").
const (
	DefaultMaxOpenV1Transfers  = 100
	DefaultMaxOpenV2Transfers  = 100
	DefaultMaxActiveRecipients = 1000
	DefaultMaxClaims           = 2000
)

// Quotas are an account's caps; a create past one is refused with 403 naming the cap. Zero
// (a spec written before quotas existed, or built in memory) reads as the default: the API
// server fills the defaults in on every read, before the rule below is judged.
// +kubebuilder:validation:XValidation:rule="self.maxOpenV1Transfers + self.maxOpenV2Transfers + self.maxActiveRecipients <= self.maxClaims",message="maxClaims must be at least maxOpenV1Transfers + maxOpenV2Transfers + maxActiveRecipients: each open transfer and each active recipient holds a claim"
type Quotas struct {
	// maxOpenV1Transfers caps the account's v1 transfers that have not ended (spec 3.1).
	// +optional
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxOpenV1Transfers int32 `json:"maxOpenV1Transfers,omitempty"`
	// maxOpenV2Transfers caps the account's v2 transfers that have not ended: a v2 transfer has
	// no expiry, so without a cap an account could keep any number open.
	// +optional
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxOpenV2Transfers int32 `json:"maxOpenV2Transfers,omitempty"`
	// maxActiveRecipients caps the account's active recipients (an update replaces one, so it
	// is not refused at the cap).
	// +optional
	// +kubebuilder:default=1000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	MaxActiveRecipients int32 `json:"maxActiveRecipients,omitempty"`
	// maxClaims caps the claims held by the account's objects (a customer_uuid per transfer
	// until it is archived, a recipient id per recipient, a transaction hash per confirmation):
	// the bound on ended transfers and deleted recipients still in the API server.
	// +optional
	// +kubebuilder:default=2000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	MaxClaims int32 `json:"maxClaims,omitempty"`
}

// Limits are q with every unset cap at its default.
func (q Quotas) Limits() Quotas {
	def := func(v, d int32) int32 {
		if v <= 0 {
			return d
		}
		return v
	}
	return Quotas{
		MaxOpenV1Transfers:  def(q.MaxOpenV1Transfers, DefaultMaxOpenV1Transfers),
		MaxOpenV2Transfers:  def(q.MaxOpenV2Transfers, DefaultMaxOpenV2Transfers),
		MaxActiveRecipients: def(q.MaxActiveRecipients, DefaultMaxActiveRecipients),
		MaxClaims:           def(q.MaxClaims, DefaultMaxClaims),
	}
}

// AmountLimits bounds USD amounts; an absent bound means no limit.
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || double(self.min) <= double(self.max)",message="min must not exceed max"
type AmountLimits struct {
	// min is the smallest accepted amount, inclusive.
	// +optional
	Min *USDAmount `json:"min,omitempty"`
	// max is the largest accepted amount, inclusive.
	// +optional
	Max *USDAmount `json:"max,omitempty"`
}

// ServiceFee is the account's platform fee.
type ServiceFee struct {
	// percent of the source amount (1.5 means 1.5%), at least 0 and below 100: a fee of 100% or
	// more leaves nothing to price (pricing.CheckServiceFeePercent). The rule reads the text,
	// so that no rounding through double admits 100.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|[1-9][0-9]?)([.][0-9]+)?$')",message="percent must be below 100"
	Percent *Decimal `json:"percent,omitempty"`
	// fixed fee in USD, shown on quotes (display only, spec 2.4).
	// +optional
	Fixed *USDAmount `json:"fixed,omitempty"`
}

// PayoutAccountStatus is the observed state of an account.
type PayoutAccountStatus struct {
	// namespace holds the account's recipients, quotes, transfers and wallets.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PayoutAccount is a customer of the service: its settings, and through its namespace, all of
// its business objects. Cluster-scoped: its name is the account name.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={pacct,paccts},categories=payouts
// +kubebuilder:printcolumn:name="Email",type=string,JSONPath=`.spec.email`
// +kubebuilder:printcolumn:name="KYC",type=boolean,JSONPath=`.spec.kycRequired`
// +kubebuilder:printcolumn:name="V1",type=boolean,JSONPath=`.spec.v1Enabled`
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.status.namespace`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 50 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="account names are DNS labels of at most 50 characters"
// +kubebuilder:validation:XValidation:rule="self.metadata.name != 'orphaned'",message="the account name orphaned is reserved: its namespace holds the deposits of deleted accounts"
type PayoutAccount struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PayoutAccountSpec `json:"spec"`
	// +optional
	Status PayoutAccountStatus `json:"status,omitempty"`
}

// PayoutAccountList is a list of PayoutAccount.
//
// +kubebuilder:object:root=true
type PayoutAccountList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PayoutAccount `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PayoutAccount{}, &PayoutAccountList{})
}
