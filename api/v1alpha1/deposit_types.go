package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DepositTransferLabel names the transfer a Deposit was sent for.
const DepositTransferLabel = "payout.stablepay.dev/transfer"

// DepositName is the object name of the deposit of log logIndex of transaction txHash on
// network. One name per log is what makes the API server's atomic create the guarantee that a
// log is credited at most once, however often the watcher scans its block.
func DepositName(network Network, txHash string, logIndex int64) string {
	sum := sha256.Sum256([]byte(strings.ToLower(txHash) + "/" + strconv.FormatInt(logIndex, 10)))
	return string(network) + "-" + hex.EncodeToString(sum[:20])
}

// DepositSpec is a token transfer to a v1 deposit address, observed at confirmation depth.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a deposit record is immutable"
type DepositSpec struct {
	// transfer is the id of the transfer whose deposit address received the tokens.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{24}$`
	Transfer string `json:"transfer"`
	// +required
	Network Network `json:"network"`
	// token of the contract that emitted the Transfer event.
	// +required
	Token Token `json:"token"`
	// contract address of the token.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Contract string `json:"contract"`
	// to is the deposit address.
	// +required
	// +kubebuilder:validation:MaxLength=64
	To string `json:"to"`
	// from is the sender.
	// +required
	// +kubebuilder:validation:MaxLength=64
	From string `json:"from"`
	// amount in token base units (6 decimals).
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9]{1,30}$`
	Amount string `json:"amount"`
	// +required
	// +kubebuilder:validation:MaxLength=128
	TxHash string `json:"txHash"`
	// +required
	// +kubebuilder:validation:Minimum=0
	LogIndex int64 `json:"logIndex"`
	// +required
	// +kubebuilder:validation:Minimum=0
	BlockNumber int64 `json:"blockNumber"`
	// +required
	// +kubebuilder:validation:MaxLength=128
	BlockHash string `json:"blockHash"`
	// blockTime is the block's timestamp.
	// +required
	BlockTime metav1.Time `json:"blockTime"`
	// confirmations when the watcher recorded it (at least the network's depth).
	// +required
	// +kubebuilder:validation:Minimum=1
	Confirmations int64 `json:"confirmations"`
}

// Deposit records a token transfer the chain watcher saw arrive at a v1 deposit address, once
// at confirmation depth, in the account namespace of the transfer it belongs to. It is the
// ledger of funds received: the transfer controller credits the first matching one and keeps
// the others as stray deposits (refundable). Named by DepositName.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName={dep,deps},categories=payouts
// +kubebuilder:printcolumn:name="Transfer",type=string,JSONPath=`.spec.transfer`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.spec.network`
// +kubebuilder:printcolumn:name="Token",type=string,JSONPath=`.spec.token`
// +kubebuilder:printcolumn:name="Amount",type=string,JSONPath=`.spec.amount`,description="token base units (6 decimals)"
// +kubebuilder:printcolumn:name="Block",type=integer,JSONPath=`.spec.blockNumber`
// +kubebuilder:printcolumn:name="Tx",type=string,JSONPath=`.spec.txHash`,priority=1
// +kubebuilder:printcolumn:name="From",type=string,JSONPath=`.spec.from`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Deposit struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DepositSpec `json:"spec"`
}

// DepositList is a list of Deposit.
//
// +kubebuilder:object:root=true
type DepositList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Deposit `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Deposit{}, &DepositList{})
}
