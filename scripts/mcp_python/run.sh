#!/usr/bin/env bash
# The official Python MCP SDK (`mcp` on PyPI) against our MCP server and our
# MCP client, so that a fresh machine needs nothing installed by hand:
#   1. a virtual environment with the pinned SDK (requirements.txt), made
#      once under target/ and made again when the pins change;
#   2. client.py: the SDK's client against examples/mcp_server.rs, over stdio
#      and streamable HTTP;
#   3. tests/mcp_python.rs: our client against server.py, a server written
#      with the SDK (ignored by a plain `cargo test`, which has no SDK).
# Called by .ci/run; run it by hand the same way: scripts/mcp_python/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
target="${CARGO_TARGET_DIR:-target}"
venv="$target/mcp-python-venv"
stamp="$venv/requirements.txt"

if ! cmp -s "$here/requirements.txt" "$stamp" || [ ! -x "$venv/bin/python" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$stamp"
fi
python="$(cd "$venv/bin" && pwd)/python"

# Every feature, as .ci/run has just built them all: nothing builds twice.
cargo build --quiet --all-features --example mcp_server
"$python" "$here/client.py" "$target/debug/examples/mcp_server"

TYPED_TOOLS_MCP_PYTHON="$python" cargo test --all-features --test mcp_python -- --include-ignored
