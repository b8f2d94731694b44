// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title NoReturnToken: a token whose transfer returns nothing, as USDT's on Ethereum does, for
/// internal/chain/evm/sweep's tests only. Anyone may mint.
contract NoReturnToken {
    mapping(address => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 amount) external {
        require(balanceOf[msg.sender] >= amount, "insufficient balance");
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        emit Transfer(msg.sender, to, amount);
    }
}
