// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";

/// @title PermitToken: a 6-decimal ERC-20 with EIP-2612 permit (as USDC has), for measuring
/// sweeps in internal/chain/evm/sweep's tests only. Anyone may mint: never deploy it anywhere
/// but a test chain.
contract PermitToken is ERC20, ERC20Permit {
    constructor() ERC20("Permit USD", "PUSD") ERC20Permit("Permit USD") {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
