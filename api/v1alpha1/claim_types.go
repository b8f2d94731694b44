package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClaimKind is the kind of globally unique key a Claim holds.
// +kubebuilder:validation:Enum=customer-uuid;tx-hash;recipient-id;transfer-id;wallet-binding;deposit
type ClaimKind string

const (
	ClaimCustomerUUID ClaimKind = "customer-uuid"
	ClaimTxHash       ClaimKind = "tx-hash"
	ClaimRecipientID  ClaimKind = "recipient-id"
	ClaimTransferID   ClaimKind = "transfer-id"
	// ClaimWalletBinding binds a v2 sender wallet (its chain.SenderKey) to an account that binds
	// wallets (PayoutAccount bindWallets) and that the wallet's owner proved control for (Wallet
	// spec.proof; the first such account to bind it holds it). Its holder is the account:
	// namespace the account's namespace, name the account's name. It carries
	// ClaimBindingFinalizer.
	ClaimWalletBinding ClaimKind = "wallet-binding"
	// ClaimDeposit binds one deposit log at the v2 platform address ("network/tx/log") to the
	// transfer it pays, before that transfer's payout intent: one transaction pays at most one
	// transfer. After a restore it is rebuilt from the provider's payouts (their source of
	// funds).
	ClaimDeposit ClaimKind = "deposit"
)

// ClaimBindingFinalizer keeps a wallet binding in force while its account exists, even once it
// is deleted: the claim controller of a release before wallet bindings (7c77d39) took the
// account for a missing transfer and deleted every binding, and a hand deletion would free the
// wallet as surely. A binding being deleted still binds (only its existence is read); the claim
// controller removes the finalizer once the account is gone.
const ClaimBindingFinalizer = "payout.stablepay.dev/binding"

// ClaimName is the object name of the claim on key: the kind and the SHA-256 of the key. Hashing
// makes any key (mixed-case base58 signatures included) a valid object name, and one name per
// key is what makes the API server's atomic create the uniqueness check.
func ClaimName(kind ClaimKind, key string) string {
	sum := sha256.Sum256([]byte(string(kind) + "\x00" + key))
	return string(kind) + "." + hex.EncodeToString(sum[:])
}

// NewClaim is the claim of key (NormalizeClaimKey) for holder, named ClaimName: creating it is
// taking the key.
func NewClaim(kind ClaimKind, key string, holder ObjectRef) *Claim {
	key = NormalizeClaimKey(kind, key)
	return &Claim{ObjectMeta: metav1.ObjectMeta{Name: ClaimName(kind, key)}, Spec: ClaimSpec{Kind: kind, Key: key, Holder: holder}}
}

// NormalizeClaimKey gives one spelling per key where the key's format is case-insensitive.
func NormalizeClaimKey(kind ClaimKind, key string) string {
	switch kind {
	case ClaimCustomerUUID:
		return strings.ToLower(key)
	case ClaimTxHash, ClaimWalletBinding:
		if strings.HasPrefix(key, "0x") || strings.HasPrefix(key, "0X") {
			return strings.ToLower(key)
		}
	}
	return key
}

// ClaimSpec binds a globally unique key to the object holding it.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a claim is immutable"
type ClaimSpec struct {
	// kind of key.
	// +required
	Kind ClaimKind `json:"kind"`
	// key as claimed (normalised), for people reading the claim.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Key string `json:"key"`
	// holder is the object the key belongs to.
	// +required
	Holder ObjectRef `json:"holder"`
}

// ClaimStatus is where the facade asks for a claim's release. It is a status so that the facade
// writes it through the status subresource, which changes nothing else of a claim: a role that
// could patch claims could also give one an owner reference to a missing object, and the
// garbage collector would delete the claim for it.
type ClaimStatus struct {
	// releaseRequested asks the claim controller to release the claim: the facade sets it when
	// the holder it claimed the key for was not made or does not take the key. The controller
	// deletes the claim only while its holder, read past the cache, does not hold the key, and
	// never a deposit claim or a wallet binding on this request.
	// +optional
	ReleaseRequested bool `json:"releaseRequested,omitempty"`
}

// Claim reserves a key that must be unique across all accounts: a customer_uuid, a deposit
// transaction hash, a recipient id or a transfer id. Cluster-scoped and named after the key,
// so a second create of the same key fails with AlreadyExists on every facade replica. A claim
// costs one write, its create; its status is written only to ask for its release.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={clm,clms},categories=payouts
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.kind`
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=`.spec.key`
// +kubebuilder:printcolumn:name="Holder-Namespace",type=string,JSONPath=`.spec.holder.namespace`
// +kubebuilder:printcolumn:name="Holder",type=string,JSONPath=`.spec.holder.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Claim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClaimSpec `json:"spec"`
	// +optional
	Status ClaimStatus `json:"status,omitempty"`
}

// ClaimList is a list of Claim.
//
// +kubebuilder:object:root=true
type ClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Claim `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Claim{}, &ClaimList{})
}
