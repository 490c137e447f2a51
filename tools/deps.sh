#!/bin/sh
# make deps: installs what tessera needs from Debian/Ubuntu packages, if anything is missing.
# As root it runs apt-get; otherwise through sudo when sudo works without a password; otherwise
# it prints the exact command to run. Also says whether nvcc was found (CPU-only build without).
set -u
PKGS="libwebp-dev libtiff-dev build-essential libsdl2-dev libstb-dev xvfb xauth xdotool python3-numpy python3-opencv valgrind clang libclang-rt-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    line="apt-get update && apt-get install -y --no-install-recommends$missing"
    echo "tessera: installing:$missing"
    if [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive sh -c "$line" >/tmp/tessera-deps.log 2>&1 ||
            { echo "tessera: apt-get failed; see /tmp/tessera-deps.log" >&2; tail -5 /tmp/tessera-deps.log >&2; exit 1; }
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n sh -c "DEBIAN_FRONTEND=noninteractive $line" >/tmp/tessera-deps.log 2>&1 ||
            { echo "tessera: apt-get failed; see /tmp/tessera-deps.log" >&2; exit 1; }
    else
        echo "tessera: missing packages; run as root:" >&2
        echo "  sudo sh -c '$line'" >&2
        exit 1
    fi
fi
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "tessera: dependencies present (CUDA: $( (command -v nvcc || echo /usr/local/cuda/bin/nvcc) | head -1))"
else
    echo "tessera: dependencies present; nvcc not found: the build will be CPU-only"
fi
