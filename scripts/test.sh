#!/usr/bin/env bash
# Runs every test: the Rust workspace (library, CLI, end-to-end) and the Python package.
# Installs what it needs (maturin, pytest) into a private virtualenv at .venv.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Formatting and lints"
cargo fmt --all --check
cargo clippy --locked --workspace --all-targets -- -D warnings

echo "== Rust tests"
cargo test --locked

echo "== Python package"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null
.venv/bin/python -m pip install --quiet "maturin>=1.5,<2" pytest numpy
.venv/bin/python -m pip install --quiet .
.venv/bin/python -m pytest -q python/tests
