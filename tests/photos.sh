#!/bin/sh
# tests/photos.sh - photos end to end (tests/photos.py with Debian's Pillow, which the tests use
# to make every input and as the orientation oracle). Usage: sh tests/photos.sh build/tessera.
# Skips with a message (and a "0 passed, 0 failed, 1 skipped" line) where Pillow is absent.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
if [ -z "$PY" ] || ! "$PY" -c "import PIL" 2>/dev/null; then
    echo "skip photos: Pillow not found (Debian: python3-pil)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
exec "$PY" "$(dirname "$0")/photos.py" "${1:-build/tessera}"
