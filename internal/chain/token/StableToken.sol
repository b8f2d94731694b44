// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title StableToken: the dev chains' USDC and USDT.
/// @notice An ERC-20 with 6 decimals, like USDC and USDT on the real chains, whose owner (the
/// deployer) mints. Dev chains only: it has none of the real tokens' pausing, blocklists or
/// upgradeability.
contract StableToken is ERC20, Ownable {
    constructor(string memory name_, string memory symbol_) ERC20(name_, symbol_) {}

    /// @notice Token amounts are integers in base units: 1 token is 1,000,000.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Creates `amount` base units for `to`. Only the owner.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
