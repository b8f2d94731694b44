package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxRecipientID keeps recipient ids exact in JSON numbers (2^53 - 1).
const MaxRecipientID int64 = 1<<53 - 1

// RecipientLineageLabel holds the id of the first recipient of a chain of updates: an update
// (PATCH) creates a new recipient with a new id that keeps the label, and transfers carry the
// label of their recipient. DELETE of the newest id finds every transfer of the recipient,
// whichever of its ids the transfer was created with, with one label query past the cache.
const RecipientLineageLabel = "payout.stablepay.dev/recipient-lineage"

// RecipientDeletedAtAnnotation is where releases before spec.deletion recorded when a
// recipient was deleted through the API (RFC 3339); it is read still, so that a recipient such
// a release deleted reads deleted (docs/operations/upgrade.md), and written no more.
const RecipientDeletedAtAnnotation = "payout.stablepay.dev/deleted-at"

// DeletedAt is when the recipient was deleted through the API, and whether it was:
// spec.deletion.at, or the annotation of an older release.
func (r *Recipient) DeletedAt() (time.Time, bool) {
	if d := r.Spec.Deletion; d != nil && d.At != nil {
		return d.At.Time, true
	}
	v, ok := r.Annotations[RecipientDeletedAtAnnotation]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, true // deleted, time unreadable: treat as long ago
	}
	return t, true
}

// Lineage is the recipient's lineage label value: its own id for a recipient never updated.
func (r *Recipient) Lineage() string {
	if l := r.Labels[RecipientLineageLabel]; l != "" {
		return l
	}
	return r.Name
}

// PostalAddress is the address group of recipient details (spec 2.1.1).
type PostalAddress struct {
	// country is the ISO 3166-1 alpha-2 code; names and alpha-3 codes are refused.
	// +required
	Country CountryCode `json:"country"`
	// +optional
	// +kubebuilder:validation:MaxLength=128
	City string `json:"city,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=256
	FirstLine string `json:"firstLine,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PostCode string `json:"postCode,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	State string `json:"state,omitempty"`
}

// RecipientDetails are the account-type-specific fields of a recipient, named as in the account
// requirements. The fields of spec 2.1.1 are typed so that the schema can check that each
// account type carries its own; the fields of the other national formats go to other.
type RecipientDetails struct {
	// legalType is PRIVATE or BUSINESS.
	// +optional
	// +kubebuilder:validation:Enum=PRIVATE;BUSINESS
	LegalType string `json:"legalType,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=42
	IBAN string `json:"iban,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=16
	SortCode string `json:"sortCode,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	AccountNumber string `json:"accountNumber,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=16
	ABARTN string `json:"abartn,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=32
	AccountType string `json:"accountType,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	BankCode string `json:"bankCode,omitempty"`
	// email of an email_recipient.
	// +optional
	// +kubebuilder:validation:MaxLength=254
	Email string `json:"email,omitempty"`
	// +optional
	Address *PostalAddress `json:"address,omitempty"`
	// other holds every further field of the account type, keyed as in the account
	// requirements ("ifscCode", "address.region", ...).
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Other map[string]string `json:"other,omitempty"`
}

// RecipientSpec is a bank-type recipient (spec 2.1). Everything but the deactivation and the
// deletion's facts is immutable: an update through the API creates a new Recipient with a new id (spec 4.7). A
// field rule self == oldSelf holds only while the optional field is there before and after, so
// the optional immutable fields also keep their presence (the has() rules below).
// +kubebuilder:validation:XValidation:rule="self.type != 'iban' || (has(self.details.iban) && has(self.details.legalType))",message="an iban recipient needs details.iban and details.legalType"
// +kubebuilder:validation:XValidation:rule="self.type != 'sort_code' || (has(self.details.sortCode) && has(self.details.accountNumber))",message="a sort_code recipient needs details.sortCode and details.accountNumber"
// +kubebuilder:validation:XValidation:rule="self.type != 'aba' || (has(self.details.abartn) && has(self.details.accountNumber) && has(self.details.address))",message="an aba recipient needs details.abartn, details.accountNumber and details.address"
// +kubebuilder:validation:XValidation:rule="self.type != 'philippines' || (has(self.details.bankCode) && has(self.details.accountNumber))",message="a philippines recipient needs details.bankCode and details.accountNumber"
// +kubebuilder:validation:XValidation:rule="self.type != 'email_recipient' || (self.currency == 'EUR' && has(self.details.email))",message="an email_recipient is EUR only and needs details.email"
// +kubebuilder:validation:XValidation:rule="!has(self.details.address) || !has(self.country) || self.country == self.details.address.country",message="country must equal details.address.country"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.deactivated) || !oldSelf.deactivated || (has(self.deactivated) && self.deactivated)",message="a deactivated recipient cannot be reactivated"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.replacedBy) || (has(self.replacedBy) && self.replacedBy == oldSelf.replacedBy)",message="replacedBy is set once"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.deletion) || !has(oldSelf.deletion.at) || (has(self.deletion) && has(self.deletion.at) && self.deletion.at == oldSelf.deletion.at)",message="deletion.at is set once and cannot be withdrawn"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.deletion) || !has(oldSelf.deletion.afterTransfer) || (has(self.deletion) && has(self.deletion.afterTransfer) && self.deletion.afterTransfer == oldSelf.deletion.afterTransfer)",message="deletion.afterTransfer is set once and cannot be withdrawn"
// +kubebuilder:validation:XValidation:rule="!has(self.deletion) || (has(self.deactivated) && self.deactivated)",message="a deleted recipient is deactivated"
// +kubebuilder:validation:XValidation:rule="has(self.country) == has(oldSelf.country)",message="country is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.wallet) == has(oldSelf.wallet)",message="wallet is immutable"
type RecipientSpec struct {
	// id is the public integer id; the object is named by it.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9007199254740991
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="id is immutable"
	ID int64 `json:"id"`

	// accountHolderName is the legal name of the account holder.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="accountHolderName is immutable; an update creates a new recipient"
	AccountHolderName string `json:"accountHolderName"`

	// currency of the payouts.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="currency is immutable"
	Currency CurrencyCode `json:"currency"`

	// type is the account type from the account requirements, or email_recipient.
	// +required
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_]{1,39}$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type is immutable"
	Type string `json:"type"`

	// details of the account.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="details are immutable; an update creates a new recipient"
	Details RecipientDetails `json:"details"`

	// country of the recipient: details.address.country, or implied by the account format.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="country is immutable"
	Country CountryCode `json:"country,omitempty"`

	// wallet is the KYC-verified wallet presented at creation, when the account requires KYC.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="wallet is immutable"
	Wallet string `json:"wallet,omitempty"`

	// deactivated recipients stay readable but take no new transfers; a deletion sets it. It
	// cannot be undone.
	// +optional
	Deactivated bool `json:"deactivated,omitempty"`

	// deletion records how the recipient was deleted, each fact once, by the one that deleted it.
	// +optional
	Deletion *RecipientDeletion `json:"deletion,omitempty"`

	// replacedBy is the id of the recipient that an update created in place of this one.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9007199254740991
	ReplacedBy *int64 `json:"replacedBy,omitempty"`
}

// RecipientDeletion is how a recipient was deleted. Its facts are spec, not status: the facade
// and the transfer controller write them with the deactivation, and a status has one writer.
type RecipientDeletion struct {
	// at is when the recipient was deleted through the API (DELETE recipient), written by the
	// facade. Such a deletion stops the recipient's transfers in progress (spec 3.2): the
	// deletion itself records a cancellation on each; a transfer it missed (created while it
	// ran, or left by a deletion that crashed half way) is failed by the transfer controller
	// once RecipientDeletionGrace has passed.
	// +optional
	At *metav1.MicroTime `json:"at,omitempty"`
	// afterTransfer is the id of the transfer whose end made the transfer controller delete the
	// recipient (spec 2.1). Unlike a DELETE through the API, this deletion does not stop the
	// recipient's other transfers in flight.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	AfterTransfer string `json:"afterTransfer,omitempty"`
}

// RecipientStatus is the observed state of a recipient. A recipient's state is its spec (active
// until deactivated); no controller spends a write on mirroring it.
type RecipientStatus struct {
	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: none is written yet; a recipient's state is its spec.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Recipient is a saved bank recipient of an account, in the account's namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName={rcpt,rcpts},categories=payouts
// +kubebuilder:printcolumn:name="ID",type=integer,JSONPath=`.spec.id`
// +kubebuilder:printcolumn:name="Holder",type=string,JSONPath=`.spec.accountHolderName`
// +kubebuilder:printcolumn:name="Currency",type=string,JSONPath=`.spec.currency`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Country",type=string,JSONPath=`.spec.country`
// +kubebuilder:printcolumn:name="Deleted",type=boolean,JSONPath=`.spec.deactivated`
// +kubebuilder:printcolumn:name="Replaced-By",type=integer,JSONPath=`.spec.replacedBy`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name == string(self.spec.id)",message="a recipient is named by its id"
type Recipient struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec RecipientSpec `json:"spec"`
	// +optional
	Status RecipientStatus `json:"status,omitempty"`
}

// RecipientList is a list of Recipient.
//
// +kubebuilder:object:root=true
type RecipientList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Recipient `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Recipient{}, &RecipientList{})
}
