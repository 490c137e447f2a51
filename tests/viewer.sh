#!/bin/sh
# tests/viewer.sh - the viewer end to end with the CPU backend: SDL's offscreen driver with the
# software renderer (deterministic) and a real X server (xvfb-run), driven by --keys, --frames and
# --screenshot. Checks that the screenshot is not blank, that at 1:1 the image region equals the
# headless result exactly, that the HUD draws text, that a bad file shows its error and the viewer
# goes on, that Ctrl+S writes NAME.tessera.png beside the file and never over anything, and the
# no-display message. Usage: sh tests/viewer.sh build/tessera.
# Ends with "N passed, N failed, N skipped".
TESSERA=${1:-build/tessera}
BUILD=$(dirname "$TESSERA")
MKIMAGE="$BUILD/mkimage"
T=$(mktemp -d /tmp/tessera-viewer.XXXXXX)
trap '[ -n "$KEEP" ] || rm -rf "$T"' EXIT
SUITE=viewer
export XDG_CACHE_HOME="$T/cache" # thumbnails are cached here, never in the user's cache
. "$(dirname "$0")/harness.sh"

if ! "$TESSERA" --version 2>/dev/null | grep -q viewer; then
    skip "every viewer test" "$TESSERA was built without SDL2"
    summary
fi
PY=/usr/bin/python3
"$PY" -c 'import cv2, numpy' 2>/dev/null || PY=""

# ---------------------------------------------------------------- helpers

# check MODE ARGS...: pixel checks of screenshots (python3 with OpenCV); prints why on failure.
cat >"$T/check.py" <<'PY'
import sys
import cv2
import numpy as np

def load(path, flags=cv2.IMREAD_COLOR):
    im = cv2.imread(path, flags)
    if im is None:
        sys.exit(f"cannot read {path}")
    return im

