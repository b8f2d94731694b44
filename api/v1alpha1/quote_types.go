package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// QuoteValidity is how long a quote can be used (spec 8.2).
const QuoteValiditySeconds = 300

// QuoteSpec is a priced offer (spec 2.4), fixed when GET quote answers; amounts in USD unless
// named otherwise.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a quote is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.feeFxPercent) == has(self.feeFxAmount) && has(self.feeFxAmount) == has(self.feePayoutAmount)",message="the fee breakdown is present or absent as a whole"
// +kubebuilder:validation:XValidation:rule="!has(self.v2Offloader) || !self.v2Offloader || (!has(self.providerCharge) && (!has(self.serviceFeeFixed) || double(self.serviceFeeFixed) == 0.0))",message="v2-offloader quotes carry no provider charge and no fixed fee"
type QuoteSpec struct {
	// account the quote was issued to.
	// +required
	Account string `json:"account"`
	// sourceAmount is the USD amount before fees.
	// +required
	SourceAmount USDAmount `json:"sourceAmount"`
	// targetCurrency of the payout.
	// +required
	TargetCurrency CurrencyCode `json:"targetCurrency"`
	// usdToTargetRate converts 1 USD to the target currency.
	// +required
	USDToTargetRate Decimal `json:"usdToTargetRate"`
	// providerCharge is deducted before conversion; absent when zero.
	// +optional
	ProviderCharge *Decimal `json:"providerCharge,omitempty"`
	// serviceFeePercent is the platform fee percentage applied.
	// +required
	ServiceFeePercent Decimal `json:"serviceFeePercent"`
	// serviceFeeFixed is the fixed fee shown; absent when not applicable.
	// +optional
	ServiceFeeFixed *Decimal `json:"serviceFeeFixed,omitempty"`
	// targetAmount is what the recipient receives, in the target currency.
	// +required
	TargetAmount Decimal `json:"targetAmount"`
	// transferFee is the corridor's fee in USD.
	// +required
	TransferFee Decimal `json:"transferFee"`
	// feeFxPercent, feeFxAmount and feePayoutAmount break transferFee down.
	// +optional
	FeeFxPercent *Decimal `json:"feeFxPercent,omitempty"`
	// +optional
	FeeFxAmount *Decimal `json:"feeFxAmount,omitempty"`
	// +optional
	FeePayoutAmount *Decimal `json:"feePayoutAmount,omitempty"`
	// estimatedDelivery of the payout if the transfer starts now.
	// +required
	EstimatedDelivery metav1.Time `json:"estimatedDelivery"`
	// expiresAt ends the quote's validity (5 minutes after issue).
	// +required
	ExpiresAt metav1.Time `json:"expiresAt"`
	// v2Offloader: priced for the v2 pipeline.
	// +optional
	V2Offloader bool `json:"v2Offloader,omitempty"`
	// recipientType the quote was priced for ("email_recipient" or empty).
	// +optional
	// +kubebuilder:validation:MaxLength=40
	RecipientType string `json:"recipientType,omitempty"`
	// rateSource names the rate table and its date, for audit.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	RateSource string `json:"rateSource,omitempty"`
}

// Quote is a single-use, five-minute price for a payout, in the account's namespace. Named by
// its quoteId (a UUID). It has no status: the creation of the transfer named after it
// (TransferNameForQuote) consumes it, the API server's atomic create being the single use, and
// no controller spends a write on a quote.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName={qt,qts},categories=payouts
// +kubebuilder:printcolumn:name="Amount",type=string,JSONPath=`.spec.sourceAmount`
// +kubebuilder:printcolumn:name="Currency",type=string,JSONPath=`.spec.targetCurrency`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetAmount`
// +kubebuilder:printcolumn:name="Expires",type=string,format=date-time,JSONPath=`.spec.expiresAt`,description="end of validity (kubectl shows a future date column as <invalid>, so this one is the timestamp)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')",message="a quote is named by its quoteId, a lower-case UUID"
type Quote struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec QuoteSpec `json:"spec"`
}

// QuoteList is a list of Quote.
//
// +kubebuilder:object:root=true
type QuoteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Quote `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Quote{}, &QuoteList{})
}

// TransferNameForQuote is the id of the transfer that uses quote quoteID. A quote is single use
// because its transfer has one possible name: a second transfer on the same quote fails the
// API server's create with AlreadyExists. Quote ids are random UUIDs, so the ids are 96
// unpredictable bits, as unique across accounts as the quotes.
func TransferNameForQuote(quoteID string) string {
	sum := sha256.Sum256([]byte("transfer\x00" + strings.ToLower(quoteID)))
	return hex.EncodeToString(sum[:12])
}
