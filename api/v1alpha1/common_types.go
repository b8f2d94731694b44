package v1alpha1

// Decimal is an exact non-negative decimal number written as a string ("25.00", "0.0125").
// Amounts never travel as floating point: the schema keeps them as text and the service parses
// them with shopspring/decimal.
// +kubebuilder:validation:Pattern=`^(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?$`
// +kubebuilder:validation:MaxLength=40
type Decimal string

// USDAmount is a USD amount with at most two decimals, from 0 to 1,000,000.
// +kubebuilder:validation:Pattern=`^(0|[1-9][0-9]{0,6})(\.[0-9]{1,2})?$`
// +kubebuilder:validation:MaxLength=10
type USDAmount string

// CurrencyCode is an upper-case ISO 4217 code.
// +kubebuilder:validation:Pattern=`^[A-Z]{3}$`
type CurrencyCode string

// CountryCode is an upper-case ISO 3166-1 alpha-2 code.
// +kubebuilder:validation:Pattern=`^[A-Z]{2}$`
type CountryCode string

// Token is a stablecoin accepted for deposits.
// +kubebuilder:validation:Enum=usdc;usdt
type Token string

// EVM reports whether the network is an EVM network: one key has one address on all of them,
// so a v1 deposit address issued on one is the same address on every other.
func (n Network) EVM() bool {
	switch n {
	case NetworkArbitrum, NetworkAvalanche, NetworkBase, NetworkEthereum, NetworkPolygon:
		return true
	}
	return false
}

// Network is a blockchain network deposits can arrive on.
// +kubebuilder:validation:Enum=arbitrum;avalanche;base;ethereum;polygon;solana;tron
type Network string

const (
	TokenUSDC Token = "usdc"
	TokenUSDT Token = "usdt"

	NetworkArbitrum  Network = "arbitrum"
	NetworkAvalanche Network = "avalanche"
	NetworkBase      Network = "base"
	NetworkEthereum  Network = "ethereum"
	NetworkPolygon   Network = "polygon"
	NetworkSolana    Network = "solana"
	NetworkTron      Network = "tron"
)

// ObjectRef names a namespaced object of this group.
type ObjectRef struct {
	// namespace of the object.
	// +required
	Namespace string `json:"namespace"`
	// name of the object.
	// +required
	Name string `json:"name"`
}

// The condition every kind sets; each kind documents its reasons.
const (
	// ReadyCondition summarises a resource: True when the service can use it as it is.
	ReadyCondition = "Ready"
)