def as_shown(exp):
    """What the viewer shows for an image: 8-bit BGR, 16-bit as round(v / 257)."""
    if exp.dtype == np.uint16:
        exp = ((exp.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)
    return cv2.cvtColor(exp, cv2.COLOR_GRAY2BGR) if exp.ndim == 2 else exp

mode, args = sys.argv[1], sys.argv[2:]
shot = load(args[0])
if mode == "centred":  # SHOT EXPECTED: the image region, centred at 1:1, equals EXPECTED
    exp = as_shown(load(args[1], cv2.IMREAD_UNCHANGED))
    H, W = shot.shape[:2]
    h, w = exp.shape[:2]
    x, y = (W - w) // 2, (H - h) // 2
    diff = np.abs(shot[y:y + h, x:x + w].astype(int) - exp.astype(int))
    if diff.max():
        r = cv2.matchTemplate(shot, exp, cv2.TM_SQDIFF)
        best = cv2.minMaxLoc(r)
        sys.exit(f"{w}x{h} at ({x},{y}) of {W}x{H}: {np.count_nonzero(diff.any(axis=2))} pixels "
                 f"differ (max {diff.max()}); best match at {best[2]} (sqdiff {best[0]:.0f})")
elif mode == "notblank":  # SHOT: many colours, not one flat fill
    colours = len(np.unique(shot.reshape(-1, 3), axis=0))
    if colours < 200 or shot.std() < 10:
        sys.exit(f"{colours} colours, std {shot.std():.1f}")
elif mode == "hud":  # ON OFF: the panel (right 300 columns) differs and holds light text
    off = load(args[1])
    W = shot.shape[1]
    on, off = shot[0:90, W - 300:W], off[0:90, W - 300:W]
    differ = np.count_nonzero((on != off).any(axis=2))
    text = np.count_nonzero((on > 150).all(axis=2))
    if differ < 2000 or text < 300:
        sys.exit(f"HUD corner: {differ} pixels differ from the HUD-off shot, {text} text pixels")
elif mode == "error":  # SHOT: the red error text in the middle band
    H = shot.shape[0]
    band = shot[H // 3:2 * H // 3].astype(int)
    red = np.count_nonzero((band[..., 2] > 200) & (band[..., 1] < 150) & (band[..., 0] < 150))
    if red < 100:
        sys.exit(f"{red} red pixels in the middle band")
elif mode == "inarea":  # SHOT EXPECTED AW AH: centred at 1:1 in the top-left AW x AH area
    exp = as_shown(load(args[1], cv2.IMREAD_UNCHANGED))
    AW, AH = int(args[2]), int(args[3])
    h, w = exp.shape[:2]
    x, y = (AW - w) // 2, (AH - h) // 2
    diff = np.abs(shot[y:y + h, x:x + w].astype(int) - exp.astype(int))
    if diff.max():
        sys.exit(f"{w}x{h} at ({x},{y}) in {AW}x{AH}: {np.count_nonzero(diff.any(axis=2))} pixels differ")
elif mode == "size":  # SHOT W H
    if shot.shape[1] != int(args[1]) or shot.shape[0] != int(args[2]):
        sys.exit(f"{shot.shape[1]}x{shot.shape[0]}")
elif mode == "differ":  # A B: not the same pixels
    b = load(args[1])
    if shot.shape == b.shape and not (shot != b).any():
        sys.exit("the same pixels")
elif mode == "blocks":  # SHOT: the 16384x16384 4x4 gray blocks, fitted (600x600 at (100,0))
    for by in range(4):
        for bx in range(4):
            v = shot[75 + 150 * by, 100 + 75 + 150 * bx]
            want = 16 * (by * 4 + bx) + 8
            if abs(int(v[0]) - want) > 1 or len(set(v.tolist())) != 1:
                sys.exit(f"block ({bx},{by}): {v.tolist()}, want {want}")
elif mode == "centre":  # SHOT LEVEL: just below right of the window's centre, gray LEVEL
    H, W = shot.shape[:2]
    v = shot[H // 2 + 20, W // 2 + 20]  # past the blocks' corner at the exact centre
    if abs(int(v[0]) - int(args[1])) > 1:
        sys.exit(f"centre {v.tolist()}, want {args[1]}")
elif mode == "same":  # A B: same pixels
    b = load(args[1], cv2.IMREAD_UNCHANGED)
    a = load(args[0], cv2.IMREAD_UNCHANGED)
    if a.shape != b.shape or (a != b).any():
        sys.exit(f"{a.shape} vs {b.shape}: differ")
PY
check() {
    if [ -z "$PY" ]; then skip "$1" "/usr/bin/python3 with cv2 and numpy missing"; return; fi
    name=$1; shift
    "$PY" "$T/check.py" "$@" >"$T/err" 2>&1 && ok "$name" || bad "$name"
}

# view NAME ENV... -- ARGS...: runs the viewer (CPU backend, 800x600 window) with the given
# environment; $rc is its status, stderr in $T/err.
view() {
    name=$1; shift
    envs=""
    while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
    shift
    env TESSERA_GEOMETRY=800x600 $envs "$TESSERA" --backend cpu -q "$@" >"$T/out" 2>"$T/err"
    rc=$?
}
OFF="SDL_VIDEODRIVER=offscreen SDL_RENDER_DRIVER=software"
expect_rc() { [ "$rc" = "$2" ] && ok "$1" || bad "$1 (exit $rc, want $2)"; }

mk() { "$MKIMAGE" "$@" >/dev/null || { echo "mkimage failed: $*"; exit 1; }; }
mkdir -p "$T/in" "$T/save" "$T/dir"
mk 201 151 3 8 11 "$T/in/rgb.png"
mk 64 48 3 16 12 "$T/in/rgb16.png"
mk 40 30 2 8 13 "$T/in/ga.png"
printf 'not an image at all\n' >"$T/in/bad.png"
OPS="gauss:5,equalize,rotate:90"
"$TESSERA" --headless -q --backend cpu --ops "$OPS" -o "$T/exp.png" "$T/in/rgb.png" &&
    "$TESSERA" --headless -q --backend cpu --ops flop -o "$T/exp16.png" "$T/in/rgb16.png" &&
    "$TESSERA" --headless -q --backend cpu --ops flop -o "$T/exp_flop.png" "$T/in/rgb.png" &&
    "$TESSERA" --headless -q --backend cpu -o "$T/exp_rgb.png" "$T/in/rgb.png" ||
    { echo "headless runs for the expected images failed"; exit 1; }

# ---------------------------------------------------------------- no display, bad options

env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER "$TESSERA" "$T/in/rgb.png" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" != 0 ] && grep -qF "tessera: no display (DISPLAY/WAYLAND_DISPLAY unset): use --headless, or SDL_VIDEODRIVER=offscreen" "$T/err" &&
    ok "no display: one line pointing to --headless, exit $rc" || bad "no display message (exit $rc)"
view "bad --keys" $OFF -- --keys "e,,b" --frames 1 "$T/in/rgb.png"
[ "$rc" = 2 ] && grep -q -- "--keys" "$T/err" && ok "bad --keys is a usage error" || bad "bad --keys is a usage error (exit $rc)"
view "bad --ops" $OFF -- --ops "blur" --frames 1 "$T/in/rgb.png"
[ "$rc" = 2 ] && ok "bad --ops is a usage error" || bad "bad --ops is a usage error (exit $rc)"

# a path that does not exist: a line on stderr; exit 1 when nothing could be opened
view "missing" $OFF -- --frames 1 "$T/in/nosuch.png"
[ "$rc" = 1 ] && grep -q "^tessera: .*/in/nosuch.png: No such file or directory" "$T/err" &&
    grep -q "nothing to show" "$T/err" && ok "a missing path: named on stderr, exit 1 when nothing opens" ||
    bad "a missing path (exit $rc): $(head -c 300 "$T/err")"
view "missing and one" $OFF -- --frames 1 "$T/in/nosuch.png" "$T/in/rgb.png"
[ "$rc" = 0 ] && grep -q "nosuch.png: No such file or directory" "$T/err" &&
    ok "a missing path among others: named on stderr, the others shown (exit 0)" ||
    bad "a missing path among others (exit $rc): $(head -c 300 "$T/err")"

# ---------------------------------------------------------------- offscreen, software renderer

view "1:1" $OFF -- --ops "$OPS" --hud off --keys "=" --frames 2 --screenshot "$T/off_plain.png" "$T/in/rgb.png"
expect_rc "offscreen: --keys/--frames/--screenshot run exits 0" 0
check "offscreen: screenshot is not blank" notblank "$T/off_plain.png"
check "offscreen: 1:1 image region equals the headless $OPS result" centred "$T/off_plain.png" "$T/exp.png"

view "keys" $OFF -- --hud off --keys "b,e,>,=" --frames 1 --screenshot "$T/off_keys.png" "$T/in/rgb.png"
check "offscreen: op keys b,e,> build the same chain" centred "$T/off_keys.png" "$T/exp.png"

view "hud" $OFF -- --ops "$OPS" --keys "=" --frames 2 --screenshot "$T/off_hud.png" "$T/in/rgb.png"
check "offscreen: the HUD draws text (HUD on vs off)" hud "$T/off_hud.png" "$T/off_plain.png"

view "16-bit" $OFF -- --ops flop --hud off --keys "=" --frames 1 --screenshot "$T/off_16.png" "$T/in/rgb16.png"
check "offscreen: 16-bit shown as round(v/257), exactly" centred "$T/off_16.png" "$T/exp16.png"

view "variants" $OFF -- --ops "$OPS" --keys "Tab,],],[,Shift+Tab,x,B,L,c" --frames 2 "$T/in/rgb.png"
expect_rc "offscreen: Tab, [ ], x, B, L, c run" 0
view "view keys" $OFF -- --ops sharpen --keys "plus,plus,WheelUp,minus,WheelDown,w,h,j,k,l,Left,Up,Right,Down,f,?,F1" --frames 1 "$T/in/rgb.png"
expect_rc "offscreen: zoom, pan, fullscreen and help keys run" 0

view "bad file" $OFF -- --frames 2 --screenshot "$T/off_bad.png" "$T/in/bad.png" "$T/in/rgb.png"
expect_rc "offscreen: a bad file does not stop the viewer (exit 0)" 0
check "offscreen: the bad file's error is shown in the window" error "$T/off_bad.png"
view "next after bad" $OFF -- --ops flop --hud off --keys "n,=" --frames 1 --screenshot "$T/off_next.png" "$T/in/bad.png" "$T/in/rgb.png"
check "offscreen: n after the bad file shows the next image" centred "$T/off_next.png" "$T/exp_flop.png"

cp "$T/in/rgb.png" "$T/in/ga.png" "$T/dir/"
view "dir" $OFF -- --keys "End,Home,p,n,Space,BackSpace" --frames 1 "$T/dir" "$T/in/rgb16.png"
expect_rc "offscreen: directories and navigation keys" 0

# Ctrl+S: beside the original, a new name every time, the original untouched
cp "$T/in/rgb.png" "$T/save/x.png"
sum0=$(md5sum <"$T/save/x.png")
view "save" $OFF -- --ops flop --keys "Ctrl+s" --frames 1 "$T/save/x.png"
[ "$rc" = 0 ] && [ -f "$T/save/x.tessera.png" ] && ok "Ctrl+S writes x.tessera.png beside x.png" || bad "Ctrl+S writes x.tessera.png (exit $rc; $(ls "$T/save" | tr '\n' ' '))"
check "Ctrl+S saves the processed image" same "$T/save/x.tessera.png" "$T/exp_flop.png"
sum1=$(md5sum <"$T/save/x.tessera.png")
view "save again" $OFF -- --keys "Ctrl+s" --frames 1 "$T/save/x.png"
[ -f "$T/save/x.tessera-1.png" ] && [ "$sum1" = "$(md5sum <"$T/save/x.tessera.png")" ] &&
    ok "a second Ctrl+S writes x.tessera-1.png, never over x.tessera.png" || bad "second Ctrl+S ($(ls "$T/save" | tr '\n' ' '))"
[ "$sum0" = "$(md5sum <"$T/save/x.png")" ] && ok "the original is never modified" || bad "the original is never modified"
! ls -a "$T/save" | grep -q '\.tmp' && ok "no temp files left by saving" || bad "no temp files left by saving"

# ---------------------------------------------------------------- HUD, habits

# the panel (full HUD, 320 px of an 800 px window) and the status line never cover the image
view "panel" $OFF -- --ops "$OPS" --keys "=" --frames 1 --screenshot "$T/off_panel.png" "$T/in/rgb.png"
check "HUD panel: the 1:1 image is centred in the rest of the window, uncovered" inarea "$T/off_panel.png" "$T/exp.png" 480 600
view "line" $OFF -- --ops "$OPS" --hud line --keys "=" --frames 1 --screenshot "$T/off_line.png" "$T/in/rgb.png"
check "--hud line: the image is centred above the status line, uncovered" inarea "$T/off_line.png" "$T/exp.png" 800 566
check "--hud line draws a status line (differs from HUD off)" differ "$T/off_line.png" "$T/off_plain.png"
# picture first: no chain, the status line (or nothing); i: the panel; a chain on (--ops or a key):
# the panel
view "default" $OFF -- --keys "=" --frames 1 --screenshot "$T/off_default.png" "$T/in/rgb.png"
check "default: no chain, the picture above the status line" inarea "$T/off_default.png" "$T/exp_rgb.png" 800 566
view "i panel" $OFF -- --keys "=,i" --frames 1 --screenshot "$T/off_ipanel.png" "$T/in/rgb.png"
check "i: the panel, the picture beside it" inarea "$T/off_ipanel.png" "$T/exp_rgb.png" 480 600
view "key chain" $OFF -- --keys "b,e,>,=" --frames 1 --screenshot "$T/off_keychain.png" "$T/in/rgb.png"
check "a chain put on by keys brings the panel" inarea "$T/off_keychain.png" "$T/exp.png" 480 600
view "key chain off" $OFF -- --keys "b,b,=" --frames 1 --screenshot "$T/off_keychain0.png" "$T/in/rgb.png"
check "the chain taken off again: back to the status line" inarea "$T/off_keychain0.png" "$T/exp_rgb.png" 800 566
view "hud off" $OFF -- --ops "$OPS" --hud off --keys "=" --frames 1 --screenshot "$T/off_hudoff.png" "$T/in/rgb.png"
check "--hud off: the image has the whole window" centred "$T/off_hudoff.png" "$T/exp.png"
view "esc" $OFF -- --hud off --keys "?,Escape" --frames 1 --screenshot "$T/off_esc.png" "$T/in/rgb.png"
[ "$rc" = 0 ] && [ -f "$T/off_esc.png" ] && ok "Esc closes the help first (the viewer goes on)" || bad "Esc with help open (exit $rc)"
view "plain" $OFF -- --hud off --frames 1 --screenshot "$T/off_first.png" "$T/in/rgb.png"
check "after Esc the help is gone" same "$T/off_esc.png" "$T/off_first.png"
view "geometry" SDL_VIDEODRIVER=offscreen SDL_RENDER_DRIVER=software -- -g 640x480 --frames 1 --screenshot "$T/off_geo.png" "$T/in/rgb.png"
check "-g 640x480 sizes the window" size "$T/off_geo.png" 640 480
view "bad geometry" $OFF -- -g 10x10 --frames 1 "$T/in/rgb.png"
expect_rc "-g 10x10 is a usage error" 2
mk 64 48 3 8 15 "$T/in/small.png"
cp "$T/in/small.png" "$T/exp_small.png"
view "G" $OFF -- --hud off --keys "G,=" --frames 1 --screenshot "$T/off_G.png" "$T/in/rgb.png" "$T/in/small.png"
check "G shows the last image" centred "$T/off_G.png" "$T/exp_small.png"
view "g" $OFF -- --hud off --keys "G,g,=" --frames 1 --screenshot "$T/off_g.png" "$T/in/rgb.png" "$T/in/small.png"
check "g shows the first image" centred "$T/off_g.png" "$T/exp_rgb.png"
mkdir -p "$T/tree/sub"
cp "$T/in/rgb.png" "$T/tree/a.png"
cp "$T/in/small.png" "$T/tree/sub/b.png"
view "-r" $OFF -- --hud off -r --keys "G,=" --frames 1 --screenshot "$T/off_r.png" "$T/tree"
check "-r descends directories (G shows tree/sub/b.png)" centred "$T/off_r.png" "$T/exp_small.png"
mkdir -p "$T/loop"
cp "$T/in/small.png" "$T/loop/b.png"
ln -s "$T/loop" "$T/loop/l1"
ln -s "$T/loop" "$T/loop/l2"
t0=$(date +%s)
env TESSERA_GEOMETRY=800x600 $OFF timeout 30 "$TESSERA" --backend cpu -q --hud off -r --keys "G,=" --frames 1 --screenshot "$T/off_loop.png" "$T/loop" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 0 ] && ok "-r on a folder with two links to itself ends ($(($(date +%s) - t0)) s; the walker enters each folder once)" ||
    bad "-r on a folder with links to itself (exit $rc)"
check "-r with links to itself: the one image, once (G shows it)" centred "$T/off_loop.png" "$T/exp_small.png"
view "no -r" $OFF -- --hud off --keys "G,=" --frames 1 --screenshot "$T/off_nor.png" "$T/tree"
check "without -r subdirectories are left out" centred "$T/off_nor.png" "$T/exp_rgb.png"
printf '%s\n\n%s\n' "$T/in/rgb.png" "$T/in/small.png" | env TESSERA_GEOMETRY=800x600 $OFF "$TESSERA" --backend cpu -q --hud off --keys "G,=" --frames 1 --screenshot "$T/off_stdin.png" - >"$T/out" 2>"$T/err"
check "- reads file names from stdin (G shows the second)" centred "$T/off_stdin.png" "$T/exp_small.png"
view "reload" $OFF -- --hud off --keys "r,=" --frames 1 --screenshot "$T/off_reload.png" "$T/in/rgb.png"
check "r reloads the file" centred "$T/off_reload.png" "$T/exp_rgb.png"
view "slideshow" $OFF -- --hud off -S 0.2 --keys "=" --frames 18 --screenshot "$T/off_slide.png" "$T/in/rgb.png" "$T/in/small.png" "$T/in/rgb16.png"
check "-S 0.2 moves on from the first image" differ "$T/off_slide.png" "$T/off_first.png"
view "bad slideshow" $OFF -- -S 0 --frames 1 "$T/in/rgb.png"
expect_rc "-S 0 is a usage error" 2

# --demo on the CPU backend: no ladder, the CPU reference timed per family, and it says so
env TESSERA_GEOMETRY=800x600 $OFF "$TESSERA" --backend cpu --demo --screenshot "$T/off_demo.png" "$T/in/rgb.png" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 0 ] && [ -f "$T/off_demo.png" ] && ok "--demo --screenshot runs every rung, then saves the window" || bad "--demo --screenshot (exit $rc)"
[ "$(grep -c '^tessera: demo: \(conv\|geom\|hist\) .* cpu [0-9.]* ms' "$T/err")" = 3 ] &&
    grep -q "the ladder needs the GPU" "$T/err" && ok "--demo on the CPU: one timed rung a family, and the GPU is named as needed" ||
    bad "--demo on the CPU: $(head -c 400 "$T/err")"
check "--demo: the panel shows the ladder" hud "$T/off_demo.png" "$T/off_hudoff.png"

# zoomed out, the view is the resize op's lanczos3 at the view's size: a 1600x1000 image fitted
# into 800x600 (50%) equals the headless resize:800x500 exactly; on the CPU the first frame shows
# box cells and the next the resampling, so --frames 1 ends on the resampled frame
mk 1600 1000 3 8 21 "$T/in/big.png"
"$TESSERA" --headless -q --backend cpu --ops resize:800x500:lanczos3 -o "$T/exp_rs.png" "$T/in/big.png" ||
    { echo "headless resize for the expected image failed"; exit 1; }
view "fit resampled" $OFF -- --hud off --frames 1 --screenshot "$T/off_rs.png" "$T/in/big.png"
check "zoomed out: the fitted view is the resize op's lanczos3 output, exactly" centred "$T/off_rs.png" "$T/exp_rs.png"
view "zoom 37.5% resampled" $OFF -- --hud off --keys "minus" --frames 1 --screenshot "$T/off_rs2.png" "$T/in/big.png"
"$TESSERA" --headless -q --backend cpu --ops resize:600x375:lanczos3 -o "$T/exp_rs2.png" "$T/in/big.png"
check "one step out (37.5%): resize:600x375's output, exactly" centred "$T/off_rs2.png" "$T/exp_rs2.png"

# a 16384x16384 image (4x4 gray blocks; binary PGM, 256 MB, made and removed here): fitted, and
# zoomed to 2x at its centre; the display texture holds only the visible part at screen size,
# so no texture is ever larger than the window
if [ -n "$PY" ] && [ "$(df -Pk "$T" | awk 'NR == 2 { print $4 }')" -gt 1048576 ]; then
    "$PY" -c "
import numpy as np, sys
lv = (np.arange(16, dtype=np.uint8) * 16 + 8).reshape(4, 4)
with open(sys.argv[1], 'wb') as f:
    f.write(b'P5\n16384 16384\n255\n')
    for row in lv:
        f.write(np.repeat(row, 4096).tobytes() * 4096)
" "$T/huge.pgm"
    view "huge fit" $OFF -- --hud off --frames 1 --screenshot "$T/off_huge.png" "$T/huge.pgm"
    expect_rc "16384x16384: opens and displays (exit 0)" 0
    check "16384x16384: the fitted view shows all 16 blocks" blocks "$T/off_huge.png"
    view "huge zoom" $OFF -- --hud off --keys "=,plus" --frames 1 --screenshot "$T/off_huge2.png" "$T/huge.pgm"
    check "16384x16384: zoomed to 2x at the centre" centre "$T/off_huge2.png" 168
    rm -f "$T/huge.pgm"
else
    skip "16384x16384 image" "python3 with numpy or 1 GB in $T missing"
fi

# an animated GIF plays: red for 1.5 s, then blue for a minute (PIL writes it)
if "$PY" -c "import PIL" 2>/dev/null; then
    "$PY" -c "
import sys
from PIL import Image
red, blue = Image.new('RGB', (60, 40), (255, 0, 0)), Image.new('RGB', (60, 40), (0, 0, 255))
red.save(sys.argv[1], save_all=True, append_images=[blue], duration=[1500, 60000], loop=0)
" "$T/anim.gif"
    "$PY" -c "
import sys
from PIL import Image
Image.new('RGB', (60, 40), (255, 0, 0)).save(sys.argv[1])
Image.new('RGB', (60, 40), (0, 0, 255)).save(sys.argv[2])
" "$T/exp_red.png" "$T/exp_blue.png"
    view "gif first" $OFF -- --hud off --frames 1 --screenshot "$T/off_gif1.png" "$T/anim.gif"
    check "animated GIF: the first frame first" centred "$T/off_gif1.png" "$T/exp_red.png"
    view "gif later" $OFF -- --hud off --frames 150 --screenshot "$T/off_gif2.png" "$T/anim.gif"
    check "animated GIF: the second frame after its delay (frames play)" centred "$T/off_gif2.png" "$T/exp_blue.png"
else
    skip "animated GIF" "python3 with PIL missing"
fi

# a large JPEG paints a reduced-size preview first (libjpeg's 1/4 scaling, fitted), then the full
# decode from a thread replaces it: the log says which frame was which, and the last frame equals
# the full decode's screenshot (TESSERA_VIEWER_PREVIEW=0). Also with EXIF orientation 6 (the
# preview upright as the full image), after moving to the next file while the first decodes
# (its result must not show: the decode starts after the preview's frame, n comes the frame
# after), and q while decoding (a clean exit).
if "$PY" -c "import PIL" 2>/dev/null; then
    "$PY" -c "
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert('RGB').resize((6000, 4000), Image.BILINEAR)
im.save(sys.argv[2], quality=85)
ex = Image.Exif(); ex[0x0112] = 6
im.save(sys.argv[3], quality=85, exif=ex.tobytes())
im.transpose(Image.FLIP_LEFT_RIGHT).save(sys.argv[4], quality=85)
" assets/seeding_by_Clements_Engelhardt.jpg "$T/in/big1.jpg" "$T/in/big6.jpg" "$T/in/big2.jpg"
    pv() { # NAME PREVIEW ARGS...: the viewer (not quiet: its log); $rc, log in $T/pv_NAME.log
        n=$1; p=$2; shift 2
        env TESSERA_GEOMETRY=800x600 TESSERA_VIEWER_PREVIEW=$p $OFF timeout 60 "$TESSERA" \
            --backend cpu --hud off "$@" >"$T/out" 2>"$T/pv_$n.log"
        rc=$?
    }
    pv on 1 --frames 1 --screenshot "$T/pv_on.png" "$T/in/big1.jpg"
    grep -q "first paint .* a 1/4 preview (1500x1000 of 6000x4000;.*); the full image at .* (frame [1-9]" "$T/pv_on.log" &&
        ok "large JPEG: a 1/4 preview is the first frame, the full image a later one" ||
        bad "large JPEG preview (exit $rc): $(grep -E 'paint|tessera:' "$T/pv_on.log" | head -3)"
    pv off 0 --frames 1 --screenshot "$T/pv_off.png" "$T/in/big1.jpg"
    grep -q "first paint .* the full image (6000x4000;.* frame 0)" "$T/pv_off.log" &&
        ok "TESSERA_VIEWER_PREVIEW=0: the full image is the first frame" || bad "no preview: $(head -3 "$T/pv_off.log")"
    cmp -s "$T/pv_on.png" "$T/pv_off.png" && ok "large JPEG: the last frame equals the full decode's" ||
        bad "large JPEG: the last frame differs from the full decode's"
    pv o6 1 --frames 1 --screenshot "$T/pv_o6.png" "$T/in/big6.jpg"
    pv o6off 0 --frames 1 --screenshot "$T/pv_o6off.png" "$T/in/big6.jpg"
    grep -q "a 1/4 preview (1000x1500 of 4000x6000;" "$T/pv_o6.log" && cmp -s "$T/pv_o6.png" "$T/pv_o6off.png" &&
        ok "EXIF orientation 6: the preview upright as the full image, the same last frame" ||
        bad "EXIF orientation 6 preview: $(grep paint "$T/pv_o6.log")"
    pv nav 1 --keys "?,n" --frames 1 --screenshot "$T/pv_nav.png" "$T/in/big1.jpg" "$T/in/big2.jpg"
    pv navoff 0 --keys "?,n" --frames 1 --screenshot "$T/pv_navoff.png" "$T/in/big1.jpg" "$T/in/big2.jpg"
    [ "$rc" = 0 ] && cmp -s "$T/pv_nav.png" "$T/pv_navoff.png" && ! cmp -s "$T/pv_nav.png" "$T/pv_on.png" &&
        ok "n while the first file decodes: the second file shows, never the first" ||
        bad "n during a decode (exit $rc)"
    t0=$(date +%s)
    pv quit 1 --keys "?,q" "$T/in/big1.jpg"
    [ "$rc" = 0 ] && [ $(($(date +%s) - t0)) -lt 20 ] && ok "q while decoding: exit 0 at once" ||
        bad "q while decoding (exit $rc): $(head -3 "$T/pv_quit.log")"
else
    skip "large JPEG preview" "python3 with PIL missing"
fi

# ---------------------------------------------------------------- thumbnail mode (-t)

# -t: a grid of the folder's thumbnails (the selected one framed), made into an empty cache, then
# read back from it; a changed file is made again; Enter opens the selected image (the same
# screen as opening it directly) and Enter goes back; a file that cannot be shown gets a cell.
# A JPEG whose EXIF holds a thumbnail of the picture's proportions shows that thumbnail (blue
# here, the picture red); one with a padded thumbnail (other proportions) is decoded instead.
mkdir -p "$T/th"
cp "$T/in/rgb.png" "$T/th/a.png"
cp "$T/in/small.png" "$T/th/b.png"
cp "$T/in/rgb16.png" "$T/th/c.png"
cp "$T/in/bad.png" "$T/th/d.png"
thumbs() { # NAME ARGS...: thumbnail mode, not quiet (its summary line); $rc, log in $T/th_NAME.log
    n=$1; shift
    env XDG_CACHE_HOME="$T/cache" TESSERA_GEOMETRY=800x600 $OFF timeout 60 "$TESSERA" --backend cpu \
        -t "$@" >"$T/out" 2>"$T/th_$n.log"
    rc=$?
}
thumbs cold --frames 1 --screenshot "$T/th_cold.png" "$T/th"
[ "$rc" = 0 ] && grep -q "thumbnails of 4 files .*: the first screen (4 cells) at .*, all 4 made at .*; 0 from the cache, 3 made (0 decoded by nvJPEG), 1 failed" "$T/th_cold.log" &&
    ok "-t: 4 cells, 3 thumbnails made, the bad file failed: $(grep -o 'the first screen.*failed' "$T/th_cold.log")" ||
    bad "-t (exit $rc): $(head -c 400 "$T/th_cold.log")"
check "-t: the grid is not blank" notblank "$T/th_cold.png"
[ "$(ls "$T/cache/tessera/thumbs-160" 2>/dev/null | grep -c '\.tth$')" = 3 ] &&
    ! ls -a "$T/cache/tessera/thumbs-160" | grep -q 'tth\.' &&
    ok "-t: 3 thumbnails cached in \$XDG_CACHE_HOME/tessera, no temporary files left" ||
    bad "-t cache: $(ls -a "$T/cache/tessera/thumbs-160" 2>&1 | tr '\n' ' ')"
thumbs warm --frames 1 --screenshot "$T/th_warm.png" "$T/th"
grep -q "3 from the cache, 0 made (0 decoded by nvJPEG), 1 failed" "$T/th_warm.log" && ok "-t again: all 3 from the cache" ||
    bad "-t again: $(head -c 300 "$T/th_warm.log")"
check "-t from the cache: the same grid" same "$T/th_warm.png" "$T/th_cold.png"
sleep 0.01
cp "$T/in/ga.png" "$T/th/b.png" # another picture under the same name: size and mtime change
thumbs changed --frames 1 --screenshot "$T/th_changed.png" "$T/th"
grep -q "2 from the cache, 1 made (0 decoded by nvJPEG), 1 failed" "$T/th_changed.log" && check "-t: a changed file is made again" differ "$T/th_changed.png" "$T/th_warm.png" ||
    bad "-t changed file: $(head -c 300 "$T/th_changed.log")"
thumbs open --hud off --keys "Right,Return,=" --frames 1 --screenshot "$T/th_open.png" "$T/th"
view "b direct" $OFF -- --hud off --keys "=" --frames 1 --screenshot "$T/th_direct.png" "$T/th/b.png"
check "-t: Right then Enter opens the second image" same "$T/th_open.png" "$T/th_direct.png"
thumbs back --keys "Right,Return,Return,Left" --frames 1 --screenshot "$T/th_back.png" "$T/th"
check "-t: Enter in the image goes back to the grid" same "$T/th_back.png" "$T/th_changed.png"
thumbs keys --keys "End,Home,Down,Up,PageDown,PageUp,l,h,j,k,G,g,n,p,WheelDown,WheelUp,b,e,i,?,Escape" --frames 1 "$T/th"
expect_rc "-t: the grid's keys run (exit 0)" 0
view "return" $OFF -- --keys "Return,Return" --frames 1 --screenshot "$T/th_ret.png" "$T/th/a.png" "$T/th/b.png"
expect_rc "Enter in image mode opens the grid, Enter again the image" 0
if [ -n "$PY" ] && "$PY" -c "import PIL" 2>/dev/null; then
    "$PY" - "$T/ex" <<'PY'
import io, os, struct, sys
from PIL import Image
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
def exif(thumb):  # IFD0 (Orientation 1) and IFD1 pointing at a JPEG thumbnail
    ifd1_at = 8 + 2 + 12 + 4
    ifd0 = struct.pack('<HHHII', 1, 0x0112, 3, 1, 1) + struct.pack('<I', ifd1_at)
    at = ifd1_at + 2 + 3 * 12 + 4
    ifd1 = struct.pack('<H', 3) + struct.pack('<HHII', 0x0103, 3, 1, 6) + \
        struct.pack('<HHII', 0x0201, 4, 1, at) + struct.pack('<HHII', 0x0202, 4, 1, len(thumb)) + \
        struct.pack('<I', 0)
    return b'Exif\0\0' + b'II*\0' + struct.pack('<I', 8) + ifd0 + ifd1 + thumb
def jpeg(im):
    b = io.BytesIO(); im.save(b, 'JPEG', quality=95); return b.getvalue()
red = Image.new('RGB', (1600, 1200), (230, 20, 20))
red.save(os.path.join(out, 'a_exif.jpg'), quality=90, exif=exif(jpeg(Image.new('RGB', (160, 120), (20, 20, 230)))))
red.save(os.path.join(out, 'b_padded.jpg'), quality=90, exif=exif(jpeg(Image.new('RGB', (160, 160), (20, 20, 230)))))
PY
    thumbs exif --frames 1 --screenshot "$T/th_exif.png" "$T/ex"
    "$PY" - "$T/th_exif.png" >"$T/err" 2>&1 <<'PY' && ok "-t: an EXIF thumbnail of the picture's proportions is used, a padded one is not" || bad "-t EXIF thumbnails: $(cat "$T/err")"
import sys, cv2
im = cv2.imread(sys.argv[1])
# cells of 172 px, centred: 4 columns in 800 px start at x = 56; the thumbnail's centre
a, b = im[6 + 80, 56 + 6 + 80], im[6 + 80, 56 + 172 + 6 + 80]
if not (a[0] > 150 and a[2] < 100):
    sys.exit(f"first cell {a.tolist()}: want blue (the EXIF thumbnail)")
if not (b[2] > 150 and b[0] < 100):
    sys.exit(f"second cell {b.tolist()}: want red (decoded; the padded thumbnail left alone)")
PY
else
    skip "-t EXIF thumbnails" "python3 with PIL and cv2 missing"
fi

view "gray+alpha" $OFF -- --ops edge --frames 1 --screenshot "$T/off_ga.png" "$T/in/ga.png"
expect_rc "offscreen: gray+alpha image" 0

# ---------------------------------------------------------------- a real X server

if ! command -v xvfb-run >/dev/null 2>&1; then
    skip "X11 (xvfb-run) tests" "xvfb-run missing (apt-get install xvfb xauth)"
else
    env TESSERA_GEOMETRY=800x600 xvfb-run -a -s "-screen 0 1280x1024x24" \
        "$TESSERA" --backend cpu -q --ops "$OPS" --hud off --keys "=" --frames 2 \
        --screenshot "$T/x11_plain.png" "$T/in/rgb.png" >"$T/out" 2>"$T/err"
    rc=$?
    expect_rc "X11 (xvfb-run): --keys/--frames/--screenshot run exits 0" 0
    check "X11: screenshot is not blank" notblank "$T/x11_plain.png"
    check "X11: 1:1 image region equals the headless $OPS result" centred "$T/x11_plain.png" "$T/exp.png"
    env TESSERA_GEOMETRY=800x600 xvfb-run -a -s "-screen 0 1280x1024x24" \
        "$TESSERA" --backend cpu -q --ops "$OPS" --keys "=" --frames 2 \
        --screenshot "$T/x11_hud.png" "$T/in/rgb.png" >"$T/out" 2>"$T/err"
    check "X11: the HUD draws text" hud "$T/x11_hud.png" "$T/x11_plain.png"
fi

# ---------------------------------------------------------------- idle CPU (X11)

# At rest the viewer waits for events: after start-up, 5 s with no op (and 5 s with an op in live
# mode but the HUD off, so nothing shows its times) must take under 2% of a core (utime + stime of
# /proc/PID/stat); with a chain on and the full HUD (CPU backend: the chain runs once per change,
# live re-runs only on L), 10 s must take at most 1%. Each run prints its figure.
idle_cpu() { # NAME SECONDS PERCENT ARGS...: the viewer under Xvfb, its CPU over SECONDS after 3 s
    name=$1; secs=$2; pct_max=$3; shift 3
    cat >"$T/idle.sh" <<EOF
"$TESSERA" --backend cpu -q "\$@" &
pid=\$!
sleep 3
t0=\$(awk '{print \$14 + \$15}' /proc/\$pid/stat)
sleep $secs
t1=\$(awk '{print \$14 + \$15}' /proc/\$pid/stat)
kill \$pid
wait \$pid
echo \$((t1 - t0)) >"$T/idle_ticks"
EOF
    rm -f "$T/idle_ticks"
    env TESSERA_GEOMETRY=800x600 xvfb-run -a -s "-screen 0 1280x1024x24" sh "$T/idle.sh" "$@" >"$T/out" 2>"$T/err"
    ticks=$(cat "$T/idle_ticks" 2>/dev/null)
    hz=$(getconf CLK_TCK)
    if [ -z "$ticks" ]; then
        bad "idle CPU, $name: no measurement ($(head -c 300 "$T/err"))"
        return
    fi
    pct=$(awk -v t="$ticks" -v hz="$hz" -v s="$secs" 'BEGIN { printf "%.1f", t * 100 / (s * hz) }')
    [ "$((ticks * 100))" -le $((secs * hz * pct_max)) ] && ok "idle CPU, $name: $pct% of a core over $secs s" ||
        bad "idle CPU, $name: $pct% of a core over $secs s (want <= $pct_max%)"
}
if ! command -v xvfb-run >/dev/null 2>&1 || [ ! -r /proc/self/stat ]; then
    skip "idle CPU" "xvfb-run or /proc missing"
else
    idle_cpu "no ops" 5 2 "$T/in/rgb.png"
    idle_cpu "an op in live mode, HUD off" 5 2 --ops gauss:5 --hud off "$T/in/rgb.png"
    idle_cpu "thumbnail mode, every thumbnail made" 5 2 -t "$T/th"
    mk 3000 2000 3 8 16 "$T/in/idle.png"
    idle_cpu "a chain on, full HUD, CPU backend (at rest)" 10 1 --ops "$OPS" --hud full "$T/in/idle.png"
    # --frames N always ends, also with the chain re-running every frame (L: live on request)
    for k in e e,L; do
        t0=$(date +%s)
        env TESSERA_GEOMETRY=800x600 timeout 60 xvfb-run -a -s "-screen 0 1280x1024x24" \
            "$TESSERA" --backend cpu -q --keys "$k" --frames 10 --screenshot "$T/x11_frames.png" \
            "$T/in/idle.png" >"$T/out" 2>"$T/err"
        rc=$?
        [ "$rc" = 0 ] && [ -f "$T/x11_frames.png" ] &&
            ok "X11: --keys $k --frames 10 --screenshot ends ($(($(date +%s) - t0)) s)" ||
            bad "X11: --keys $k --frames 10 --screenshot (exit $rc)"
        rm -f "$T/x11_frames.png"
    done
fi

# ---------------------------------------------------------------- real input events (X11)

# Keys typed through the X server (text input: e and a shifted >; Ctrl+S and q as key presses),
# the wheel, next, a window resize; the title tells the file, size, depth and zoom.
if ! command -v xvfb-run >/dev/null 2>&1 || ! command -v xdotool >/dev/null 2>&1; then
    skip "X11 input events (xdotool)" "xvfb-run or xdotool missing (apt-get install xdotool)"
else
    mkdir -p "$T/ev"
    cp "$T/in/rgb.png" "$T/ev/y.png"
    mk 1600 1000 3 8 14 "$T/ev/z.png"
    # each step waits (up to 5 s) for its effect rather than sleeping a fixed time
    cat >"$T/ev.sh" <<EOF
"$TESSERA" --backend cpu -q "$T/ev/y.png" "$T/ev/z.png" 2>"$T/ev/err" &
pid=\$!
wid=\$(xdotool search --sync --name "tessera" | head -1)
xdotool windowfocus --sync "\$wid"
title() { # FILE PATTERN: the window title, once it matches PATTERN
    i=0
    while [ \$i -lt 50 ]; do
        t=\$(xdotool getwindowname "\$wid"); case "\$t" in \$2) break ;; esac
        sleep 0.1; i=\$((i + 1))
    done
    echo "\$t" >"$T/ev/\$1"
}
title t1 "*y.png*"
xdotool type --delay 100 "e>"
xdotool key ctrl+s
i=0; while [ ! -f "$T/ev/y.tessera.png" ] && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i + 1)); done
xdotool type --delay 100 "e>"
xdotool mousemove --window "\$wid" 400 300 click 4
title t2 "* 150% *"
xdotool key n
title t3 "z.png*"
xdotool windowsize "\$wid" 1200 900
title t4 "* 75% *"
xdotool key q
wait \$pid
echo \$? >"$T/ev/rc"
EOF
    env TESSERA_GEOMETRY=800x600 timeout 60 xvfb-run -a -s "-screen 0 1600x1200x24" sh "$T/ev.sh" >"$T/out" 2>"$T/err"
    title() { cat "$T/ev/$1" 2>/dev/null; }
    case "$(title t1)" in
    "y.png - 201x151 RGB8 - 100% - [1/2] - tessera") ok "X11: the title shows file, size, depth, zoom" ;;
    *) bad "X11: title '$(title t1)'" ;;
    esac
    "$TESSERA" --headless -q --backend cpu --ops equalize,rotate:90 -o "$T/ev/exp.png" "$T/ev/y.png"
    if [ -f "$T/ev/y.tessera.png" ]; then
        check "X11: typed e and > then Ctrl+S save the processed image" same "$T/ev/y.tessera.png" "$T/ev/exp.png"
    else
        bad "X11: typed e, > and Ctrl+S wrote no y.tessera.png"
    fi
    case "$(title t2)" in
    *" - 150% - "*) ok "X11: the wheel zooms in (100% -> 150%)" ;;
    *) bad "X11: wheel: '$(title t2)'" ;;
    esac
    case "$(title t3)" in
    "z.png - 1600x1000 RGB8 - 50% - [2/2]"*) ok "X11: n opens the next image, fitted above the status line (no chain: picture first)" ;;
    *) bad "X11: n: '$(title t3)'" ;;
    esac
    case "$(title t4)" in
    *" - 75% - "*) ok "X11: a resized window refits the image (50% -> 75%: 1200 of 1200 px)" ;;
    *) bad "X11: resize: '$(title t4)'" ;;
    esac
    [ "$(cat "$T/ev/rc" 2>/dev/null)" = 0 ] && ok "X11: q quits with status 0" ||
        bad "X11: q quits (status '$(cat "$T/ev/rc" 2>/dev/null)'): $(tail -c 600 "$T/ev/err" 2>/dev/null)"
fi

summary
