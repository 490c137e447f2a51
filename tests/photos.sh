#!/bin/sh
# tests/photos.sh - photos end to end (tests/photos.py with Debian's Pillow, which the tests use
# to make every input and as the orientation oracle). Usage: sh tests/photos.sh build/tessera.
# Skips with a message (and a "0 passed, 0 failed, 1 skipped" line) where Pillow is absent.
# Debian's python3-pil is seen by /usr/bin/python3; elsewhere (a GPU machine) the python3 on PATH
PY=
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import PIL" 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
    echo "skip photos: Pillow not found (Debian: python3-pil)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
exec "$PY" "$(dirname "$0")/photos.py" "${1:-build/tessera}"
