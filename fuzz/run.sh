#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 600) on the nightly toolchain:
# half with small inputs (up to 4 KiB), half with inputs up to 1 MiB.
# Usage: fuzz/run.sh [SECONDS] [TARGET...]. Installs cargo-fuzz if missing.
# Findings go to fuzz/artifacts/TARGET/, the growing corpus to fuzz/corpus/
# (both ignored by git); fuzz/seeds/ holds the committed seed inputs.
# Exits non-zero when a target found a crash.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo +nightly install cargo-fuzz --locked
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list)
half=$(( seconds / 2 ))
found=0
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target" "seeds/$target"
  for max_len in 4096 1048576; do
    log=$(mktemp)
    if cargo +nightly fuzz run "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$half" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1; then
      verdict="no finding"
    else
      verdict="FOUND (see fuzz/artifacts/$target)"
      found=1
    fi
    execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
    rss=$(grep -oE 'stat::peak_rss_mb: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
    echo "$target, inputs up to $max_len B, ${half}s: $execs executions, peak RSS ${rss} MB, $verdict"
    grep -E 'SUMMARY|panicked|Test unit written' "$log" | head -5 || true
    rm -f "$log"
  done
done
exit $found
