package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RecoveryName is the name of the one Recovery object.
const RecoveryName = "payoutd"

// RecoverySpec is what operators say: pause money, or resume it after a check that found the
// cluster behind the ledgers of record.
type RecoverySpec struct {
	// paused stops all money from moving (no payout is created, no refund signed) until it is
	// cleared: `kubectl payout recover --pause`.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// acknowledged is the check (status.checkID) an operator acknowledged after redoing what the
	// check lists (`kubectl payout recover --resume`): money moves again after a check that
	// required recovery only once it is acknowledged.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Acknowledged string `json:"acknowledged,omitempty"`
}

// RecoveryState is the outcome of the start-up check.
// +kubebuilder:validation:Enum=Checking;Clear;Required
type RecoveryState string

const (
	// RecoveryChecking: the check of this start has not finished; no money moves.
	RecoveryChecking RecoveryState = "Checking"
	// RecoveryClear: the cluster knows every payout the provider holds, and its records are
	// recent.
	RecoveryClear RecoveryState = "Clear"
	// RecoveryRequired: the provider holds payouts the cluster does not know, or the cluster's
	// records stop long before the start (an etcd restore), or payoutd was started with
	// --recovery: what could be rebuilt was, and no money moves until an operator acknowledges.
	RecoveryRequired RecoveryState = "Required"
)

// RecoveryFinding is one thing the check found.
type RecoveryFinding struct {
	// kind of finding (internal/recovery documents each).
	// +required
	// +kubebuilder:validation:MaxLength=64
	Kind string `json:"kind"`
	// subject names what it is about: a transfer id, a network.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Subject string `json:"subject,omitempty"`
	// message says what was found and what was done.
	// +required
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message"`
}

// RecoveryStatus is the start-up check's report.
type RecoveryStatus struct {
	// +optional
	State RecoveryState `json:"state,omitempty"`
	// checkID identifies the check that wrote this report.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	CheckID string `json:"checkID,omitempty"`
	// checkedAt is when the check finished.
	// +optional
	CheckedAt *metav1.Time `json:"checkedAt,omitempty"`
	// since is the start of the window of the provider's payouts the check read.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// newestRecord is the newest time any record of this cluster holds: after a restore, about
	// the snapshot's time. What was done after it is lost (see redo).
	// +optional
	NewestRecord *metav1.Time `json:"newestRecord,omitempty"`
	// findings of the check, the first MaxItems.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=200
	Findings []RecoveryFinding `json:"findings,omitempty"`
	// redo lists what a restore takes back that no ledger can tell: an operator redoes what was
	// done after newestRecord.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Redo []string `json:"redo,omitempty"`
	// heartbeat is written by the leading controller every minute while it runs. A start that
	// finds it older than payoutd's --recovery-gap requires recovery: the cluster's records stop
	// there (an etcd restore, or payoutd stood still that long).
	// +optional
	Heartbeat *metav1.Time `json:"heartbeat,omitempty"`
	// message summarises the state.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`

	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready (True while money may move).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Recovery is whether this cluster's objects agree with the ledgers of record — the provider's
// payouts — and are recent, checked at every start of the controllers. After
// an etcd restore the ledgers run ahead of the objects: the check rebuilds what it can, lists the
// rest, and money stays paused until an operator acknowledges (`kubectl payout recover`).
// Cluster-scoped, named RecoveryName.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={rec},categories=payouts
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.paused`
// +kubebuilder:printcolumn:name="Checked",type=date,JSONPath=`.status.checkedAt`
// +kubebuilder:printcolumn:name="Newest-Record",type=string,JSONPath=`.status.newestRecord`
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'payoutd'",message="the one Recovery object is named payoutd"
type Recovery struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec RecoverySpec `json:"spec,omitempty"`
	// +optional
	Status RecoveryStatus `json:"status,omitempty"`
}

// RecoveryList is a list of Recovery.
//
// +kubebuilder:object:root=true
type RecoveryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Recovery `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Recovery{}, &RecoveryList{})
}
