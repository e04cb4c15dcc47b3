#!/usr/bin/env bash
# Creates (or updates) the virtualenv benches/peers/.venv with the pinned requirements.
# Idempotent; touches nothing outside benches/peers/. PYTHON picks the interpreter (python3).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$venv/bin/python" -c 'import halide, cv2, numpy; print("benches/peers/.venv ready: opencv", cv2.__version__, "numpy", numpy.__version__)'
