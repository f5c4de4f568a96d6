#!/usr/bin/env bash
# Checks the tool-ledger model (model/README.md) exhaustively with spin: the protocols must pass,
# and every planted bug (and today's known one) must be found, by the invariant expected to catch
# it. Exits non-zero otherwise, so a model that stopped finding bugs fails as loudly as one that
# finds a bug in the protocol. Needs spin and gcc. `--deep` adds larger bounds (a few minutes).
set -euo pipefail
cd "$(dirname "$0")"

for tool in spin gcc; do
  command -v "$tool" >/dev/null || { echo "model/check.sh: $tool is not installed" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | spin defines | expected: "pass", or the invariants (INVn, "|" between) allowed to fire
variants=(
  "v1 retry+fail|-DP1=FAIL|pass"
  "v1 retry+decide|-DP1=DECIDE|pass"
  "v2 retry+fail|-DV2 -DP1=FAIL|pass"
  "v2 retry+decide|-DV2 -DP1=DECIDE|pass"
  "v1 two crashes|-DP1=DECIDE -DMAXCRASH=2|pass"
  "v2 two crashes|-DV2 -DP1=DECIDE -DMAXCRASH=2|pass"
  "v1 as coded before the fix: fenced-out result kept|-DP1=DECIDE -DTODAY_FENCED_OUT|INV5"
  "v2 with the old fenced-out result|-DV2 -DP1=DECIDE -DTODAY_FENCED_OUT|INV5"
  "v1 literal (1): a zombie starts a recorded call|-DLITERAL_INV1|INV1"
  "v1 planted: unfenced completion|-DPLANTED_UNFENCED_COMPLETION|INV5|INV1"
  "v1 planted: claim is not CAS|-DPLANTED_CLAIM_NOT_CAS|INV2"
  "v1 planted: step write is not CAS|-DPLANTED_BLIND_STEP_WRITE|INV3|INV5"
  "v1 planted: stale retry claim taken silently|-DPLANTED_STALE_AS_NEW|INV4"
  "v2 planted: riding result not fenced|-DV2 -DPLANTED_UNFENCED_RIDE|INV5"
  "v2 planted: fail claim rides in the step write|-DV2 -DPLANTED_FAIL_CLAIM_IN_STEP|INV4"
  "v2 planted: unfenced completion|-DV2 -DPLANTED_UNFENCED_COMPLETION|INV5|INV1"
)
if [[ "${1:-}" == "--deep" ]]; then
  variants+=(
    "v1 two zombies|-DP1=FAIL -DMAXZOMBIE=2|pass"
    "v2 two zombies|-DV2 -DP1=FAIL -DMAXZOMBIE=2|pass"
    "v1 four runs, two crashes, two zombies|-DP1=FAIL -DMAXRUN=4 -DMAXCRASH=2 -DMAXZOMBIE=2|pass"
    "v2 four runs, two crashes, two zombies|-DV2 -DP1=FAIL -DMAXRUN=4 -DMAXCRASH=2 -DMAXZOMBIE=2|pass"
  )
fi

failed=0
index=0
printf '%-48s %-10s %-16s %12s %8s\n' variant expected result states seconds
for variant in "${variants[@]}"; do
  IFS='|' read -r name defines expected <<<"$variant"
  index=$((index + 1))
  dir="$work/$index"
  mkdir "$dir"
  cp ./*.pml "$dir"
  # Word splitting of $defines is intended: it holds several -D flags.
  # shellcheck disable=SC2086
  # -O0: pan.c compiles in a fraction of the -O2 time, which is most of the total here.
  (cd "$dir" && spin -a $defines ledger.pml >/dev/null && gcc -O0 -w -DSAFETY -o pan pan.c)
  # -m: depth limit far above the deepest path; -w22: hash table of 4M slots (collisions are
  # resolved, so the size costs only speed); -n: no unreached-code report.
  out=$(cd "$dir" && ./pan -m100000 -w22 -n)
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' <<<"$out")
  states=$(sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p' <<<"$out")
  seconds=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' <<<"$out")
  fired=$(grep -o 'assertion violated ((*INV[0-9]' <<<"$out" | grep -o 'INV[0-9]' || true)
  if grep -q 'max search depth too small' <<<"$out"; then
    result="INCOMPLETE"
  elif [[ "$errors" == 0 ]]; then
    result="pass"
  elif [[ -n "$fired" ]]; then
    result="found $fired"
  else
    result="error" # an invalid end state, or an assertion of the model's own bounds
  fi
  ok=0
  if [[ "$expected" == pass ]]; then
    [[ "$result" == pass ]] && ok=1
  elif [[ -n "$fired" && "|$expected|" == *"|$fired|"* ]]; then
    ok=1
  fi
  printf '%-48s %-10s %-16s %12s %8s%s\n' "$name" "${expected//|/,}" "$result" "$states" \
    "${seconds:-?}" "$([[ $ok == 1 ]] || echo '  <-- UNEXPECTED')"
  if [[ $ok == 0 ]]; then
    failed=$((failed + 1))
    grep -E 'assertion violated|error|depth' <<<"$out" >&2 || true
  fi
done

if ((failed)); then
  echo "model check: $failed of ${#variants[@]} variants did not end as expected" >&2
  exit 1
fi
echo "model check: all ${#variants[@]} variants ended as expected"
