package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SweepSpec is the intent to move one deposit (one token transfer log, the Deposit of the same
// name and namespace) from its v1 deposit address to the network's treasury. The sweeper creates
// it, before anything is signed, once the deposit is the platform's to move (treasury.Due); an
// operator creates it with writeOff set to give up refunding a stray deposit (`kubectl payout
// stray write-off`). Its name is the Deposit's, so the API server's atomic create makes the
// intent unique per deposit: a deposit is swept at most once, however often the sweeper restarts.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a sweep's spec is immutable"
type SweepSpec struct {
	// transfer is the id of the transfer whose deposit address received the tokens.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{24}$`
	Transfer string `json:"transfer"`
	// +required
	Network Network `json:"network"`
	// +required
	Token Token `json:"token"`
	// address is the deposit address the tokens are moved from.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Address string `json:"address"`
	// path of the address's key below the deposit key (the transfer's spec.depositPath).
	// +required
	// +kubebuilder:validation:MaxLength=64
	Path string `json:"path"`
	// amount in token base units: the deposit's whole amount.
	// +required
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,29}$`
	Amount string `json:"amount"`
	// depositTxHash is the deposit's transaction.
	// +required
	// +kubebuilder:validation:MaxLength=128
	DepositTxHash string `json:"depositTxHash"`
	// depositLogIndex is the deposit's log in that transaction.
	// +required
	// +kubebuilder:validation:Minimum=0
	DepositLogIndex int64 `json:"depositLogIndex"`
	// reason the deposit is the platform's to sweep.
	// +required
	Reason SweepReason `json:"reason"`
	// writeOff records an operator's decision not to refund the stray deposit (reason WrittenOff).
	// +optional
	WriteOff *WriteOff `json:"writeOff,omitempty"`
}

// SweepReason says why a deposit is the platform's to sweep.
// +kubebuilder:validation:Enum=PaidOut;Refunded;WrittenOff
type SweepReason string

const (
	// SweepPaidOut: the transfer was paid out (completed); the deposit paid for it.
	SweepPaidOut SweepReason = "PaidOut"
	// SweepRefunded: everything the deposit owed its sender was refunded (from the refund
	// wallet): the tokens at the deposit address replace what the refund wallet sent.
	SweepRefunded SweepReason = "Refunded"
	// SweepWrittenOff: an operator decided the stray deposit is not refunded.
	SweepWrittenOff SweepReason = "WrittenOff"
)

// WriteOff is an operator's audited decision not to refund a stray deposit.
type WriteOff struct {
	// by names the operator (their Kubernetes user).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	By string `json:"by"`
	// why the deposit is not refunded.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Why string `json:"why"`
}

// SweepState is where a sweep stands.
// +kubebuilder:validation:Enum=Pending;Batched;Confirmed;Refused
type SweepState string

const (
	// SweepPending: admitted and due; waiting for a batch.
	SweepPending SweepState = "Pending"
	// SweepBatched: in the SweepBatch status.batch names, which signs, broadcasts and confirms
	// one transaction for all its deposits.
	SweepBatched SweepState = "Batched"
	// SweepConfirmed: the batch's transaction is at depth; the tokens are in the treasury.
	SweepConfirmed SweepState = "Confirmed"
	// SweepRefused: a write-off of a deposit that is not a stray, or is being refunded; nothing
	// moves.
	SweepRefused SweepState = "Refused"
)

// SweepStatus is what became of one deposit's sweep: the facts the ledger reads (network, token,
// deposit address and amount in the spec; the transaction and when it reached depth here). Its
// state moves "" → Pending|Refused, Pending → Batched → Confirmed, and Batched → Pending only with
// the batch listed in releasedBatches (the batch's transaction reverted at depth, or the batch
// was never signed: either way it moved nothing). Confirmed and Refused are final.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.state) ? (!has(self.state) || self.state in ['Pending', 'Refused']) : has(self.state) && (self.state == oldSelf.state || (oldSelf.state == 'Pending' && self.state == 'Batched' && has(self.batch)) || (oldSelf.state == 'Batched' && self.state == 'Confirmed' && has(self.txHash) && has(self.batch) && self.batch == oldSelf.batch) || (oldSelf.state == 'Batched' && self.state == 'Pending' && has(self.releasedBatches) && oldSelf.batch in self.releasedBatches))",message="a sweep's state only moves forward (Pending, Batched, Confirmed; or Refused): back to Pending only with its batch in status.releasedBatches"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.releasedBatches) || (has(self.releasedBatches) && oldSelf.releasedBatches.all(b, b in self.releasedBatches))",message="status.releasedBatches only grows"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.state) || !(oldSelf.state in ['Batched', 'Confirmed']) || self.state != oldSelf.state || (has(self.batch) && self.batch == oldSelf.batch)",message="a batched sweep's batch cannot change"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.state) || oldSelf.state != 'Confirmed' || ((has(self.txHash) == has(oldSelf.txHash) && (!has(self.txHash) || self.txHash == oldSelf.txHash)) && has(self.confirmedAt) == has(oldSelf.confirmedAt))",message="a confirmed sweep's transaction cannot change"
type SweepStatus struct {
	// state of the sweep.
	// +optional
	State SweepState `json:"state,omitempty"`
	// batch is the SweepBatch that moves the deposit.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Batch string `json:"batch,omitempty"`
	// releasedBatches are earlier batches of this deposit that moved nothing (reverted at depth,
	// or never signed), oldest first; the list only grows.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	ReleasedBatches []string `json:"releasedBatches,omitempty"`
	// to is the treasury address the tokens went to.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	To string `json:"to,omitempty"`
	// txHash of the batch's transaction.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash,omitempty"`
	// moved is the base units the transaction moved for this deposit: its amount, and for the
	// first deposit of an address (by name) whatever else the address held beyond its deposits'
	// sum (a deposit the watcher had not recorded yet), so that the sweeps of an address add up
	// to what its receipt moved.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,30}$`
	Moved string `json:"moved,omitempty"`
	// blockNumber that includes the transaction.
	// +optional
	BlockNumber int64 `json:"blockNumber,omitempty"`
	// confirmedAt is when the transaction reached depth.
	// +optional
	ConfirmedAt *metav1.Time `json:"confirmedAt,omitempty"`
	// message explains the state.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// Sweep is one deposit's move from its v1 deposit address to the treasury, in the deposit's
// namespace and named after its Deposit (see SweepSpec). The sweeper alone writes its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName={sw,sws},categories=payouts
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Transfer",type=string,JSONPath=`.spec.transfer`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.spec.network`
// +kubebuilder:printcolumn:name="Token",type=string,JSONPath=`.spec.token`
// +kubebuilder:printcolumn:name="Amount",type=string,JSONPath=`.spec.amount`,description="token base units (6 decimals)"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.spec.reason`
// +kubebuilder:printcolumn:name="Batch",type=string,JSONPath=`.status.batch`,priority=1
// +kubebuilder:printcolumn:name="Moved",type=string,JSONPath=`.status.moved`,priority=1
// +kubebuilder:printcolumn:name="Tx",type=string,JSONPath=`.status.txHash`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.spec.reason == 'WrittenOff' ? has(self.spec.writeOff) : !has(self.spec.writeOff)",message="a sweep carries a write-off exactly when its reason is WrittenOff"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || has(self.status)",message="a sweep's status cannot be removed"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.status) || !has(self.status) || !has(self.status.state) || self.status.state in ['Pending', 'Refused']",message="a sweep's state only moves forward (Pending, Batched, Confirmed; or Refused): a new sweep is admitted or refused first"
type Sweep struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SweepSpec `json:"spec"`
	// +optional
	Status SweepStatus `json:"status,omitempty"`
}

