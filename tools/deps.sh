#!/bin/sh
# make deps: installs what tessera needs from Debian/Ubuntu packages, if anything is missing.
# As root it runs apt-get; otherwise through sudo when sudo works without a password; otherwise
# it prints the exact command to run. Also says whether nvcc was found (CPU-only build without),
# and where the CUDA toolkit has no nvjpeg.h, takes nvJPEG's header and library from PyPI's
# nvidia-nvjpeg wheel (13.0.x, matching CUDA 13.0) into .deps/nvjpeg/{include,lib} (not fatal:
# without it the build uses the CPU codecs).
# `sh tools/deps.sh --engines` (make engines-deps) installs what `make engines-check` runs instead:
# Debian's slurmctld, slurmd and munge (tools/slurm_check.sh), and Ray Data from PyPI into the
# venv .deps/venv (tools/ray_convert.py, tests/ray_check.py).
set -u
if [ "${1:-}" = --engines ]; then
    line="apt-get update && apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge"
    if ! command -v slurmctld >/dev/null 2>&1 && [ ! -x /usr/sbin/slurmctld ]; then
        echo "tessera: installing Slurm (slurmctld slurmd slurm-client munge)"
        if [ "$(id -u)" = 0 ]; then
            DEBIAN_FRONTEND=noninteractive sh -c "$line" >/tmp/tessera-deps.log 2>&1 ||
                echo "tessera: apt-get failed (the Slurm check will skip); see /tmp/tessera-deps.log" >&2
        elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo -n sh -c "DEBIAN_FRONTEND=noninteractive $line" >/tmp/tessera-deps.log 2>&1 ||
                echo "tessera: apt-get failed (the Slurm check will skip); see /tmp/tessera-deps.log" >&2
        else
            echo "tessera: Slurm missing (the Slurm check will skip); as root: sudo sh -c '$line'" >&2
        fi
    fi
    VENV=${TESSERA_VENV:-.deps/venv}
    RAY_REQ=${TESSERA_RAY:-ray[data]==2.60.*}
    if ! "$VENV/bin/python" -c 'import ray.data' 2>/dev/null; then
        echo "tessera: installing $RAY_REQ into $VENV"
        { python3 -m venv "$VENV" && "$VENV/bin/pip" install --quiet "$RAY_REQ"; } \
            >/tmp/tessera-ray.log 2>&1 ||
            { echo "tessera: the Ray venv failed (the Ray check will skip); see /tmp/tessera-ray.log" >&2
              tail -3 /tmp/tessera-ray.log >&2; }
    fi
    echo "tessera: Slurm: $(/usr/sbin/slurmctld -V 2>/dev/null || echo none); Ray: $("$VENV/bin/python" -c 'import ray; print(ray.__version__, "in '"$VENV"'")' 2>/dev/null || echo none)"
    exit 0
fi
# libjpeg62-turbo-dev: JPEG (libjpeg-turbo); libspng-dev + zlib1g-dev: PNG decode (and the encode
# of the largest images), libdeflate-dev: PNG encode; libwebp-dev: WebP;
# libtiff-dev: TIFF; libheif-dev: HEIC and AVIF, libjxl-dev: JPEG XL (both optional to the build);
# libheif-examples and libjxl-tools: the reference encoders and decoders the tests compare with;
# pkg-config finds them.
PKGS="build-essential pkg-config libjpeg62-turbo-dev libspng-dev zlib1g-dev libdeflate-dev libwebp-dev libtiff-dev libheif-dev libjxl-dev libheif-examples libjxl-tools libsdl2-dev libstb-dev xvfb xauth xdotool python3-numpy python3-opencv python3-pil valgrind clang libclang-rt-dev"
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
# nvJPEG: the toolkit's own when it has one; else the wheel, unpacked once.
CUDA=${CUDA:-/usr/local/cuda}
NVJ=.deps/nvjpeg
if [ -d "$CUDA" ] && [ ! -f "$CUDA/include/nvjpeg.h" ] && [ ! -f "$NVJ/include/nvjpeg.h" ]; then
    py=$(command -v python3 || true)
    tmp=$(mktemp -d)
    if [ -n "$py" ] && "$py" -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" \
            'nvidia-nvjpeg==13.0.*' >"$tmp/pip.log" 2>&1 &&
        "$py" - "$tmp" "$NVJ" <<'PY'
import glob, os, sys, zipfile
tmp, dst = sys.argv[1], sys.argv[2]
whl = zipfile.ZipFile(glob.glob(os.path.join(tmp, "*.whl"))[0])
want = {"nvjpeg.h": "include", "libnvjpeg.so.13": "lib"}
for name in whl.namelist():
    base = os.path.basename(name)
    if base in want:
        os.makedirs(os.path.join(dst, want[base]), exist_ok=True)
        with open(os.path.join(dst, want[base], base), "wb") as f:
            f.write(whl.read(name))
missing = [b for b, d in want.items() if not os.path.exists(os.path.join(dst, d, b))]
sys.exit(1 if missing else 0)
PY
    then
        ln -sf libnvjpeg.so.13 "$NVJ/lib/libnvjpeg.so"
        echo "tessera: nvJPEG taken from PyPI's nvidia-nvjpeg wheel into $NVJ"
    else
        echo "tessera: no nvjpeg.h in $CUDA and the nvidia-nvjpeg wheel could not be fetched (PyPI unreachable?): JPEG stays on the CPU" >&2
        [ -f "$tmp/pip.log" ] && tail -2 "$tmp/pip.log" >&2
    fi
    rm -rf "$tmp"
fi
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "tessera: dependencies present (CUDA: $( (command -v nvcc || echo /usr/local/cuda/bin/nvcc) | head -1))"
else
    echo "tessera: dependencies present; nvcc not found: the build will be CPU-only"
fi
