package apiserver

import (
	"context"

	"github.com/stablepay/payout-operator/internal/chain"
	"github.com/stablepay/payout-operator/internal/transfer"
)

// checkWallet applies the KYC wallet rule (transfer.SenderWallet) to the wallet of a recipient's
// create, update or deletion (spec 4.5 rule 1, 4.7, 4.8).
func (s *Server) checkWallet(ctx context.Context, c *Caller, field, wallet string, given bool) error {
	w := s.senderWallet(ctx, c, wallet, given, c.Account.Spec.KYCRequired, false)
	return transfer.SenderWallet(w, field, c.Account.Spec.KYCRequired, false)
}

// senderWallet reads what the compliance services say of a sender wallet: the KYC service when
// kyc is set and the wallet is well formed, the risk screening when screen is set and it is an
// EVM wallet. A service that cannot answer is recorded, for the rule to fail closed.
func (s *Server) senderWallet(ctx context.Context, c *Caller, wallet string, given, kyc, screen bool) transfer.WalletFacts {
	w := transfer.WalletFacts{Address: wallet, Given: given}
	if kyc && (chain.IsEVMAddress(wallet) || chain.IsSolanaAddress(wallet)) {
		w.Verified, w.KYCErr = s.cfg.KYC.Verified(ctx, c.Account.Name, wallet)
	}
	if screen && chain.IsEVMAddress(wallet) {
		w.Blocked, w.ScreenErr = s.cfg.WalletScreen.Blocked(ctx, wallet)
	}
	return w
}
