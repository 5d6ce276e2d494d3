#!/usr/bin/env bash
# The reliability and security campaign: heavy, bounded runs of the sandbox, single-use, fault,
# fuzz, secret and audit checks against loopback only, ending in a summary table.
# Usage: tests/campaign.sh            (about 2-4 minutes on 2 cores after a build)
#        RACE_TRIALS=100 FUZZ_CASES=20000 tests/campaign.sh
set -uo pipefail
cd "$(dirname "$0")/.."
RACE_TRIALS=${RACE_TRIALS:-100}
FUZZ_CASES=${FUZZ_CASES:-20000}
log=$(mktemp)
rows=()
status=0

run() { # name, then the cargo test arguments; $EXTRA goes to the test binaries
  local name=$1; shift
  local started=$SECONDS
  # shellcheck disable=SC2086
  if cargo test --locked "$@" -- --nocapture ${EXTRA:-} >>"$log" 2>&1; then
    rows+=("$name|passed|$((SECONDS - started)) s")
  else
    rows+=("$name|FAILED|$((SECONDS - started)) s (see $log)")
    status=1
  fi
}

cargo build --locked -p equinix-mcp >>"$log" 2>&1 || { echo "build failed, see $log"; exit 1; }
run "hostile components (imports, exports, catalog, traps, 10 MB body)" -p equinix-mcp-tests --test hostile
EXTRA=--ignored run "next-call latency after traps" -p equinix-mcp-tests --test hostile campaign_
EQUINIX_MCP_RACE_TRIALS=$RACE_TRIALS run "single use under races ($RACE_TRIALS trials x 8 confirms) and capacity" -p equinix-mcp-tests --test races
run "Fabric faults (500/502/401/403/429, stalls, bad JSON, create timeouts)" -p equinix-mcp-tests --test faults --test foundation
PROPTEST_CASES=$FUZZ_CASES run "fuzz + properties ($FUZZ_CASES cases per property)" -p equinix-broker-component --test properties
run "secrets (every tool, error paths, debug logs, audit log)" -p equinix-mcp-tests --test secrets
run "audit log durability (kill -9 after confirm)" -p equinix-mcp-tests --test broker audit
EXTRA=--ignored run "partitions in network namespaces (etcd; Sentinel with 1 and 2 acknowledgements)" -p equinix-mcp-tests --test e2e partitions

echo
echo "| check | result | time |"
echo "|---|---|---|"
for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
echo
echo "| figure | value | detail |"
echo "|---|---|---|"
grep -h '^CAMPAIGN|' "$log" | sed 's/^CAMPAIGN|//' | while IFS='|' read -r a b c; do echo "| $a | $b | $c |"; done
echo
echo "fuzz: $((FUZZ_CASES * 2)) generated inputs (spec parsing and tool arguments, 3 inputs per tool-argument case), crashes: $([ $status = 0 ] && echo 0 || echo 'see log')"
echo "full log: $log"
exit $status
