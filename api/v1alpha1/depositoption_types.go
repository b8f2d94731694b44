package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DepositOptionName is the object name of the option for token on network.
func DepositOptionName(token Token, network Network) string {
	return string(token) + "-" + string(network)
}

// DepositOptionSpec is an operator's switch for one token on one network (spec 2.3).
type DepositOptionSpec struct {
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="token is immutable"
	Token Token `json:"token"`
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="network is immutable"
	Network Network `json:"network"`
	// enabled: false switches the option off (status unavailable) without touching anything else.
	// +optional
	// +kubebuilder:default=true
	Enabled bool `json:"enabled"`
	// label is the human label, e.g. "USDC on Base".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Label string `json:"label,omitempty"`
}

// DepositOptionStatus is whether the option can take deposits now.
type DepositOptionStatus struct {
	// available: enabled, and the network's deposit watcher is in sync (its ChainCursor says
	// synced, with a fresh heartbeat).
	// +optional
	Available bool `json:"available"`
	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready (True when available; reasons Disabled, NoChainEndpoint or
	// ChainNotSynced when not).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DepositOption reasons of the Ready condition.
const (
	DepositOptionAvailableReason       = "Available"
	DepositOptionDisabledReason        = "Disabled"
	DepositOptionNoChainEndpointReason = "NoChainEndpoint"
	// DepositOptionChainNotSyncedReason: the network's watcher runs but is behind, cannot reach
	// its node, or has stopped writing its heartbeat.
	DepositOptionChainNotSyncedReason = "ChainNotSynced"
)

// DepositOption is a token/network pair deposits can be sent on. Cluster-scoped, named
// <token>-<network>.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={dopt,dopts},categories=payouts
// +kubebuilder:printcolumn:name="Token",type=string,JSONPath=`.spec.token`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.spec.network`
// +kubebuilder:printcolumn:name="Enabled",type=boolean,JSONPath=`.spec.enabled`
// +kubebuilder:printcolumn:name="Available",type=boolean,JSONPath=`.status.available`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.token + '-' + self.spec.network",message="a deposit option is named <token>-<network>"
type DepositOption struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DepositOptionSpec `json:"spec"`
	// +optional
	Status DepositOptionStatus `json:"status,omitempty"`
}

// DepositOptionList is a list of DepositOption.
//
// +kubebuilder:object:root=true
type DepositOptionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DepositOption `json:"items"`
}

func init() {
	SchemeBuilder.Register(&DepositOption{}, &DepositOptionList{})
}
