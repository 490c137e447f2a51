#!/bin/sh
# make run: the main job on the bundled assets. With a display and the viewer built: the viewer.
# Otherwise the headless demo: every asset through a chain of all three kernel families into out/,
# printing each op's kernel time.
set -u
BIN=${BIN:-build/tessera}
if { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; } && "$BIN" --version | grep -q "viewer"; then
    exec "$BIN" assets
fi
if "$BIN" --version | grep -q "viewer"; then
    echo "tessera: no display found: running the headless demo into out/ instead of the viewer"
else
    echo "tessera: viewer not built: running the headless demo into out/"
fi
mkdir -p out
"$BIN" --headless --force --timings -o out --ops "gauss:5,equalize,rotate:90" assets
status=$?
echo "tessera: results in out/ ($(ls out | wc -l) files)"
exit $status
