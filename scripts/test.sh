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
.venv/bin/python -m pip install --quiet "maturin>=1.5,<2" pytest numpy pandas matplotlib
# The Ray extra, for the test that the Ray backend gives the local backend's frame.
.venv/bin/python -m pip install --quiet ".[ray]"
# Headless Chromium from the distribution, for the test that the HTML report renders (CI runs
# as root on Debian; elsewhere the test says why it did not run).
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 ||
        (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1)) ||
        echo "note: chromium could not be installed; the report's render check will be skipped"
fi
FTLSIM_BIN="$PWD/target/debug/ftlsim" FTLSIM_REQUIRE_RAY=1 .venv/bin/python -m pytest -q python/tests
