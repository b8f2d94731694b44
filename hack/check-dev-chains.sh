#!/usr/bin/env bash
# Checks the dev chains of a real `make run`: starts it in DEV_DIR, waits for DEV_DIR/env, checks
# every PAYOUT_EVM_* variable of CONTRACT.md against the running chains (chain id, token code,
# a block at least every 2 s), stops the instance with SIGTERM and checks that no anvil of it is
# left. Run it twice to see the second run resume the chains (same genesis hashes).
#
# Usage: hack/check-dev-chains.sh [DEV_DIR]   (default .dev-chains, kept apart from .dev)
set -euo pipefail
dev=${1:-$PWD/.dev-chains}
mkdir -p "$dev"
dev=$(cd "$dev" && pwd)
log="$dev/make-run.log"
rm -f "$dev/env" # a killed run's; payout-dev removes it too, but only once make has built it

fail() { echo "check-dev-chains: FAIL: $*" >&2; exit 1; }
rpc() { # rpc URL METHOD PARAMS -> the result field
  curl -sf -H 'content-type: application/json' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$2\",\"params\":$3}" "$1" |
    sed -n 's/.*"result":"\{0,1\}\([^",}]*\).*/\1/p' || fail "$2 on $1 failed"
}

start=$(date +%s.%N)
setsid make --no-print-directory run DEV_DIR="$dev" >"$log" 2>&1 &
runner=$!
stop() {
  kill -TERM -- "-$runner" 2>/dev/null || true
  for _ in $(seq 1 120); do pgrep -g "$runner" >/dev/null || return 0; sleep 0.5; done
  kill -KILL -- "-$runner" 2>/dev/null || true
}
trap stop EXIT
until [ -f "$dev/env" ]; do
  kill -0 "$runner" 2>/dev/null || { tail -n 30 "$log"; fail "make run exited before it was ready"; }
  sleep 0.1
done
printf 'make run ready after %.1f s\n' "$(echo "$(date +%s.%N) - $start" | bc)"
anvils=$(grep ' .*anvil$' "$dev/pids" | cut -d' ' -f1 | paste -sd' ')
[ -n "$anvils" ] || fail "$dev/pids lists no anvil"

# shellcheck disable=SC1091
source "$dev/env"
[ -n "${PAYOUT_EVM_FUNDED_KEY:-}" ] || fail "PAYOUT_EVM_FUNDED_KEY missing"
[ -n "${PAYOUT_EVM_CONFIRMATIONS:-}" ] || fail "PAYOUT_EVM_CONFIRMATIONS missing"
for net in BASE ETHEREUM POLYGON ARBITRUM AVALANCHE; do
  url_var=PAYOUT_EVM_RPC_$net usdc_var=PAYOUT_EVM_TOKEN_${net}_USDC
  url=${!url_var:-} usdc=${!usdc_var:-}
  [ -n "$url" ] && [ -n "$usdc" ] || fail "$url_var or $usdc_var missing"
  code=$(rpc "$url" eth_getCode "[\"$usdc\",\"latest\"]")
  [ ${#code} -gt 2 ] || fail "no USDC code at $usdc on $net"
  b1=$(rpc "$url" eth_blockNumber '[]'); sleep 2.1; b2=$(rpc "$url" eth_blockNumber '[]')
  [ $((b2)) -gt $((b1)) ] || fail "$net mined no block in 2.1 s ($b1 -> $b2)"
  genesis=$(curl -sf -H 'content-type: application/json' \
    -d '{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x0",false]}' "$url" |
    grep -o '"hash":"0x[0-9a-f]*"' | head -1 | cut -d'"' -f4)
  printf '%-9s chain id %-12d %s USDC %s head %d genesis %s\n' "$net" "$(rpc "$url" eth_chainId '[]')" \
    "$url" "$usdc" "$((b2))" "$genesis"
done
code=$(rpc "$PAYOUT_EVM_RPC_ETHEREUM" eth_getCode "[\"${PAYOUT_EVM_TOKEN_ETHEREUM_USDT:?USDT on ethereum missing}\",\"latest\"]")
[ ${#code} -gt 2 ] || fail "no USDT code on ethereum"
echo "every PAYOUT_EVM_* variable is set and answers (confirmations $PAYOUT_EVM_CONFIRMATIONS)"

stop
trap - EXIT
for pid in $anvils; do
  ! kill -0 "$pid" 2>/dev/null || fail "anvil $pid still runs after make run stopped"
done
[ ! -f "$dev/env" ] || fail "$dev/env left behind"
echo "stopped: no anvil left (pids $anvils); saved chains: $(ls "$dev/chains" | paste -sd' ')"
