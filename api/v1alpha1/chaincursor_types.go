package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ChainCursorSpec names the network a cursor follows.
type ChainCursorSpec struct {
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="network is immutable"
	Network Network `json:"network"`
}

// RecentBlock is a block the watcher scanned, kept to detect reorgs.
type RecentBlock struct {
	// +required
	Number int64 `json:"number"`
	// +required
	// +kubebuilder:validation:MaxLength=128
	Hash string `json:"hash"`
}

// ChainCursorStatus is how far the deposit watcher of a network has scanned. Every block up to
// and including block has been scanned at confirmation depth and its deposits recorded.
type ChainCursorStatus struct {
	// chainID of the node the cursor was taken on.
	// +optional
	ChainID int64 `json:"chainID,omitempty"`
	// genesisHash identifies the chain: a cursor of another chain (a dev chain restarted from
	// scratch) is not resumed.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	GenesisHash string `json:"genesisHash,omitempty"`
	// block is the last block scanned.
	// +optional
	Block int64 `json:"block,omitempty"`
	// blockHash of that block.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	BlockHash string `json:"blockHash,omitempty"`
	// blockTime is the timestamp of that block (its header's), written with block. Unset while
	// not known (on solana, whose watcher reads no block time, and on a cursor resumed from a
	// status written before it was kept, until the next block at depth is scanned).
	// +optional
	BlockTime *metav1.Time `json:"blockTime,omitempty"`
	// recent scanned blocks, newest last, to find the common ancestor after a reorg.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	Recent []RecentBlock `json:"recent,omitempty"`
	// head is the newest block number a node reported at the watcher's last poll before
	// heartbeatAt: the network had reached it by heartbeatAt (it may be behind the network's
	// head then, never ahead of it).
	// +optional
	Head int64 `json:"head,omitempty"`
	// gap is a range of blocks the watcher is scanning again because it lost its place: the
	// cursor was created afresh while transfers existed (deleted by hand, or lost in a
	// restore), or taken on another chain (its chain id or genesis changed). The watcher then
	// restarts from the block of the oldest transfer in its address book (or startBlock, when
	// earlier) instead of the head, so that no deposit is skipped; gap says which blocks are
	// still to be scanned and why, and is cleared once block reaches gap.to
	// (payout_chain_gap_blocks counts what is left).
	// +optional
	Gap *ChainGap `json:"gap,omitempty"`
	// synced is true while the watcher keeps up with the head.
	// +optional
	Synced bool `json:"synced,omitempty"`
	// heartbeatAt is the last time the watcher wrote: a watcher that stopped leaves it behind,
	// and readers treat a stale heartbeat as not synced.
	// +optional
	HeartbeatAt *metav1.Time `json:"heartbeatAt,omitempty"`
	// endpoint is the RPC endpoint in use (without credentials).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Endpoint string `json:"endpoint,omitempty"`
	// message says why the watcher is not synced.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`

	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready (True while synced).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ChainGap is a range of blocks a watcher scans again after it lost its place.
type ChainGap struct {
	// from is the first block of the range.
	// +required
	From int64 `json:"from"`
	// to is its last block: the newest block at depth when the watcher restarted.
	// +required
	To int64 `json:"to"`
	// reason says why the watcher restarted there.
	// +required
	// +kubebuilder:validation:MaxLength=512
	Reason string `json:"reason"`
	// since is when the watcher restarted.
	// +required
	Since metav1.Time `json:"since"`
}

// ScannedPast reports whether the watcher has scanned, at the network's depth, a block whose
// time is after t: every block up to status.block has had its deposits recorded (Deposit
// objects are created before the cursor moves past their block), and a block's time is never
// below its parent's, so a deposit mined at or before t that reached depth is already recorded.
// False when the block time is unknown (see blockTime) or c is nil: a transfer expiring on it
// waits.
func (c *ChainCursor) ScannedPast(t time.Time) bool {
	return c != nil && c.Status.BlockTime != nil && c.Status.BlockTime.After(t)
}

// ChainCursor is the persisted progress of one network's deposit watcher. Cluster-scoped,
// named after the network.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName={cc,ccs},categories=payouts
// +kubebuilder:printcolumn:name="Block",type=integer,JSONPath=`.status.block`
// +kubebuilder:printcolumn:name="Head",type=integer,JSONPath=`.status.head`
// +kubebuilder:printcolumn:name="Block Time",type=date,JSONPath=`.status.blockTime`,priority=1
// +kubebuilder:printcolumn:name="Synced",type=boolean,JSONPath=`.status.synced`
// +kubebuilder:printcolumn:name="Heartbeat",type=date,JSONPath=`.status.heartbeatAt`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.network",message="a chain cursor is named after its network"
type ChainCursor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ChainCursorSpec `json:"spec"`
	// +optional
	Status ChainCursorStatus `json:"status,omitempty"`
}

// ChainCursorList is a list of ChainCursor.
//
// +kubebuilder:object:root=true
type ChainCursorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ChainCursor `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ChainCursor{}, &ChainCursorList{})
}
