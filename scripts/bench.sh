#!/usr/bin/env bash
# Runs the benchmark (release build) and prints each figure beside the one recorded in
# docs/performance.md ("Recorded figures"). Arguments go to `ftlsim bench`, e.g.
#   scripts/bench.sh --only oltp --requests 400000
#   scripts/bench.sh --long                   # the collection-sized runs (minutes)
#   scripts/bench.sh --json > bench.json      # the same, machine-readable
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p ftlsim-cli
exec ./target/release/ftlsim bench --compare docs/performance.md "$@"
