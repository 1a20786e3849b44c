#!/usr/bin/env bash
# Builds the Python module into a virtual environment (target/python-venv) from the workspace's
# own debug build, and runs its tests (python/tests) against the command of the same checkout.
# Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/target/python-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# pandas and pyarrow for to_pandas(); nbconvert, ipykernel and matplotlib run the notebook
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    maturin pytest polars pandas pyarrow nbconvert ipykernel matplotlib
cargo build --quiet --bin rocescope
(cd python && VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --quiet)
ROCESCOPE_BIN="$PWD/target/debug/rocescope" "$venv/bin/python" -m pytest -q python/tests "$@"
