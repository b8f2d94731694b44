package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NormalizeWallet gives one spelling per wallet: EVM addresses compare case-insensitively,
// base58 (Solana) addresses are case-sensitive.
func NormalizeWallet(address string) string {
	a := strings.TrimSpace(address)
	if strings.HasPrefix(a, "0x") || strings.HasPrefix(a, "0X") {
		return "0x" + strings.ToLower(a[2:])
	}
	return a
}

// WalletName is the object name of a wallet record: a hash, because base58 addresses are
// mixed-case and object names are not.
func WalletName(address string) string {
	sum := sha256.Sum256([]byte(NormalizeWallet(address)))
	return "w-" + hex.EncodeToString(sum[:20])
}

// WalletSpec is a wallet known to an account.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.proof) || (has(self.proof) && self.proof == oldSelf.proof)",message="a wallet's proof of control is immutable once written"
type WalletSpec struct {
	// address of the wallet (normalised: EVM lower-case).
	// +required
	// +kubebuilder:validation:MinLength=32
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="address is immutable"
	Address string `json:"address"`
	// kycVerified: the wallet passed KYC verification for this account.
	// +optional
	KYCVerified bool `json:"kycVerified,omitempty"`
	// verifiedBy names who or what verified it (an operator, a provider).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	VerifiedBy string `json:"verifiedBy,omitempty"`
	// proof is the wallet owner's proof of control for this account: the Sign-In with Ethereum
	// message (EIP-4361) the wallet verification site issued and the wallet's signature of it,
	// kept for audit. A wallet with a proof is one an account that binds wallets (PayoutAccount
	// bindWallets) binds.
	// +optional
	Proof *WalletProof `json:"proof,omitempty"`
}

// WalletProof is a signed EIP-4361 message: the wallet's owner proved control for the account.
type WalletProof struct {
	// message is the EIP-4361 text signed, byte for byte.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	Message string `json:"message"`
	// signature is the EIP-191 (personal_sign) signature of message: 65 bytes in hex.
	// +required
	// +kubebuilder:validation:Pattern=`^0x[0-9a-fA-F]{130}$`
	Signature string `json:"signature"`
	// signer is the address recovered from the signature (EIP-55 case); it is the wallet.
	// +required
	// +kubebuilder:validation:Pattern=`^0x[0-9a-fA-F]{40}$`
	Signer string `json:"signer"`
	// provenAt is when the site checked the signature.
	// +required
	ProvenAt metav1.Time `json:"provenAt"`
}

// WalletStatus is the observed state of a wallet record.
type WalletStatus struct {
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

// Wallet is the local KYC record of a wallet for one account (kubectl-payout wallet verify), in
// the account's namespace. Verification is per account.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName={wal,wals},categories=payouts
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.spec.address`
// +kubebuilder:printcolumn:name="KYC",type=boolean,JSONPath=`.spec.kycVerified`
// +kubebuilder:printcolumn:name="Proven",type=date,JSONPath=`.spec.proof.provenAt`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Wallet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec WalletSpec `json:"spec"`
	// +optional
	Status WalletStatus `json:"status,omitempty"`
}

// WalletList is a list of Wallet.
//
// +kubebuilder:object:root=true
type WalletList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Wallet `json:"items"`
}

// BlockedWalletSpec is an entry of the local risk list.
type BlockedWalletSpec struct {
	// address of the wallet (normalised: EVM lower-case).
	// +required
	// +kubebuilder:validation:MinLength=32
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="address is immutable"
	Address string `json:"address"`
	// reason it is blocked.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Reason string `json:"reason,omitempty"`
}

// BlockedWalletStatus is the observed state of a risk-list entry.
type BlockedWalletStatus struct {
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

// BlockedWallet puts a wallet on the local risk list (kubectl-payout wallet block): wallet
// screening fails for it on every account.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={bw,bws},categories=payouts
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.spec.address`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.spec.reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BlockedWallet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec BlockedWalletSpec `json:"spec"`
	// +optional
	Status BlockedWalletStatus `json:"status,omitempty"`
}

// BlockedWalletList is a list of BlockedWallet.
//
// +kubebuilder:object:root=true
type BlockedWalletList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BlockedWallet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Wallet{}, &WalletList{}, &BlockedWallet{}, &BlockedWalletList{})
}
