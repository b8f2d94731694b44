package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIKeyLastUsedAnnotation is when the facade last saw the key authenticate a request (RFC 3339,
// seconds), written by the facade at most once per interval per key and replica
// (internal/keyuse): accurate to that interval, and informational only, for the developer area
// and `kubectl payout apikey list`. It is an annotation, not status, because the APIKey
// controller alone writes a key's status (one writer per status, docs/architecture.md), and
// nothing decides on it.
const APIKeyLastUsedAnnotation = "payout.stablepay.dev/last-used"

// APIKeySpec records one API key of an account. The secret itself is never stored: only its
// SHA-256, which the facade compares in constant time. Keys are high-entropy random values, so
// a fast hash is safe here, unlike for passwords.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.revoked) || !oldSelf.revoked || (has(self.revoked) && self.revoked)",message="a revoked key cannot be reinstated"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.accountUID) || (has(self.accountUID) && self.accountUID == oldSelf.accountUID)",message="accountUID is immutable once set"
type APIKeySpec struct {
	// account is the PayoutAccount the key authenticates as.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="account is immutable"
	Account string `json:"account"`

	// accountUID is the UID of the account the key was issued to: an account deleted and made
	// again under the same name is another account, and the keys of the first never
	// authenticate as the second. Set at issue; keys of releases before it have none until the
	// APIKey controller stamps them (docs/operations/upgrade.md).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	AccountUID string `json:"accountUID,omitempty"`

	// secretHash is "sha256:" and the hex SHA-256 of the whole key string
	// svc_live_<keyId>_<secret>.
	// +required
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="secretHash is immutable"
	SecretHash string `json:"secretHash"`

	// revoked keys stay recorded for audit but never authenticate again (spec 5.2).
	// +optional
	Revoked bool `json:"revoked,omitempty"`

	// description is free text for operators.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Description string `json:"description,omitempty"`
}

// APIKeyStatus is the observed state of a key.
type APIKeyStatus struct {
	// revokedAt is when the controller first saw the key revoked.
	// +optional
	RevokedAt *metav1.Time `json:"revokedAt,omitempty"`

	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready (False when revoked or its account is missing).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// APIKey is a credential of the form svc_live_<keyId>_<secret>. Cluster-scoped and named by its
// keyId, so that the API server's atomic create makes key ids unique and the facade finds a key
// by name.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={apik,apiks},categories=payouts
// +kubebuilder:printcolumn:name="Account",type=string,JSONPath=`.spec.account`
// +kubebuilder:printcolumn:name="Revoked",type=boolean,JSONPath=`.spec.revoked`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]{8,40}$')",message="an API key is named by its keyId: 8 to 40 lower-case letters and digits"
type APIKey struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec APIKeySpec `json:"spec"`
	// +optional
	Status APIKeyStatus `json:"status,omitempty"`
}

// LastUsed is the key's APIKeyLastUsedAnnotation; false when it was never recorded or does
// not parse.
func (k *APIKey) LastUsed() (time.Time, bool) {
	v, ok := k.Annotations[APIKeyLastUsedAnnotation]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// KeyBinding is how a key stands to the account of its name as it is now.
type KeyBinding int

const (
	// KeyBound: the key was issued to this account.
	KeyBound KeyBinding = iota
	// KeyUnstamped: a key of a release before spec.accountUID, made after this account was:
	// issuing read the account, so it was issued to this one. The APIKey controller stamps it.
	KeyUnstamped
	// KeyOfAnotherAccount: the key was issued to an earlier account of the same name, deleted
	// since. It never authenticates.
	KeyOfAnotherAccount
)

// BindingTo says whether the key was issued to acct, the account of its name as read now. A key
// without accountUID was issued by a release before it: an account made after the key cannot be
// the one it was issued to. One made in the same second (timestamps have seconds) is taken for
// its own: an account's deletion waits for its finalizer and the release of its namespace, so
// an account deleted and made again within the second of a key's issue does not happen.
func (k *APIKey) BindingTo(acct *PayoutAccount) KeyBinding {
	switch {
	case k.Spec.AccountUID != "":
		if k.Spec.AccountUID == string(acct.UID) {
			return KeyBound
		}
		return KeyOfAnotherAccount
	case acct.CreationTimestamp.After(k.CreationTimestamp.Time):
		return KeyOfAnotherAccount
	}
	return KeyUnstamped
}

// BindTo records acct as the account the key was issued to: its UID, and an owner reference so
// that the garbage collector deletes the key once the account is gone. The reference neither
// controls nor blocks: the account's deletion does not wait for its keys, and whoever issues a
// key needs no right on the account's finalizers (OwnerReferencesPermissionEnforcement).
func (k *APIKey) BindTo(acct *PayoutAccount) {
	k.Spec.AccountUID = string(acct.UID)
	for _, ref := range k.OwnerReferences {
		if ref.UID == acct.UID {
			return
		}
	}
	k.OwnerReferences = append(k.OwnerReferences, metav1.OwnerReference{
		APIVersion: GroupVersion.String(), Kind: "PayoutAccount", Name: acct.Name, UID: acct.UID,
	})
}

// APIKeyList is a list of APIKey.
//
// +kubebuilder:object:root=true
type APIKeyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []APIKey `json:"items"`
}

func init() {
	SchemeBuilder.Register(&APIKey{}, &APIKeyList{})
}
