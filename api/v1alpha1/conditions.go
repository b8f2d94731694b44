package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:object:generate=false

// Object is a kind of this group: every one has status conditions and an observedGeneration,
// so one set of helpers (and one generic reconciler for the simple kinds) serves them all.
type Object interface {
	client.Object
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
	GetObservedGeneration() int64
	SetObservedGeneration(int64)
}

func (o *PayoutAccount) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *PayoutAccount) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *PayoutAccount) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *PayoutAccount) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *APIKey) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *APIKey) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *APIKey) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *APIKey) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Recipient) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Recipient) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Recipient) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Recipient) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Transfer) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Transfer) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Transfer) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Transfer) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Wallet) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Wallet) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Wallet) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Wallet) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *BlockedWallet) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *BlockedWallet) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *BlockedWallet) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *BlockedWallet) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *DepositOption) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *DepositOption) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *DepositOption) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *DepositOption) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Refund) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Refund) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Refund) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Refund) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *ChainCursor) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *ChainCursor) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *ChainCursor) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *ChainCursor) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }
