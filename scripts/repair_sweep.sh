#!/usr/bin/env bash
# The never-lossy sweep of JSON repair over folders of JSON documents: every
# single damage at every byte of each document, repaired and checked; prints
# the lossy readings and the counts, exits 1 if there is one.
# Usage: scripts/repair_sweep.sh FOLDER... [--max-bytes N] [--min-bytes N] [--show N]
# e.g.   scripts/repair_sweep.sh fuzz/corpus/repair tests/repair_corpus/real --max-bytes 4096
# (examples/repair_sweep.rs says more.)
set -euo pipefail
exec cargo run --quiet --release --manifest-path "$(dirname "$0")/../Cargo.toml" \
  --example repair_sweep -- "$@"
