// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title SweepDelegate: the code deposit addresses delegate to (EIP-7702) to be swept.
/// @notice A deposit address's key signs one authorization delegating the address to this
/// contract; from then on anyone may call sweep on the address, and the only thing it can do is
/// send the address's whole balance of a token to the treasury fixed in this contract's code.
/// The treasury is an immutable, so it is part of the runtime code and of the CREATE2 address
/// the contract is deployed at: the sweeper derives that address from the treasury and this
/// bytecode, so an authorization can only ever delegate to this code with that treasury. On a
/// network without EIP-7702 the same contract pulls deposits with EIP-2612 permits signed for it
/// as the spender (sweepPermits), again only to the treasury. The
/// contract keeps no storage (a delegating account's storage is its own, and stays when the
/// delegation changes) and has no receive function: native coins sent to a delegated deposit
/// address are refused, not stranded.
contract SweepDelegate {
    /// @notice Where every sweep sends: fixed at deployment, in the runtime code.
    address public immutable treasury;

    /// @notice A batch could not sweep an account (its authorization did not apply, or the
    /// token refused the transfer); the rest of the batch went on.
    event SweepFailed(address indexed account, address indexed token);

    constructor(address treasury_) {
        require(treasury_ != address(0), "SweepDelegate: no treasury");
        treasury = treasury_;
    }

    /// @notice Sends this account's whole balance of token to the treasury and returns it. The
    /// amount is read when the call runs, never signed in advance: a second sweep of the same
    /// account moves 0. The call tolerates tokens whose transfer returns nothing (USDT).
    function sweep(address token) public returns (uint256 amount) {
        amount = IERC20Balance(token).balanceOf(address(this));
        if (amount == 0) {
            return 0;
        }
        (bool ok, bytes memory ret) =
            token.call(abi.encodeWithSelector(IERC20Balance.transfer.selector, treasury, amount));
        require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "SweepDelegate: transfer failed");
    }

    /// @notice An EIP-2612 permit of a deposit address for this contract as the spender.
    struct Permit {
        address owner;
        uint256 value;
        uint256 deadline;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    /// @notice For networks without EIP-7702: uses each permit and pulls the permitted value
    /// from its owner to the treasury, in one transaction. A permit that fails (used already,
    /// expired) or a pull the token refuses is skipped with SweepFailed; a permit used twice
    /// fails the second time (its nonce is spent), so a batch signed again moves nothing twice.
    /// Called on a delegated account rather than on this contract, the permits name another
    /// spender and fail: nothing moves.
    function sweepPermits(address token, Permit[] calldata permits) external {
        for (uint256 i = 0; i < permits.length; ++i) {
            Permit calldata p = permits[i];
            (bool ok,) = token.call(
                abi.encodeCall(IERC20Permit.permit, (p.owner, address(this), p.value, p.deadline, p.v, p.r, p.s))
            );
            if (ok) {
                bytes memory ret;
                (ok, ret) = token.call(abi.encodeCall(IERC20Balance.transferFrom, (p.owner, treasury, p.value)));
                ok = ok && (ret.length == 0 || abi.decode(ret, (bool)));
            }
            if (!ok) {
                emit SweepFailed(p.owner, token);
            }
        }
    }

    /// @notice Calls sweep(token) on each account (delegated to this code) in one transaction.
    /// An account that fails is skipped with SweepFailed, so one bad authorization does not stop
    /// the batch; what moved is what the token's Transfer events to the treasury say.
    function sweepBatch(address token, address[] calldata accounts) external {
        for (uint256 i = 0; i < accounts.length; ++i) {
            (bool ok,) = accounts[i].call(abi.encodeCall(this.sweep, (token)));
            if (!ok) {
                emit SweepFailed(accounts[i], token);
            }
        }
    }
}

interface IERC20Balance {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}
