package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolDef is one tool: a REST operation of the facade under a name and description written for
// a model. The schemas come from the OpenAPI operation of method and path; props adds to (or
// replaces) the schemas of its parameters and body fields where the spec says more than the
// OpenAPI document's transport types (an amount is a number, an id an integer, a token one of
// an enum), and required lists the fields the spec requires when the document leaves them to
// the handler (one body schema serves both transfer methods).
type toolDef struct {
	name, title, description string
	method, path             string
	props                    map[string]any
	required                 []string
	readOnly, idempotent     bool
	destructive              bool
	openWorld                bool
}

var (
	tokens      = []any{"usdc", "usdt"}
	networks    = []any{"arbitrum", "avalanche", "base", "ethereum", "polygon", "solana", "tron"}
	v2Networks  = []any{"base", "solana", "polygon", "arbitrum", "avalanche", "ethereum"}
	usdAmount   = map[string]any{"type": "number", "minimum": 0.01, "maximum": 1000000, "description": "USD amount, 0.01 to 1000000."}
	recipientID = map[string]any{"type": "integer", "minimum": 1, "description": "The recipient's id, as the latest answer about it gave it (an update gives a new id)."}
)

// transferProps are the fields of both transfer methods, typed as the spec types them.
func transferProps(tokenEnum, networkEnum []any) map[string]any {
	return map[string]any{
		"quote_id":       map[string]any{"type": "string", "format": "uuid", "description": "The quoteId of get_quote: valid 5 minutes, usable by one transfer."},
		"amount":         map[string]any{"type": "number", "description": "USD amount with at most 2 decimals, equal to the quote's sourceAmount within 0.01."},
		"recipientId":    recipientID,
		"customer_uuid":  map[string]any{"type": "string", "format": "uuid", "description": "A fresh UUID of your own, unique across all transfers: a repeat is refused (409), so a retry with the same UUID never pays twice."},
		"customer_email": map[string]any{"type": "string", "format": "email", "description": "E-mail address the status notifications go to."},
		"source_token":   map[string]any{"type": "string", "enum": tokenEnum},
		"source_network": map[string]any{"type": "string", "enum": networkEnum, "description": "A network whose deposit option is available (get_deposit_options)."},
		"wallet_address": map[string]any{"type": "string", "description": "The wallet that sends the deposit (EVM: 0x and 40 hex digits)."},
		"keep_recipient": map[string]any{"type": "boolean", "description": "Keep the recipient once the transfer ends (default false: it is deleted)."},
	}
}

