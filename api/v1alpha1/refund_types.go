package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RefundSpec asks for money a transfer owes to be sent back to its sender: either the deposit
// credited to a failed transfer (no deposit field; sent in USDC on Base, spec 2.5), or one stray
// deposit (deposit set; sent on its own network in its own token where the refund wallet can
// pay there, else in USDC on Base). It is a one-shot request with a name fixed by what it
// refunds (the transfer id, or StrayRefundName): a second request for the same money cannot be
// created, and the refund controller refuses a request under any other name.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a refund request is immutable"
type RefundSpec struct {
	// transfer is the id of the transfer that owes the money.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{24}$`
	Transfer string `json:"transfer"`
	// deposit is the stray deposit refunded; absent for the transfer's credited deposit.
	// +optional
	Deposit *DepositRef `json:"deposit,omitempty"`
	// requestedBy names who asked (the operator's user, for audit).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	RequestedBy string `json:"requestedBy,omitempty"`
}

// DepositRef names one token transfer on chain.
type DepositRef struct {
	// +required
	Network Network `json:"network"`
	// +required
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash"`
	// +required
	// +kubebuilder:validation:Minimum=0
	LogIndex int64 `json:"logIndex"`
}

// RefundTransferLabel names the transfer a Refund refunds money of (every Refund carries it).
const RefundTransferLabel = DepositTransferLabel

// MoneyFinalizer holds an object whose deletion could lose track of money: a Refund whose
// transaction may be on its way, or that is the only record of money sent; a PayoutAccount
// whose namespace holds money owed. The controller of the kind removes it once the object
// can go (docs/operations/refunds.md, docs/operations/accounts.md).
const MoneyFinalizer = "payout.stablepay.dev/money"

// StrayRefundName is the name of the Refund of a transfer's stray deposit: one name per log, so
// that the API server's atomic create refunds each stray deposit at most once.
func StrayRefundName(transfer string, d DepositRef) string {
	sum := sha256.Sum256([]byte(string(d.Network) + "/" + strings.ToLower(d.TxHash) + "/" + strconv.FormatInt(d.LogIndex, 10)))
	return transfer + "-" + hex.EncodeToString(sum[:8])
}

// RefundState is where a refund stands.
// +kubebuilder:validation:Enum=Pending;Held;Signed;Broadcast;Confirmed;Refused
type RefundState string

const (
	// RefundPending: accepted, not signed yet; its destination is screened before signing.
	RefundPending RefundState = "Pending"
	// RefundHeld: the destination failed wallet screening; nothing is sent. The screening is
	// asked again now and then, and the refund goes on once the address is cleared.
	RefundHeld RefundState = "Held"
	// RefundSigned: the signed transaction is recorded and is (re)broadcast as the same bytes.
	RefundSigned RefundState = "Signed"
	// RefundBroadcast: the node accepted the transaction; waiting for depth.
	RefundBroadcast RefundState = "Broadcast"
	// RefundConfirmed: the receipt is at depth; the transfer reads refunded.
	RefundConfirmed RefundState = "Confirmed"
	// RefundRefused: the transfer cannot be refunded (not failed, no deposit, a sender that
	// has no address on Base); nothing was sent.
	RefundRefused RefundState = "Refused"
)

// MaxRevertedTxs bounds status.revertedTxs: a refund whose transactions reverted that often
// signs no more and waits for an operator.
const MaxRevertedTxs = 16