// SweepList is a list of Sweep.
//
// +kubebuilder:object:root=true
type SweepList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Sweep `json:"items"`
}

// MaxSweepBatch bounds the deposits of one batch: one transaction carries them all, and its
// signed bytes are stored in the batch's status.
const MaxSweepBatch = 64

// SweepItem is one deposit address of a batch: the mechanism (EIP-7702, internal/chain/evm/sweep)
// moves the address's whole token balance at execution, so a batch takes an address only once
// every deposit recorded there is due, and lists their Sweeps.
type SweepItem struct {
	// namespace of the address's transfer and of its Sweeps.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// sweeps are the Sweeps (one per deposit) the address's balance settles, by name.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Sweeps []SweepShare `json:"sweeps"`
	// +required
	// +kubebuilder:validation:MaxLength=64
	Address string `json:"address"`
	// +required
	// +kubebuilder:validation:MaxLength=64
	Path string `json:"path"`
	// amount in token base units: the sum of the sweeps' deposits, what the address is expected
	// to hold.
	// +required
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,29}$`
	Amount string `json:"amount"`
}

// SweepShare is one deposit's Sweep in a batch item, with its deposit's amount.
type SweepShare struct {
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// amount in token base units.
	// +required
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,29}$`
	Amount string `json:"amount"`
}

// SweepMoved is what the batch's transaction moved from one deposit address to the treasury, read
// from its receipt's token Transfer events at depth.
type SweepMoved struct {
	// +required
	// +kubebuilder:validation:MaxLength=64
	Address string `json:"address"`
	// amount in token base units.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{1,30}$`
	Amount string `json:"amount"`
}

// SweepBatchSpec is one transaction's worth of sweeps of one token on one network, to the
// treasury. It is fixed at creation: the transaction signed for it moves these addresses' balances.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a sweep batch's spec is immutable"
type SweepBatchSpec struct {
	// +required
	Network Network `json:"network"`
	// +required
	Token Token `json:"token"`
	// to is the network's treasury address.
	// +required
	// +kubebuilder:validation:MaxLength=64
	To string `json:"to"`
	// items are the deposits the batch moves.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Items []SweepItem `json:"items"`
}

// SweepBatchState is where a batch's transaction stands.
// +kubebuilder:validation:Enum=Pending;Signed;Broadcast;Confirmed;Reverted;Expired
type SweepBatchState string

const (
	// SweepBatchPending: created; its sweeps are being marked Batched; nothing is signed.
	SweepBatchPending SweepBatchState = "Pending"
	// SweepBatchSigned: the signed transaction is recorded and is (re)broadcast as the same bytes.
	SweepBatchSigned SweepBatchState = "Signed"
	// SweepBatchBroadcast: the node accepted the transaction; waiting for depth.
	SweepBatchBroadcast SweepBatchState = "Broadcast"
	// SweepBatchConfirmed: the receipt is at depth and succeeded.
	SweepBatchConfirmed SweepBatchState = "Confirmed"
	// SweepBatchReverted: the receipt is at depth and reverted: nothing moved; its sweeps go
	// back to Pending.
	SweepBatchReverted SweepBatchState = "Reverted"
	// SweepBatchExpired: the chain says the transaction can never be included (a Tron
	// transaction past its expiration that no solidified block holds): nothing moved; its
	// sweeps go back to Pending.
	SweepBatchExpired SweepBatchState = "Expired"
)

// SweepBatchStatus records the batch's transaction. The signed transaction is persisted before it
// is broadcast, so a restart re-broadcasts the same bytes (same nonce, same hash) and never signs
// a second move of the same deposits. Its state moves "" → Pending → Signed → Broadcast →
// Confirmed|Reverted|Expired (Signed → Confirmed|Reverted|Expired too); the signed transaction
// never changes.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.state) ? (!has(self.state) || self.state == 'Pending') : has(self.state) && (self.state == oldSelf.state || (oldSelf.state == 'Pending' && self.state == 'Signed' && has(self.signedTx) && has(self.txHash)) || (oldSelf.state == 'Signed' && self.state in ['Broadcast', 'Confirmed', 'Reverted', 'Expired']) || (oldSelf.state == 'Broadcast' && self.state in ['Confirmed', 'Reverted', 'Expired']))",message="a sweep batch's state only moves forward (Pending, Signed, Broadcast, Confirmed, Reverted or Expired)"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.state) || !(oldSelf.state in ['Signed', 'Broadcast', 'Confirmed', 'Reverted', 'Expired']) || ((has(self.txHash) == has(oldSelf.txHash) && (!has(self.txHash) || self.txHash == oldSelf.txHash)) && (has(self.signedTx) == has(oldSelf.signedTx) && (!has(self.signedTx) || self.signedTx == oldSelf.signedTx)) && (has(self.nonce) == has(oldSelf.nonce) && (!has(self.nonce) || self.nonce == oldSelf.nonce)))",message="a signed sweep batch's transaction (txHash, signedTx, nonce) cannot change"
type SweepBatchStatus struct {
	// +optional
	State SweepBatchState `json:"state,omitempty"`
	// from is the sweeper's gas wallet, which signs and pays for the transaction.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	From string `json:"from,omitempty"`
	// nonce of the transaction in the gas wallet.
	// +optional
	Nonce *int64 `json:"nonce,omitempty"`
	// signedTx is the raw signed transaction, hex.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	SignedTx string `json:"signedTx,omitempty"`
	// txHash of signedTx.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash,omitempty"`
	// blockNumber that includes the transaction.
	// +optional
	BlockNumber int64 `json:"blockNumber,omitempty"`
	// moved is what the transaction moved from each deposit address to the treasury, from its
	// receipt at depth (an address absent moved nothing: its authorization did not apply).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Moved []SweepMoved `json:"moved,omitempty"`
	// confirmedAt is when the receipt reached depth.
	// +optional
	ConfirmedAt *metav1.Time `json:"confirmedAt,omitempty"`
	// message explains the state (the last broadcast error).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// SweepBatch is one transaction that sweeps a batch of deposits of one token on one network to
// the treasury (cluster-scoped: its deposits belong to many accounts). The sweeper creates it
// from Pending sweeps, marks them Batched, then signs, persists, broadcasts and follows the
// transaction to depth; it keeps at most one batch per network open, so the gas wallet's nonces
// follow one another. A batch being deleted stays (MoneyFinalizer) until its transaction is at
// depth or it was never signed.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={swb,swbs},categories=payouts
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.spec.network`
// +kubebuilder:printcolumn:name="Token",type=string,JSONPath=`.spec.token`
// +kubebuilder:printcolumn:name="Tx",type=string,JSONPath=`.status.txHash`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || has(self.status)",message="a sweep batch's status cannot be removed"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.status) || !has(self.status) || !has(self.status.state) || self.status.state == 'Pending'",message="a sweep batch's state only moves forward (Pending, Signed, Broadcast, Confirmed or Reverted): a new batch is Pending first"
type SweepBatch struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SweepBatchSpec `json:"spec"`
	// +optional
	Status SweepBatchStatus `json:"status,omitempty"`
}

// SweepBatchList is a list of SweepBatch.
//
// +kubebuilder:object:root=true
type SweepBatchList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SweepBatch `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Sweep{}, &SweepList{}, &SweepBatch{}, &SweepBatchList{})
}
