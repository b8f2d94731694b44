// Package token is the dev chains' ERC-20, deployed as USDC and USDT by package devchain:
// StableToken.sol (OpenZeppelin 4.9.6's ERC20 and Ownable, 6 decimals, owner-only mint), its ABI
// and creation bytecode compiled by hack/compile-token.sh (`make token`, checked by `make
// check-token`), and the typed bindings in stabletoken.go generated from them by go-ethereum's
// `abigen --v2` (`make bindings`).
//
// The bindings pack and unpack calls; bind/v2's Call, Transact, DeployContract and FilterEvents
// send them:
//
//	t := token.NewStableToken()
//	c := t.Instance(client, address)
//	balance, err := bind.Call(c, nil, t.PackBalanceOf(owner), t.UnpackBalanceOf)
package token