// RefundStatus records the refund transaction. The signed transaction is persisted before it is
// broadcast, so a restart re-broadcasts the same bytes (same nonce, same hash) and never signs
// a second transfer of the funds. The transition rules below refuse a status edit that would
// make the controller sign again: its state moves "" → Pending|Refused, Pending ⇄ Held,
// Pending → Signed → Broadcast → Confirmed (Signed → Confirmed too), Pending|Held → Broadcast
// with a txHash and no signedTx (a transaction found on chain and adopted, refund.Adopt), and
// back to Pending only from Signed or Broadcast with the transaction listed in revertedTxs, or
// from an adopted Broadcast whose transaction left the chain (refund.Lost: the next pass looks
// for it on chain again before it signs); Confirmed and Refused are final; a signed transaction
// and what an admitted refund sends never change.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.state) ? (!has(self.state) || self.state in ['Pending', 'Refused']) : has(self.state) && (self.state == oldSelf.state || (oldSelf.state == 'Pending' && self.state in ['Held', 'Signed']) || (oldSelf.state == 'Held' && self.state == 'Pending') || (oldSelf.state in ['Pending', 'Held'] && self.state == 'Broadcast' && has(self.txHash) && !has(self.signedTx)) || (oldSelf.state == 'Signed' && self.state in ['Broadcast', 'Confirmed']) || (oldSelf.state == 'Broadcast' && self.state == 'Confirmed') || (oldSelf.state in ['Signed', 'Broadcast'] && self.state == 'Pending' && has(oldSelf.txHash) && has(self.revertedTxs) && oldSelf.txHash in self.revertedTxs) || (oldSelf.state == 'Broadcast' && !has(oldSelf.signedTx) && self.state == 'Pending'))",message="a refund's state only moves forward (Pending, Held, Signed, Broadcast, Confirmed; or Refused): back to Pending only when its transaction reverted, listed in status.revertedTxs, or an adopted one left the chain"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.revertedTxs) || (has(self.revertedTxs) && oldSelf.revertedTxs.all(h, h in self.revertedTxs))",message="status.revertedTxs only grows"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.state) || !has(self.state) || !(oldSelf.state in ['Signed', 'Broadcast', 'Confirmed']) || !(self.state in ['Signed', 'Broadcast', 'Confirmed']) || ((has(self.txHash) == has(oldSelf.txHash) && (!has(self.txHash) || self.txHash == oldSelf.txHash)) && (has(self.signedTx) == has(oldSelf.signedTx) && (!has(self.signedTx) || self.signedTx == oldSelf.signedTx)) && (has(self.nonce) == has(oldSelf.nonce) && (!has(self.nonce) || self.nonce == oldSelf.nonce)))",message="a signed refund's transaction (txHash, signedTx, nonce) cannot change"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.state) || ((has(self.to) == has(oldSelf.to) && (!has(self.to) || self.to == oldSelf.to)) && (has(self.amount) == has(oldSelf.amount) && (!has(self.amount) || self.amount == oldSelf.amount)) && (has(self.network) == has(oldSelf.network) && (!has(self.network) || self.network == oldSelf.network)) && (has(self.token) == has(oldSelf.token) && (!has(self.token) || self.token == oldSelf.token)))",message="a refund's destination, amount, network and token are fixed once it is admitted"
type RefundStatus struct {
	// state of the refund.
	// +optional
	State RefundState `json:"state,omitempty"`
	// network the refund is sent on (base).
	// +optional
	Network Network `json:"network,omitempty"`
	// token sent back (usdc).
	// +optional
	Token Token `json:"token,omitempty"`
	// to is the deposit's sender.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	To string `json:"to,omitempty"`
	// amount in token base units: the deposit's amount.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,30}$`
	Amount string `json:"amount,omitempty"`
	// from is the platform refund wallet.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	From string `json:"from,omitempty"`
	// nonce of the transaction in the refund wallet.
	// +optional
	Nonce *int64 `json:"nonce,omitempty"`
	// signedTx is the raw signed transaction, hex.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	SignedTx string `json:"signedTx,omitempty"`
	// txHash of signedTx.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash,omitempty"`
	// revertedTxs are the refund's earlier transactions that reverted at depth and moved
	// nothing, oldest first. The list only grows: a refund goes back from Signed or Broadcast
	// to Pending (and a new transaction is signed) only with its transaction added here, and
	// the controller checks on chain that each one reverted before it signs another.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=128
	RevertedTxs []string `json:"revertedTxs,omitempty"`
	// blockNumber that includes the transaction.
	// +optional
	BlockNumber int64 `json:"blockNumber,omitempty"`
	// confirmations last seen.
	// +optional
	Confirmations int64 `json:"confirmations,omitempty"`
	// confirmedAt is when the receipt reached depth.
	// +optional
	ConfirmedAt *metav1.Time `json:"confirmedAt,omitempty"`
	// message explains the state (why a refund was refused, the last broadcast error).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`

	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready (True once confirmed).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Refund is an operator's request (`kubectl payout refund ID`) to send money a transfer owes back
// to its sender: a failed transfer's deposit, or one stray deposit of any transfer. It lives in
// the transfer's namespace, labelled with the transfer (RefundTransferLabel); the refund of a
// deposit recorded after its transfer's account was deleted lives beside that deposit, in
// OrphanNamespace.
//
// Its creator gives it MoneyFinalizer, and the refund controller lets a deleted Refund go only
// when its deletion cannot make money go out twice: nothing was signed (or it was refused), or
// its transaction is confirmed and its transfer records it. A status edit that moves it
// backwards is refused (the transition rules below), so a hand edit cannot make the controller
// sign a second transaction.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName={rf,rfs},categories=payouts
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Transfer",type=string,JSONPath=`.spec.transfer`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.status.network`
// +kubebuilder:printcolumn:name="To",type=string,JSONPath=`.status.to`
// +kubebuilder:printcolumn:name="Amount",type=string,JSONPath=`.status.amount`,description="token base units (6 decimals)"
// +kubebuilder:printcolumn:name="Tx",type=string,JSONPath=`.status.txHash`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="has(self.spec.deposit) ? self.metadata.name.startsWith(self.spec.transfer + '-') : self.metadata.name == self.spec.transfer",message="a refund of a transfer's deposit is named after the transfer, a refund of a stray deposit by StrayRefundName"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || has(self.status)",message="a refund's status cannot be removed"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.status) || !has(self.status) || !has(self.status.state) || self.status.state in ['Pending', 'Refused']",message="a refund's state only moves forward (Pending, Held, Signed, Broadcast, Confirmed; or Refused): a new refund is admitted or refused first"
type Refund struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec RefundSpec `json:"spec"`
	// +optional
	Status RefundStatus `json:"status,omitempty"`
}

// RefundList is a list of Refund.
//
// +kubebuilder:object:root=true
type RefundList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Refund `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Refund{}, &RefundList{})
}
