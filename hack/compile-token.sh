#!/usr/bin/env bash
# Compiles internal/chain/token/StableToken.sol (the dev chains' USDC and USDT) with solc-js and
# OpenZeppelin from the per-user npm tool cache (hack/npm-tool.sh), offline once they are cached,
# and writes StableToken.abi and StableToken.bin into OUT_DIR. Given a SOURCE file and a
# CONTRACT name, it compiles that contract instead (the sweep delegate, the permit test token)
# and writes CONTRACT.abi and CONTRACT.bin.
#
# Usage: hack/compile-token.sh SOLC_VERSION OPENZEPPELIN_VERSION OUT_DIR [SOURCE CONTRACT]
#   (`make token` writes the committed files; `make check-token` compiles into a temp dir and diffs)
#
# The output depends only on the compiler version, the settings below and the source texts:
# solc's standard-JSON interface is given source unit names that do not depend on where the
# checkout or the cache lives (`StableToken.sol`, `@openzeppelin/contracts/...`), so the metadata
# hash at the end of the bytecode, and with it the whole file, is the same on every machine.
set -euo pipefail

solc_version=${1:?usage: $0 SOLC_VERSION OPENZEPPELIN_VERSION OUT_DIR}
oz_version=${2:?usage: $0 SOLC_VERSION OPENZEPPELIN_VERSION OUT_DIR}
out=${3:?usage: $0 SOLC_VERSION OPENZEPPELIN_VERSION OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
src=${4:-$here/../internal/chain/token/StableToken.sol}
contract=${5:-StableToken}
unit=$(basename "$src")

solc=$("$here/npm-tool.sh" solc "$solc_version")
oz=$("$here/npm-tool.sh" @openzeppelin/contracts "$oz_version")
mkdir -p "$out"

SOLC="$solc" OZ="$oz" SRC="$src" UNIT="$unit" CONTRACT="$contract" OUT="$out" node - <<'EOF'
const fs = require('fs');
const path = require('path');
const solc = require(process.env.SOLC);

const input = {
  language: 'Solidity',
  sources: { [process.env.UNIT]: { content: fs.readFileSync(process.env.SRC, 'utf8') } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    outputSelection: { [process.env.UNIT]: { [process.env.CONTRACT]: ['abi', 'evm.bytecode.object'] } },
  },
};
const prefix = '@openzeppelin/contracts/';
function findImports(name) {
  if (!name.startsWith(prefix)) return { error: 'not found: ' + name };
  return { contents: fs.readFileSync(path.join(process.env.OZ, name.slice(prefix.length)), 'utf8') };
}
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
let failed = false;
for (const e of output.errors || []) {
  console.error(e.formattedMessage || e.message);
  if (e.severity === 'error') failed = true;
}
if (failed) process.exit(1);
const name = process.env.CONTRACT;
const c = output.contracts[process.env.UNIT][name];
fs.writeFileSync(path.join(process.env.OUT, name + '.abi'), JSON.stringify(c.abi, null, 2) + '\n');
fs.writeFileSync(path.join(process.env.OUT, name + '.bin'), c.evm.bytecode.object + '\n');
console.error('[compile-token] solc ' + solc.version() + ': ' + name + '.abi, ' + name + '.bin in ' + process.env.OUT);
EOF