// tools is the catalog: one tool per operation of spec section 4.
var tools = []toolDef{
	{
		name: "get_deposit_options", title: "Deposit options",
		description: "List the stablecoin tokens and blockchain networks a deposit can be sent on, each `available` or `unavailable`. Call this before creating a transfer: `token` and `network` of an available option are the transfer's `source_token` and `source_network`.",
		method:      "GET", path: "/api/payouts/deposit-options", readOnly: true, idempotent: true,
	},
	{
		name: "get_account_requirements", title: "Recipient fields for a currency",
		description: "List the bank account types a target currency pays out to and, for each, the fields a recipient's `details` must carry (keys, required or not, allowed values, patterns). Call this before create_recipient. Not needed for an `email_recipient` (EUR only).",
		method:      "GET", path: "/api/payouts/account-requirements", readOnly: true, idempotent: true,
		props:    map[string]any{"currency": map[string]any{"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code of the target currency, e.g. EUR."}},
		required: []string{"currency"},
	},
	{
		name: "refresh_account_requirements", title: "Recipient fields for the details so far",
		description: "The recipient fields again for an account type and the details gathered so far: call it when a field marked refreshRequirementsOnChange changes (legalType PRIVATE to BUSINESS can add fields). Reads only.",
		method:      "POST", path: "/api/payouts/account-requirements", readOnly: true, idempotent: true,
		props:    map[string]any{"currency": map[string]any{"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code of the target currency."}},
		required: []string{"currency", "type"},
	},
	{
		name: "list_recipients", title: "List recipients",
		description: "List the calling account's active recipients (saved bank accounts and e-mail recipients), oldest first.",
		method:      "GET", path: "/api/payouts/recipients", readOnly: true, idempotent: true,
	},
	{
		name: "get_recipient", title: "Get a recipient",
		description: "Read one recipient of the calling account by id, also once deleted (active: false). A recipient of another account is refused (403).",
		method:      "GET", path: "/api/payouts/recipients/{id}", readOnly: true, idempotent: true,
		props: map[string]any{"id": recipientID},
	},
	{
		name: "create_recipient", title: "Create a recipient",
		description: "Save a recipient (a bank account, or in EUR an e-mail recipient) to pay out to. `details` carries the fields get_account_requirements lists for the currency and type; `details.address.country`, when an address is given, is a two-letter ISO 3166-1 code. The holder is screened against the sanctions list first. Returns the recipient and its integer id.",
		method:      "POST", path: "/api/payouts/recipients", openWorld: true,
		props: map[string]any{"details": map[string]any{"type": "object", "description": "The account type's fields, e.g. {\"legalType\": \"PRIVATE\", \"iban\": \"DE89370400440532013000\"}; for email_recipient {\"email\": \"...\"}."}},
	},
	{
		name: "update_recipient", title: "Update a recipient",
		description: "Change a recipient's accountHolderName and/or details (all required fields of the type, not only the changed ones). The answer carries a NEW id: use it from then on. Screened again against the sanctions list.",
		method:      "PATCH", path: "/api/payouts/recipients/{id}", openWorld: true,
		props: map[string]any{"id": recipientID},
	},
	{
		name: "delete_recipient", title: "Delete a recipient",
		description: "Deactivate a recipient for good. Its transfers still in progress are FAILED first (counted in transfers_failed). Deleting it again changes nothing.",
		method:      "DELETE", path: "/api/payouts/recipients/{id}", destructive: true, idempotent: true,
		props: map[string]any{"id": recipientID},
	},
	{
		name: "get_quote", title: "Get a quote",
		description: "Price a payout of sourceAmount USD in targetCurrency: the rate, the fees and the amount the recipient receives. The answer's quoteId is valid 5 minutes and usable by one transfer (v1 or v2).",
		method:      "GET", path: "/api/payouts/quote",
		props: map[string]any{
			"targetCurrency": map[string]any{"type": "string", "pattern": "^[A-Za-z]{3}$", "description": "ISO 4217 code of a supported target currency, e.g. EUR."},
			"sourceAmount":   usdAmount,
			"v2_offloader":   map[string]any{"type": "boolean", "description": "Price the v2 fee structure (accounts on it only)."},
			"recipientType":  map[string]any{"type": "string", "description": "email_recipient prices without the transfer fee."},
		},
	},
	{
		name: "create_transfer_v1", title: "Create a v1 transfer",
		description: "Create a payout from a quote to a recipient, paid by a deposit of USDC or USDT: the answer's transfer carries its own deposit_address, to which wallet_address must send exactly `amount` of source_token on source_network. The deposit is detected on chain without a confirmation call. Moves money once the deposit arrives.",
		method:      "POST", path: "/api/payouts/transfer", openWorld: true,
		props:    transferProps(tokens, networks),
		required: []string{"quote_id", "amount", "recipientId", "customer_uuid", "customer_email", "source_token", "source_network", "wallet_address"},
	},
	{
		name: "create_transfer_v2", title: "Create a v2 transfer",
		description: "Create a USDC payout paid to the platform's fixed deposit address of the network (see the answer's instructions). It has no expiry; after sending, call confirm_transfer_v2 with the transaction hash. USDT is v1 only.",
		method:      "POST", path: "/api/payouts/transfer/v2", openWorld: true,
		props:    transferProps([]any{"usdc"}, v2Networks),
		required: []string{"quote_id", "amount", "recipientId", "customer_uuid", "source_token", "source_network"},
	},
	{
		name: "confirm_transfer_v2", title: "Confirm a v2 deposit",
		description: "Record the hash of the on-chain transaction that sent a v2 transfer's deposit; the service then matches it and pays out. The same hash again returns the current status; a hash already used, or another hash for the same transfer, is refused (409).",
		method:      "POST", path: "/api/payouts/transfer/v2/confirm-transfer", idempotent: true, openWorld: true,
		props: map[string]any{
			"transfer_id": map[string]any{"type": "string", "description": "The transfer_id of create_transfer_v2."},
			"tx_hash":     map[string]any{"type": "string", "description": "EVM: 0x and 64 hex digits; Solana: the base58 signature."},
		},
	},
	{
		name: "get_transfer", title: "Get a transfer",
		description: "Read a transfer by its 24-character id: status (ready_to_process, processing, transfer_created, completed, failed, refunded), error, amounts, recipient and quote snapshots. Poll it until completed, failed or refunded. Also readable as the resource payout://transfers/{id}.",
		method:      "GET", path: "/api/payouts/transfer/{transfer_id}", readOnly: true, idempotent: true,
	},
	{
		name: "get_amount_limits", title: "Amount limits",
		description: "The smallest and largest USD amount the account may quote and transfer, both inclusive; null is no bound.",
		method:      "GET", path: "/api/payouts/amount-limits", readOnly: true, idempotent: true,
	},
	{
		name: "get_fee", title: "Platform fee",
		description: "The account's platform fee for a USD amount, for display (it is not deducted from the on-chain transfer).",
		method:      "GET", path: "/api/payouts/fee", readOnly: true, idempotent: true,
		props: map[string]any{"amount": usdAmount},
	},
}

// annotations are the hints of spec MCP's tool annotations.
func (d toolDef) annotations() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		Title:           d.title,
		ReadOnlyHint:    d.readOnly,
		DestructiveHint: &d.destructive,
		IdempotentHint:  d.idempotent,
		OpenWorldHint:   &d.openWorld,
	}
}
