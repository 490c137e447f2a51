#!/bin/sh
# tests/cli.sh - the command line end to end: the assets, every bad input, exit codes, no data
# lost. Usage: sh tests/cli.sh build/tessera. Ends with "N passed, N failed, N skipped".
TESSERA=${1:-build/tessera}
BUILD=$(dirname "$TESSERA")
MKIMAGE="$BUILD/mkimage"
T=$(mktemp -d /tmp/tessera-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
SUITE=cli
. "$(dirname "$0")/harness.sh"

# run CMD...: runs tessera with stdout in $T/out and stderr in $T/err; $rc is the status.
run() { "$TESSERA" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# expect NAME RC [TEXT]: the last run exited RC and, if given, its stderr holds TEXT.
expect() {
    if [ "$rc" != "$2" ]; then bad "$1 (exit $rc, want $2)"; return; fi
    if [ -n "${3:-}" ] && ! grep -qF -- "$3" "$T/err"; then bad "$1 (stderr lacks '$3')"; return; fi
    ok "$1"
}
no_temps() { ! find "$1" -name '*.tmp*' 2>/dev/null | grep -q .; }
sum() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs md5sum) 2>/dev/null; }

mk() { "$MKIMAGE" "$@" || { echo "mkimage failed: $*"; exit 1; }; }
mkdir -p "$T/in" "$T/bad"
mk 33 17 3 8 1 "$T/in/rgb8.png"
mk 31 9 4 8 2 "$T/in/rgba8.png"
mk 20 30 1 16 3 "$T/in/gray16.png"
mk 17 5 2 16 4 "$T/in/ga16.png"
mk 64 48 3 8 5 "$T/in/photo.jpg"
mk 40 20 1 8 6 "$T/in/low.png" band

# ---------------------------------------------------------------- basics
run --help; expect "--help exits 0" 0
grep -q "Usage:" "$T/out" && ok "--help prints usage" || bad "--help prints usage"
run --version; expect "--version exits 0" 0
run --list; expect "--list exits 0" 0
for f in "conv:" "geom:" "hist:" " cpu "; do
    grep -qF "$f" "$T/out" && ok "--list shows '$f'" || bad "--list shows '$f'"
done
run --bogus; expect "unknown option is a usage error" 2 "unknown option"
run --headless "$T/in/rgb8.png"; expect "--headless without -o" 2 "needs -o"
run --headless -o "$T"; expect "--headless without inputs" 2 "at least one INPUT"
run --headless -o "$T" --jobs 0 "$T/in/rgb8.png"; expect "--jobs 0" 2 "--jobs"
run --headless -o "$T" --quality 101 "$T/in/rgb8.png"; expect "--quality 101" 2 "--quality"
run --headless -o "$T" --png-level 10 "$T/in/rgb8.png"; expect "--png-level 10" 2 "--png-level"
# --png-level: 0 stores (the largest file), 9 is no larger than the default; the pixels the same
mkdir -p "$T/lv0" "$T/lv1" "$T/lv9" "$T/lvin"
mk 300 200 3 8 9 "$T/lvin/big.png" band
for l in 0 1 9; do run --headless -q -o "$T/lv$l" --png-level $l "$T/lvin/big.png"; done
s0=$(wc -c < "$T/lv0/big.png"); s1=$(wc -c < "$T/lv1/big.png"); s9=$(wc -c < "$T/lv9/big.png")
[ "$s0" -gt "$s1" ] && [ "$s9" -le "$s1" ] && [ "$s0" -ge $((200 * (300 * 3 + 1))) ] \
    && ok "--png-level 0 stores, 9 is no larger than 1 ($s0, $s1, $s9 bytes)" \
    || bad "--png-level 0 stores, 9 is no larger than 1 ($s0, $s1, $s9 bytes)"
run --headless -q -o "$T/lv9/big.bmp" "$T/lv0/big.png"; run --headless -q -o "$T/lv1/big.bmp" "$T/lv9/big.png"
cmp -s "$T/lv9/big.bmp" "$T/lv1/big.bmp" && ok "--png-level 0 and 9 decode to the same pixels" \
    || bad "--png-level 0 and 9 decode to the same pixels"
run --headless -o "$T" --format gif "$T/in/rgb8.png"; expect "--format gif" 2 "--format"
run --headless -o "$T" --backend tpu "$T/in/rgb8.png"; expect "--backend tpu" 2 "--backend"
run --headless -o "$T" --variant conv "$T/in/rgb8.png"; expect "--variant without =" 2 "FAMILY=NAME"
run --headless -o "$T" --variant blur=naive "$T/in/rgb8.png"; expect "--variant unknown family" 2 "unknown family"
run --headless -o "$T" --variant conv=magic "$T/in/rgb8.png"; expect "--variant unknown name" 2 "unknown variant"

# ---------------------------------------------------------------- malformed --ops
for ops in "gauss:5," ",gauss:5" "gauss:5,,flip" "blur:3" "gauss:4" "box:0" "box:33" "box:x" \
           "box:99999999999999999999" "rotate:45" "gauss:5:-1" "equalize:hsv" "clahe:40:0x8" " , "; do
    mkdir -p "$T/o1"
    run --headless -o "$T/o1" --ops "$ops" "$T/in/rgb8.png"
    expect "--ops '$ops' is a usage error" 2 "--ops"
    [ -z "$(ls "$T/o1")" ] && ok "--ops '$ops' writes nothing" || bad "--ops '$ops' writes nothing"
done
printf '1 2 nan\n1 1 1\n1 1 1\n' >"$T/nan.k"
run --headless -o "$T" --ops "kernel:$T/nan.k" "$T/in/rgb8.png"; expect "kernel file with NaN" 2 "nan.k"
printf '1 1 1 1\n' >"$T/even.k"
run --headless -o "$T" --ops "kernel:$T/even.k" "$T/in/rgb8.png"; expect "kernel file with even K" 2 "even"
head -c 1048576 /dev/urandom >"$T/junk.k"
run --headless -o "$T" --ops "kernel:$T/junk.k" "$T/in/rgb8.png"; expect "kernel file of 1 MB garbage" 2 "junk.k"
run --headless -o "$T" --ops "kernel:$T/missing.k" "$T/in/rgb8.png"; expect "missing kernel file" 2 "missing.k"

# ---------------------------------------------------------------- a good batch
mkdir -p "$T/o2"
before=$(sum "$T/in")
run --headless -q -o "$T/o2" --ops "gauss:5,rotate:90,equalize" --report "$T/r.json" "$T/in"
expect "batch of every kind of image" 0
[ "$(ls "$T/o2" | wc -l)" = 6 ] && ok "batch writes one output per input" || bad "batch writes one output per input ($(ls "$T/o2" | tr '\n' ' '))"
[ "$before" = "$(sum "$T/in")" ] && ok "inputs are never modified" || bad "inputs are never modified"
no_temps "$T/o2" && ok "no temp files left" || bad "no temp files left"
[ ! -s "$T/err" ] && ok "-q prints nothing on success" || bad "-q prints nothing on success"
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - "$T/r.json" <<'PY' >"$T/err" 2>&1 && ok "report is valid JSON with per-op variants" || bad "report is valid JSON with per-op variants"
import json, sys
r = json.load(open(sys.argv[1]))
imgs = r["images"]
assert len(imgs) == 6, len(imgs)
for i in imgs:
    assert i["ok"], i
    assert [o["op"] for o in i["ops"]] == ["gauss:5", "rotate:90", "equalize"], i["ops"]
    for o in i["ops"]:
        assert o["variant"] and o["ms"] >= 0, o
PY
else
    skip "report is valid JSON" "no /usr/bin/python3"
fi
# rotate:90 swaps width and height: read the outputs back through tessera's own report
mkdir -p "$T/o3"
run --headless -q -o "$T/o3" --report "$T/r2.json" "$T/o2/rgb8.png"
grep -q '"width": 17, "height": 33' "$T/r2.json" && ok "rotate:90 output is 17x33" || bad "rotate:90 output is 17x33"
grep -q '"bits": 16' "$T/r.json" && ok "16-bit inputs stay 16-bit" || bad "16-bit inputs stay 16-bit"

# ---------------------------------------------------------------- outputs and names
mkdir -p "$T/o4"
run --headless -o "$T/o4" --format png "$T/in/photo.jpg"; expect "format conversion with empty --ops" 0
[ -f "$T/o4/photo.png" ] && ok "--format png renames to .png" || bad "--format png renames to .png"
run --headless -o "$T/o4" --format png "$T/in/photo.jpg"; expect "existing output needs --force" 1 "exists (use --force"
run --headless -o "$T/o4" --format png --force "$T/in/photo.jpg"; expect "--force overwrites" 0
# --skip-existing: a re-run finishes what an interrupted one left (outputs are renamed into place)
mkdir -p "$T/skip"
run --headless -q -o "$T/skip" --ops flip "$T/in/rgb8.png"; first=$(md5sum <"$T/skip/rgb8.png")
run --headless -o "$T/skip" --ops flip --skip-existing --report "$T/skip.json" "$T/in"
expect "--skip-existing leaves existing outputs, exit 0" 0 "1 image skipped: the output exists"
[ "$first" = "$(md5sum <"$T/skip/rgb8.png")" ] && [ -f "$T/skip/rgba8.png" ] && [ -f "$T/skip/low.png" ] && ok "--skip-existing writes the others, leaves the one there" || bad "--skip-existing writes the others, leaves the one there"
grep -q "images written" "$T/err" && grep -q '"skipped": true' "$T/skip.json" && ok "--skip-existing: the summary and --report count the skipped" || bad "--skip-existing: the summary and --report count the skipped"
run --headless -o "$T/skip" --ops flip --skip-existing "$T/in"
expect "--skip-existing again: all skipped, exit 0" 0 "images skipped: the output exists"
run --headless -o "$T/skip" --force --skip-existing "$T/in"; expect "--force with --skip-existing is a usage error" 2 "choose one"
run --headless -o "$T/single.jpg" --quality 50 --ops flip "$T/in/rgb8.png"; expect "-o FILE for one input" 0
[ -f "$T/single.jpg" ] && ok "-o FILE writes that file" || bad "-o FILE writes that file"
run --headless -o "$T/o4" --format jpg "$T/in/gray16.png"; expect "16-bit to JPEG" 0 "8-bit"
run --headless -o "$T/in" --force --ops flip "$T/in/rgb8.png"
expect "output equal to the input is refused" 1 "overwrite an input"
[ "$before" = "$(sum "$T/in")" ] && ok "refused overwrite left the input intact" || bad "refused overwrite left the input intact"
mkdir -p "$T/o5"
run --headless -o "$T/o5" "$T/in/rgb8.png" "$T/in/rgb8.png"; expect "the same file twice" 1 "already written from"
run --headless -o "$T/nowhere/deeper" "$T/in/rgb8.png" "$T/in/rgba8.png"; expect "a missing output directory is created" 0 "output directory created"
[ "$(grep -c "output directory created" "$T/err")" = 1 ] && ok "the new output directory is said once" || bad "the new output directory is said once"
[ -f "$T/nowhere/deeper/rgba8.png" ] && ok "outputs go into the new directory" || bad "outputs go into the new directory"
: >"$T/plainfile"
run --headless -o "$T/plainfile/sub" "$T/in/rgb8.png" "$T/in/rgba8.png"; expect "an output directory under a file fails" 1 "cannot create the output directory"
run --headless -o "$T/two.png" "$T/in/rgb8.png" "$T/in/rgba8.png"; expect "-o FILE with several inputs is a usage error" 2 "names a file"
mkdir -p "$T/sp ace/ñandú"
cp "$T/in/rgb8.png" "$T/sp ace/ñandú/föto 1.png"
run --headless -o "$T/sp ace" --ops edge "$T/sp ace/ñandú/föto 1.png"; expect "path with spaces and non-ASCII" 0
[ -f "$T/sp ace/föto 1.png" ] && ok "non-ASCII output name" || bad "non-ASCII output name"

# ---------------------------------------------------------------- bad files: clear line, batch goes on
: >"$T/bad/empty.png"
echo "hello, not an image" >"$T/bad/text.png"
head -c 200 "$T/in/rgb8.png" >"$T/bad/trunc.png"
head -c 300 "$T/in/photo.jpg" >"$T/bad/trunc.jpg"
mkdir -p "$T/bad/dir.png"
cp "$T/in/rgba8.png" "$T/bad/good.png"
mkdir -p "$T/o6"
run --headless -o "$T/o6" "$T/bad/empty.png" "$T/bad/text.png" "$T/bad/trunc.png" "$T/bad/trunc.jpg" \
    "$T/bad/dir.png" "$T/bad/missing.png" "$T/bad/good.png"
expect "a batch with bad files exits 1" 1
for f in empty.png text.png trunc.png trunc.jpg dir.png missing.png; do
    n=$(grep -c "^tessera: $T/bad/$f: " "$T/err")
    [ "$n" = 1 ] && ok "one line names $f" || bad "one line names $f (found $n)"
done
[ -f "$T/o6/good.png" ] && ok "the good file of a bad batch is written" || bad "the good file of a bad batch is written"
grep -q "6 of 7 images failed" "$T/err" && ok "failures are counted at the end" || bad "failures are counted at the end"
no_temps "$T/o6" && ok "no temp files after failures" || bad "no temp files after failures"
[ "$(ls "$T/o6")" = "good.png" ] && ok "no partial outputs of bad files" || bad "no partial outputs of bad files ($(ls "$T/o6" | tr '\n' ' '))"
run --headless -o "$T/o6" --max-pixels 10x10 --force "$T/in/rgb8.png"; expect "--max-pixels refuses larger images" 1 "max-pixels"

# ---------------------------------------------------------------- permissions (as an ordinary user)
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null 2>&1 && runuser -u nobody -- true 2>/dev/null; then
    P=$(mktemp -d /tmp/tessera-perm.XXXXXX); chmod 755 "$P"
    cp "$T/in/rgb8.png" "$P/secret.png"; chmod 000 "$P/secret.png"
    cp "$T/in/rgba8.png" "$P/open.png"; chmod 644 "$P/open.png"
    mkdir -p "$P/out" "$P/ro"; chmod 777 "$P/out"; chmod 555 "$P/ro"
    runuser -u nobody -- "$TESSERA" --headless -o "$P/out" "$P/secret.png" "$P/open.png" >"$T/out" 2>"$T/err"; rc=$?
    expect "an unreadable file fails with a reason, the batch goes on" 1 "secret.png: Permission denied"
    [ -f "$P/out/open.png" ] && ok "the readable file of that batch is written" || bad "the readable file of that batch is written"
    runuser -u nobody -- "$TESSERA" --headless -o "$P/ro" "$P/open.png" >"$T/out" 2>"$T/err"; rc=$?
    expect "a read-only output directory fails with a reason" 1 "Permission denied"
    [ -z "$(ls -A "$P/ro")" ] && ok "nothing is left in the read-only directory" || bad "nothing is left in the read-only directory"
    cp "$T/bad/text.png" "$P/text.png"; chmod 644 "$P/text.png"
    runuser -u nobody -- "$TESSERA" --headless -o "$P/ro" "$P/open.png" "$P/text.png" >"$T/out" 2>"$T/err"; rc=$?
    expect "a read-only output directory fails at once" 1 "ro: cannot write there: Permission denied"
    [ "$(wc -l <"$T/err")" = 1 ] && ok "a read-only output directory: one line, before any decode" || bad "a read-only output directory: one line, before any decode ($(cat "$T/err"))"
    rm -rf "$P"
else
    skip "unreadable file and read-only directory" "needs root and runuser to act as nobody"
fi

# ---------------------------------------------------------------- backends and variants
if "$TESSERA" --list 2>/dev/null | grep -q "^backend: GPU"; then
    run --headless -o "$T/o6" --force --backend gpu --ops gauss:3 "$T/in/rgb8.png"; expect "--backend gpu with a GPU" 0
    mk 1000 1000 3 8 7 "$T/bad/large.png"
    export TESSERA_GPU_MEM_LIMIT=1M
    run --headless -o "$T/o6" --force --ops gauss:3 "$T/bad/large.png" "$T/in/rgb8.png"
    unset TESSERA_GPU_MEM_LIMIT
    expect "an image too large for GPU memory is refused, the batch goes on" 1 "not enough GPU memory"
    grep -q "large.png: .*not enough GPU memory" "$T/err" && [ -f "$T/o6/rgb8.png" ] && ok "the refusal names the file" || bad "the refusal names the file"
else
    run --headless -o "$T/o6" --force --backend gpu --ops gauss:3 "$T/in/rgb8.png"; expect "--backend gpu without a GPU is an error" 1 "no usable GPU"
    run --headless -o "$T/o6" --force --ops gauss:3 "$T/in/rgb8.png"; expect "auto falls back to the CPU and says so" 0 "running on the CPU"
    if "$TESSERA" --list | grep -q "^  naive "; then
        run --headless -o "$T/o6" --force --variant conv=naive --ops gauss:3 "$T/in/rgb8.png"
        expect "a GPU variant on the CPU is skipped with a message" 0 "skipped"
    else
        skip "a GPU variant on the CPU is skipped" "CPU-only build: no GPU variants"
    fi
fi
mkdir -p "$T/o7"
run --headless -q -o "$T/o7" --backend cpu --ops "box:3,flop,equalize:rgb" "$T/in/rgba8.png"
mkdir -p "$T/o8"
run --headless -q -o "$T/o8" --ops "box:3,flop,equalize:rgb" "$T/in/rgba8.png"
cmp -s "$T/o7/rgba8.png" "$T/o8/rgba8.png" && ok "auto backend output equals the CPU reference" || bad "auto backend output equals the CPU reference"

# ---------------------------------------------------------------- --jobs: same bytes
mkdir -p "$T/many" "$T/j1" "$T/j8"
i=0; while [ $i -lt 200 ]; do mk $((5 + i)) $((3 + i % 7)) $((1 + i % 4)) $((8 + 8 * (i % 2))) $i "$T/many/m$i.png"; i=$((i + 1)); done
run --headless -q -j 1 -o "$T/j1" --ops "sharpen,rotate:270,equalize" "$T/many"; expect "--jobs 1 batch" 0
run --headless -q -j 8 -o "$T/j8" --ops "sharpen,rotate:270,equalize" "$T/many"; expect "--jobs 8 batch" 0
[ "$(cd "$T/j1" && md5sum * | LC_ALL=C sort)" = "$(cd "$T/j8" && md5sum * | LC_ALL=C sort)" ] && ok "--jobs 8 gives the bytes of --jobs 1" || bad "--jobs 8 gives the bytes of --jobs 1"
# run to run and -j 16: the same bytes, and the same messages and report records in input order
mkdir -p "$T/j16a" "$T/j16b"
run --headless -j 16 -o "$T/j16a" --ops "sharpen,rotate:270,equalize" "$T/bad/text.png" "$T/many" "$T/in/ga16.png"; cp "$T/err" "$T/j16a.err"
run --headless -j 16 -o "$T/j16b" --ops "sharpen,rotate:270,equalize" "$T/bad/text.png" "$T/many" "$T/in/ga16.png"
rm -f "$T/j16a/ga16.png" "$T/j16b/ga16.png"
[ "$(sum "$T/j1")" = "$(sum "$T/j16a")" ] && [ "$(sum "$T/j16a")" = "$(sum "$T/j16b")" ] && ok "--jobs 16 twice gives the bytes of --jobs 1" || bad "--jobs 16 twice gives the bytes of --jobs 1"
grep -v "images written to" "$T/j16a.err" >"$T/j16a.msg"; grep -v "images written to" "$T/err" >"$T/j16b.msg"
cmp -s "$T/j16a.msg" "$T/j16b.msg" && ok "--jobs 16: the same messages in the same order run to run" || bad "--jobs 16: the same messages in the same order run to run ($(diff "$T/j16a.msg" "$T/j16b.msg" | head -5 | tr '\n' ' '))"
# memory follows --jobs, not the number of files (each item's chain, metadata and strings go)
if grep -q __asan_init "$TESSERA"; then
    skip "peak memory of 2001 files within 4 MB of 200 files" "ASan keeps freed memory in quarantine"
elif [ -x /usr/bin/time ]; then
    mkdir -p "$T/mem"; mk 8 8 3 8 7 "$T/mem/a.png"
    i=0; while [ $i -lt 2000 ]; do cp "$T/mem/a.png" "$T/mem/c$i.png"; i=$((i + 1)); done
    mkdir -p "$T/mem200"; i=0; while [ $i -lt 200 ]; do cp "$T/mem/a.png" "$T/mem200/c$i.png"; i=$((i + 1)); done
    /usr/bin/time -f %M "$TESSERA" --headless -q --backend cpu -j 4 -o "$T/memo1" --ops gauss:5,equalize,rotate:90 "$T/mem200" 2>"$T/rss1"
    /usr/bin/time -f %M "$TESSERA" --headless -q --backend cpu -j 4 -o "$T/memo2" --ops gauss:5,equalize,rotate:90 "$T/mem" 2>"$T/rss2"
    r1=$(tail -1 "$T/rss1"); r2=$(tail -1 "$T/rss2")
    [ $((r2 - r1)) -lt 4096 ] && ok "peak memory of 2001 files within 4 MB of 200 files ($r1 KB, $r2 KB)" || bad "peak memory of 2001 files within 4 MB of 200 files ($r1 KB, $r2 KB)"
else
    skip "peak memory of 2001 files within 4 MB of 200 files" "no /usr/bin/time"
fi
# one pipeline shared by the workers, as on the GPU: the others decode and encode meanwhile
mkdir -p "$T/jsh"
TESSERA_TEST_SHARED_CPU=1 run --headless -q -j 8 -o "$T/jsh" --ops "sharpen,rotate:270,equalize" "$T/many"; expect "--jobs 8 with one shared pipeline" 0
[ "$(cd "$T/j1" && md5sum * | LC_ALL=C sort)" = "$(cd "$T/jsh" && md5sum * | LC_ALL=C sort)" ] && ok "a shared pipeline gives the bytes of --jobs 1" || bad "a shared pipeline gives the bytes of --jobs 1"
# decode steps of 5 files (as a batched GPU decoder takes them), bad files among them
mkdir -p "$T/jb"
TESSERA_TEST_DECODE_BATCH=5 TESSERA_TEST_SHARED_CPU=1 run --headless -q -j 3 -o "$T/jb" --ops "sharpen,rotate:270,equalize" "$T/bad/text.png" "$T/many" "$T/bad/empty.png" "$T/in/rgb8.png" "$T/bad/missing.png"
expect "decode steps of 5 files with bad ones among them" 1
[ "$(grep -c "^tessera: $T/bad/" "$T/err")" = 3 ] && [ -f "$T/jb/rgb8.png" ] && ok "each bad file of a decode step fails alone" || bad "each bad file of a decode step fails alone"
rm -f "$T/jb/rgb8.png"
[ "$(cd "$T/j1" && md5sum * | LC_ALL=C sort)" = "$(cd "$T/jb" && md5sum * | LC_ALL=C sort)" ] && ok "decode steps of 5 give the bytes of --jobs 1" || bad "decode steps of 5 give the bytes of --jobs 1"

# ---------------------------------------------------------------- --report is an output like an image
mkdir -p "$T/rp"
cp "$T/in/rgb8.png" "$T/rp/keep.png"
keep=$(md5sum <"$T/rp/keep.png")
run --headless -q --force -o "$T/rp" --ops flip --report "$T/rp/keep.png" "$T/rp/keep.png"
expect "--report naming an input is refused" 2 "is an input of this batch"
[ "$keep" = "$(md5sum <"$T/rp/keep.png")" ] && ok "the input named by --report is untouched" || bad "the input named by --report is untouched"
run --headless -q -o "$T/rp" --format bmp --report "$T/rp/keep.bmp" "$T/rp/keep.png"
expect "--report naming an output of the run is refused" 2 "is an output of this batch"
[ ! -e "$T/rp/keep.bmp" ] && ok "nothing is written when --report is refused" || bad "nothing is written when --report is refused"
echo "precious" >"$T/rp/old.json"
run --headless -q -o "$T/rp" --format bmp --report "$T/rp/old.json" "$T/rp/keep.png"
expect "an existing report needs --force" 2 "exists (use --force)"
[ "$(cat "$T/rp/old.json")" = precious ] && ok "the existing report file is untouched" || bad "the existing report file is untouched"
run --headless -q -o "$T/rp" --format bmp --force --report "$T/rp/old.json" "$T/rp/keep.png"
expect "--force lets the report replace its old file" 0
grep -q '"images"' "$T/rp/old.json" && ok "the replaced report is the new one" || bad "the replaced report is the new one"
run --headless -q -o "$T/rp" --format tga --report /dev/null "$T/rp/keep.png"
expect "--report to a device node is refused" 2 "not a regular file"
ln -s "$T/rp/target.json" "$T/rp/link.json"
run --headless -q -o "$T/rp" --format pnm --report "$T/rp/link.json" "$T/rp/keep.png"
expect "a dangling symlink at the report path is not followed" 1 "exists (use --force)"
[ ! -e "$T/rp/target.json" ] && ok "the symlink's target is not created" || bad "the symlink's target is not created"
run --headless -q -o "$T/rp" --format pnm --force --backend cpu --report "$T/rp/link.json" "$T/rp/keep.png"
[ ! -e "$T/rp/target.json" ] && [ -f "$T/rp/link.json" ] && [ ! -L "$T/rp/link.json" ] && ok "--force replaces the symlink itself, not its target" || bad "--force replaces the symlink itself, not its target"
run --headless -q -o "$T/rp" --format pnm --force --report "$T/rp/nodir/r.json" "$T/rp/keep.png"
expect "--report into a missing folder is refused before the batch" 2 "No such file or directory"
no_temps "$T/rp" && ok "no report temp files left" || bad "no report temp files left ($(ls -a "$T/rp" | tr '\n' ' '))"
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - "$T/rp/link.json" <<'PY' >"$T/err" 2>&1 && ok "report: device, decode path, stages, total covers load and save" || bad "report: device, decode path, stages, total covers load and save"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["devices"][0]["device"] == -1 and r["devices"][0]["images"] == 1, r["devices"]
i = r["images"][0]
assert i["device"] == -1 and i["decode_path"] == "cpu", i
st = i["stages_ms"]
assert list(st) == ["read+decode", "upload", "ops", "download", "encode+write"], st
assert st["read+decode"] > 0 and st["encode+write"] > 0, st
assert i["total_ms"] >= i["load_ms"] + i["save_ms"], i
cpu = r["host_cpu_stage_ms"]
assert list(cpu) == ["read", "decode", "upload", "ops", "download", "encode", "write"], cpu
assert all(v >= 0 for v in cpu.values()) and sum(cpu.values()) <= r["host_cpu_ms"] + 1, (cpu, r["host_cpu_ms"])
PY
fi
run --headless -o "$T/rp" --format jpg --backend cpu --timings "$T/rp/keep.png"
grep -q "decode cpu:.*read+decode .*encode+write .*total" "$T/out" && ok "--timings gives the decode path and each stage" || bad "--timings gives the decode path and each stage"
! grep -q "device -1\|upload\|nvJPEG\|^setup:" "$T/out" && ok "--timings on the CPU names no device, transfer or GPU set-up" || bad "--timings on the CPU names no device, transfer or GPU set-up"
# the host CPU per stage: the decode and the encode cost something, the stages add up to no more
# than the process's CPU over the work
line=$(grep "^host CPU by stage" "$T/out"); total=$(sed -n 's/^host CPU: \([0-9]*\) ms over the work.*/\1/p' "$T/out")
dec=$(echo "$line" | sed -n 's/.* decode \([0-9.]*\),.*/\1/p'); enc=$(echo "$line" | sed -n 's/.* encode \([0-9.]*\),.*/\1/p')
rest=$(echo "$line" | sed -n 's/.*outside the stages \(-\{0,1\}[0-9.]*\)$/\1/p')
awk -v d="$dec" -v e="$enc" -v r="$rest" -v t="$total" 'BEGIN { exit !(d > 0 && e > 0 && r > -1 && t >= 0) }' &&
    ok "--timings: host CPU per stage (decode $dec ms, encode $enc ms, outside $rest ms)" ||
    bad "--timings: host CPU per stage ($line; total $total)"
grep -q "^start-up (ms from the start)" "$T/out" && grep -q "first output written" "$T/out" && grep -q "^host CPU: [0-9]* ms over the work, [0-9.]* ms per image" "$T/out" && ok "--timings: the start-up timeline and host CPU per image" || bad "--timings: the start-up timeline and host CPU per image"
grep -q "images/s, .* MP/s" "$T/err" && ok "the summary gives images/s and MP/s" || bad "the summary gives images/s and MP/s"
if "$TESSERA" --list 2>/dev/null | grep -q "^backend: GPU" && /usr/bin/python3 -c 'import json' 2>/dev/null; then
    run --headless -q -o "$T/rp" --format tga --devices all --ops gauss:3 --report "$T/rp/gpu.json" "$T/rp/keep.png" "$T/in/rgba8.png"
    expect "a GPU batch with --devices all" 0
    /usr/bin/python3 - "$T/rp/gpu.json" <<'PY' >"$T/err" 2>&1 && ok "report on the GPU: the device of each image and its images/s" || bad "report on the GPU: the device of each image and its images/s"
import json, sys
r = json.load(open(sys.argv[1]))
devs = {d["device"]: d for d in r["devices"]}
assert all(d >= 0 for d in devs), devs
assert sum(d["images"] for d in devs.values()) == 2 and all(d["images_per_s"] > 0 for d in devs.values() if d["images"]), devs
for i in r["images"]:
    assert i["device"] in devs and i["stages_ms"]["upload"] >= 0, i
PY
fi

# ---------------------------------------------------------------- JPEG batches: the codec seam
# CPU backend: nvJPEG is never tried (no notice about it, whatever TESSERA_NVJPEG_LIB says), JPEG
# files take the CPU decoder, and the bytes do not depend on --jobs or on that variable.
mkdir -p "$T/jp" "$T/jq1" "$T/jq3" "$T/jqn"
i=0; while [ $i -lt 6 ]; do mk $((40 + 7 * i)) $((30 + 5 * i)) $((1 + 2 * (i % 2))) 8 $((500 + i)) "$T/jp/p$i.jpg"; i=$((i + 1)); done
run --headless -q --backend cpu -j 1 -o "$T/jq1" --format png --ops "gauss:3,rotate:90" "$T/jp"; expect "JPEG->PNG batch, --jobs 1" 0
run --headless --backend cpu -j 3 -o "$T/jq3" --format png --ops "gauss:3,rotate:90" --report "$T/jq3.json" "$T/jp"; expect "JPEG->PNG batch, --jobs 3, --report" 0
[ "$(sum "$T/jq1")" = "$(sum "$T/jq3")" ] && ok "JPEG->PNG on the CPU: --jobs 3 gives the bytes of --jobs 1" || bad "JPEG->PNG on the CPU: --jobs 3 gives the bytes of --jobs 1"
TESSERA_NVJPEG_LIB=/nonexistent run --headless --backend cpu -j 3 -o "$T/jqn" --format png --ops "gauss:3,rotate:90" "$T/jp"; expect "JPEG batch with TESSERA_NVJPEG_LIB=/nonexistent on the CPU" 0
! grep -qi "nvjpeg" "$T/err" && ok "the CPU backend says nothing about nvJPEG" || bad "the CPU backend says nothing about nvJPEG"
[ "$(sum "$T/jq1")" = "$(sum "$T/jqn")" ] && ok "TESSERA_NVJPEG_LIB changes no byte on the CPU" || bad "TESSERA_NVJPEG_LIB changes no byte on the CPU"
if /usr/bin/python3 -c 'import json' 2>/dev/null; then
    /usr/bin/python3 - "$T/jq3.json" <<'PY' >"$T/err" 2>&1 && ok "report of a CPU JPEG batch: decode path cpu, read+decode, device -1" || bad "report of a CPU JPEG batch: decode path cpu, read+decode, device -1 ($(tail -1 "$T/err"))"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["backend"] == "cpu" and len(r["images"]) == 6, r
for i in r["images"]:
    assert i["decode_path"] == "cpu" and i["device"] == -1, i
    st = i["stages_ms"]
    assert "read+decode" in st and "encode+write" in st and st["upload"] == 0 and st["download"] == 0, st
PY
fi

# GPU backend (skipped without one): nvJPEG decodes and encodes, or one notice says why not.
if "$TESSERA" --list 2>/dev/null | grep -q "^backend: GPU"; then
    cp "$T/bad/trunc.jpg" "$T/jp/zz_trunc.jpg"
    mkdir -p "$T/gn" "$T/gj" "$T/gp"
    TESSERA_NVJPEG_LIB=/nonexistent run --headless -j 4 -o "$T/gn" --format jpg --ops "gauss:3" --report "$T/gn.json" "$T/jp"
    expect "GPU batch without nvJPEG: the bad file fails, the others are written" 1 "zz_trunc.jpg"
    [ "$(grep -c "nvJPEG unavailable" "$T/err")" = 1 ] && ok "GPU batch without nvJPEG: one notice for 4 workers" || bad "GPU batch without nvJPEG: one notice for 4 workers ($(grep -c "nvJPEG unavailable" "$T/err"))"
    [ "$(ls "$T/gn" | wc -l)" = 6 ] && no_temps "$T/gn" && ok "GPU batch without nvJPEG: 6 outputs, no temp file" || bad "GPU batch without nvJPEG: 6 outputs, no temp file"
    run --headless -j 4 -o "$T/gj" --format jpg --ops "gauss:3,rotate:90" --report "$T/gj.json" "$T/jp"
    expect "GPU JPEG->JPEG batch with a corrupt file among them" 1 "zz_trunc.jpg"
    [ "$(grep -c "^tessera: .*zz_trunc.jpg" "$T/err")" = 1 ] && [ "$(ls "$T/gj" | wc -l)" = 6 ] && ok "the corrupt JPEG fails alone, in one line" || bad "the corrupt JPEG fails alone, in one line"
    gmsg=$(grep "zz_trunc.jpg" "$T/err" | sed 's/.*zz_trunc.jpg: //')
    run --headless --backend cpu -o "$T/gc" --format jpg "$T/jp/zz_trunc.jpg"
    cmsg=$(grep "zz_trunc.jpg" "$T/err" | sed 's/.*zz_trunc.jpg: //')
    [ -n "$gmsg" ] && [ "$gmsg" = "$cmsg" ] && ok "a cut JPEG fails the same way on the GPU as on the CPU" || bad "a cut JPEG fails the same way on the GPU as on the CPU ('$gmsg' vs '$cmsg')"
    run --headless -j 2 -o "$T/gp" --format png --ops "gauss:3,rotate:90" --report "$T/gp.json" "$T/jp"
    expect "GPU JPEG->PNG batch" 1 "zz_trunc.jpg"
    if grep -q "nvJPEG unavailable" "$T/err"; then
        skip "GPU JPEG path: decode path, stages, closeness to the CPU" "nvJPEG not loadable here: $(grep "nvJPEG" "$T/err" | head -1)"
    elif /usr/bin/python3 -c 'import json' 2>/dev/null; then
        /usr/bin/python3 - "$T/gj.json" "$T/gp.json" <<'PY' >"$T/err" 2>&1 && ok "GPU JPEG path: engine/cuda decode, read and decode apart, no upload or download for JPEG->JPEG" || bad "GPU JPEG path: engine/cuda decode, read and decode apart, no upload or download for JPEG->JPEG ($(tail -1 "$T/err"))"
import json, sys
for n, path in enumerate(sys.argv[1:]):
    r = json.load(open(path))
    ok = [i for i in r["images"] if i.get("ok", True) and "error" not in i]
    assert r["backend"] == "gpu", r["backend"]
    for i in ok:
        st = i["stages_ms"]
        assert i["decode_path"] in ("engine", "cuda"), i
        assert "read" in st and "decode" in st and st["upload"] == 0, st
        if n == 0:
            assert "encode" in st and "write" in st and st["download"] == 0, st
        else:
            assert st["download"] > 0, st
PY
    fi
    if /usr/bin/python3 -c 'import numpy, PIL' 2>/dev/null && [ -d "$T/jq1" ]; then
        /usr/bin/python3 - "$T/jq1" "$T/gp" <<'PY' >"$T/err" 2>&1 && ok "GPU JPEG->PNG close to the CPU's: $(tail -1 "$T/err")" || bad "GPU JPEG->PNG close to the CPU's ($(tail -1 "$T/err"))"
import os, sys, numpy as np
from PIL import Image
# the decoders' IDCT and chroma upsampling differ: small mean, bounded max; a wrong channel
# order, orientation or pitch gives far more
worst, mean = 0, 0.0
for f in sorted(os.listdir(sys.argv[1])):
    a = np.asarray(Image.open(os.path.join(sys.argv[1], f)), dtype=np.int16)
    b = np.asarray(Image.open(os.path.join(sys.argv[2], f)), dtype=np.int16)
    assert a.shape == b.shape, (f, a.shape, b.shape)
    d = np.abs(a - b)
    worst, mean = max(worst, int(d.max())), max(mean, float(d.mean()))
assert worst <= 64 and mean <= 3, (worst, mean)
print("max difference %d, mean %.2f" % (worst, mean))
PY
    else
        skip "GPU JPEG->PNG close to the CPU's" "no numpy/PIL for /usr/bin/python3"
    fi
    rm -f "$T/jp/zz_trunc.jpg"
    # nvJPEG's memory: the pool and the kept pinned blocks change no byte against its default
    # allocators, and --timings counts the allocations
    run --headless -j 3 -o "$T/ga_pool" --format jpg --ops "gauss:3" --timings "$T/jp"
    expect "GPU JPEG batch, nvJPEG memory from the pool" 0
    grep -q "^nvJPEG memory (pool): device [1-9]" "$T/out" && ok "--timings counts nvJPEG's allocations" || bad "--timings counts nvJPEG's allocations ($(grep "nvJPEG memory" "$T/out"))"
    TESSERA_NVJPEG_ALLOC=sync run --headless -j 3 -o "$T/ga_sync" --format jpg --ops "gauss:3" "$T/jp"
    [ "$(sum "$T/ga_pool")" = "$(sum "$T/ga_sync")" ] && ok "nvJPEG's pool and its default allocators write the same bytes" || bad "nvJPEG's pool and its default allocators write the same bytes"
    # a listed device that is not there is skipped with a message; the others do the batch
    mkdir -p "$T/gd"
    run --headless -j 2 -o "$T/gd" --format jpg --devices 0,63 --ops flip "$T/jp"
    expect "--devices with a missing GPU: skipped, the batch runs" 0 "GPU 63 skipped"
    [ "$(ls "$T/gd" | wc -l)" = 6 ] && ok "--devices 0,63: every image written" || bad "--devices 0,63: every image written"
else
    skip "GPU JPEG batches (nvJPEG, fallback notice, closeness)" "no GPU"
fi

# ---------------------------------------------------------------- hostile names and paths
mkdir -p "$T/cc"
nl=$(printf 'a\ntessera: forged\033[31mred.png')
printf 'not an image' >"$T/cc/$nl"
cp "$T/in/rgb8.png" "$T/cc/good.png"
mkdir -p "$T/cco"
run --headless -o "$T/cco" "$T/cc"
expect "a name with a newline and ESC fails cleanly" 1
! grep -q "^tessera: forged" "$T/err" && ok "a file name cannot forge a message line" || bad "a file name cannot forge a message line"
! grep -q "$(printf '\033')" "$T/err" && ok "no escape sequence reaches the terminal" || bad "no escape sequence reaches the terminal"
grep -qF 'a\ntessera: forged\033[31mred.png: ' "$T/err" && ok "control characters are shown as C escapes" || bad "control characters are shown as C escapes"
ln -s "$T/loop.png" "$T/loop.png"
run --headless -o "$T/cco" "$T/loop.png"; expect "a symlink loop says so" 1 "loop.png: Too many levels of symbolic links"
long="$T/long"; i=0; while [ $i -lt 6 ]; do long="$long/$(printf '%0120d' $i)"; i=$((i + 1)); done
mkdir -p "$long"
echo "hello, not an image" >"$long/text.png"
run --headless -o "$T/cco" "$T/bad/text.png"; short=$(sed -n "s|^tessera: $T/bad/text.png: ||p" "$T/err")
run --headless -o "$T/cco" "$long/text.png"
[ -n "$short" ] && grep -qF "$long/text.png: $short" "$T/err" && ok "a long path keeps the reason of its error line" || bad "a long path keeps the reason of its error line ('$short')"
run --headless -o "$T/cco/x.png" --format jpg "$T/in/rgb8.png"; expect "-o FILE.png --format jpg is a usage error" 2 "does not match"
[ ! -e "$T/cco/x.png" ] && ok "nothing written for -o FILE.png --format jpg" || bad "nothing written for -o FILE.png --format jpg"
printf 'GIF89a\001\000\001\000garbage' >"$T/cc2.gif"
mkdir -p "$T/gifo"
run --headless -o "$T/gifo" "$T/cc2.gif"; expect "a bad GIF fails" 1 "cc2.gif: "
! grep -q "writing PNG" "$T/err" && ok "a bad GIF gets no 'writing PNG' notice" || bad "a bad GIF gets no 'writing PNG' notice"

# ---------------------------------------------------------------- -r mirrors the tree
mkdir -p "$T/tree/a/b" "$T/treeo"
cp "$T/in/rgb8.png" "$T/tree/a/x.png"; cp "$T/in/rgba8.png" "$T/tree/a/b/x.png"; cp "$T/in/low.png" "$T/tree/top.png"
printf '\000\000\000\030ftypheic\000\000\000\000' >"$T/tree/a/b/phone.heic"
echo notes >"$T/tree/a/notes.txt"
run --headless -r -o "$T/treeo" "$T/tree"
expect "-r with a broken HEIC fails that file" 1 "phone.heic: "
[ -f "$T/treeo/a/x.png" ] && [ -f "$T/treeo/a/b/x.png" ] && [ -f "$T/treeo/top.png" ] && ok "-r -o DIR mirrors the input tree" || bad "-r -o DIR mirrors the input tree ($(cd "$T/treeo" && find . | tr '\n' ' '))"
cmp -s "$T/treeo/a/b/x.png" "$T/treeo/a/x.png" && bad "a/x and a/b/x do not collide" || ok "a/x and a/b/x do not collide"
grep -q "1 file skipped: not images by name" "$T/err" && ok "files that are not images are counted" || bad "files that are not images are counted"
mkdir -p "$T/treeo3"
run --headless -o "$T/treeo3" "$T/tree"
expect "without -r, subfolders are skipped with a hint" 0 "1 folder skipped: -r descends into subfolders"
ln -s .. "$T/tree/a/b/up"
mkdir -p "$T/treeo2"
run --headless -r -o "$T/treeo2" "$T/tree"
grep -q "1 folder not entered: symlinks to folders" "$T/err" && ok "-r counts a symlinked folder it does not follow" || bad "-r counts a symlinked folder it does not follow"
[ "$(find "$T/treeo2" -type f | wc -l)" = 3 ] && ok "-r does not follow a symlink loop" || bad "-r does not follow a symlink loop ($(find "$T/treeo2" -type f | wc -l) files)"
# 12 levels of two links each to the next: 4096 paths to one file if links were followed
lat="$T/lattice"; mkdir -p "$lat/l0"; cp "$T/in/low.png" "$lat/l0/x.png"; i=0
while [ $i -lt 12 ]; do mkdir -p "$lat/l$((i + 1))"; ln -s "../l$((i + 1))" "$lat/l$i/a"; ln -s "../l$((i + 1))" "$lat/l$i/b"; i=$((i + 1)); done
cp "$T/in/low.png" "$lat/l12/y.png"
run --headless -r -o "$T/lato" "$lat"
[ "$(find "$T/lato" -type f | wc -l)" = 2 ] && ok "-r on a lattice of folder links: each folder once" || bad "-r on a lattice of folder links: each folder once ($(find "$T/lato" -type f | wc -l) files)"
# the output folder inside the input tree is not read back on the next run
mkdir -p "$T/inside"; cp "$T/in/low.png" "$T/inside/a.png"
run --headless -r -o "$T/inside/out" "$T/inside"; run --headless -r --force -o "$T/inside/out" "$T/inside"
[ "$(find "$T/inside" -type f | wc -l)" = 2 ] && ok "-r skips its output folder inside the input tree" || bad "-r skips its output folder inside the input tree ($(find "$T/inside" -type f | tr '\n' ' '))"
run --headless -r -o "$T/proco" /proc/self/
[ "$rc" -le 1 ] && ok "-r /proc/self/ ends" || bad "-r /proc/self/ ends ($rc)"

# ---------------------------------------------------------------- --shard and --devices
mkdir -p "$T/corpus/sub"
i=0; while [ $i -lt 40 ]; do mk $((3 + i)) $((2 + i % 5)) $((1 + i % 4)) 8 $((100 + i)) "$T/corpus/c$i.png"; i=$((i + 1)); done
i=0; while [ $i -lt 8 ]; do mk 9 $((4 + i)) 3 8 $((200 + i)) "$T/corpus/sub/s$i.png"; i=$((i + 1)); done
run --headless -q -r -o "$T/sh_all" --ops "flip,gauss:3" "$T/corpus"; expect "unsharded run" 0
for k in 0 1 2; do
    run --headless -q -r -o "$T/sh_$k" --ops "flip,gauss:3" --shard $k/3 "$T/corpus"; expect "--shard $k/3" 0
done
mkdir -p "$T/sh_union"
dups=0
for k in 0 1 2; do
    [ -n "$(find "$T/sh_$k" -type f)" ] || bad "--shard $k/3 got no image of 48"
    (cd "$T/sh_$k" && find . -type f) | while read -r f; do
        [ -e "$T/sh_union/$f" ] && echo dup
        mkdir -p "$(dirname "$T/sh_union/$f")"; cp "$T/sh_$k/$f" "$T/sh_union/$f"
    done >>"$T/dups"
done
[ ! -s "$T/dups" ] && ok "shards are disjoint" || bad "shards are disjoint"
[ "$(sum "$T/sh_all")" = "$(sum "$T/sh_union")" ] && ok "the union of the shards is the unsharded run, byte for byte" || bad "the union of the shards is the unsharded run, byte for byte"
mk 11 11 3 8 999 "$T/corpus/new.png"
run --headless -q -r -o "$T/sh_0b" --ops "flip,gauss:3" --shard 0/3 "$T/corpus"
[ "$(sum "$T/sh_0")" = "$(sum "$T/sh_0b" | grep -v ' ./new.png$')" ] && ok "adding a file moves no other file between shards" || bad "adding a file moves no other file between shards"
SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 run --headless -q -r -o "$T/sh_slurm" --ops "flip,gauss:3" --shard slurm "$T/corpus"
rm -f "$T/sh_slurm/new.png"
[ "$(sum "$T/sh_slurm")" = "$(sum "$T/sh_2")" ] && ok "--shard slurm with an array 1-3: task 3 is shard 2/3" || bad "--shard slurm with an array 1-3: task 3 is shard 2/3"
run --headless -o "$T/shx" --shard 3/3 "$T/corpus"; expect "--shard 3/3 is a usage error" 2 "0..N-1"
run --headless -o "$T/shx" --shard 1 "$T/corpus"; expect "--shard without N is a usage error" 2 "K/N"
env -u SLURM_ARRAY_TASK_ID "$TESSERA" --headless -o "$T/shx" --shard slurm "$T/corpus" >"$T/out" 2>"$T/err"; rc=$?
expect "--shard slurm outside Slurm is a usage error" 2 "SLURM_ARRAY_TASK_ID"
run --headless -o "$T/shx" --devices 0,0 "$T/in/rgb8.png"; expect "--devices with a repeat is a usage error" 2 "listed twice"
run --headless -o "$T/shx" --devices gpu1 "$T/in/rgb8.png"; expect "--devices with a name is a usage error" 2 "--devices"
if ! "$TESSERA" --list 2>/dev/null | grep -q "^backend: GPU"; then
    run --headless -o "$T/shx" --devices 0,1 "$T/in/rgb8.png" "$T/in/rgba8.png"; expect "--devices on the CPU" 0 "--devices ignored: running on the CPU"
    [ "$(grep -c "devices ignored" "$T/err")" = 1 ] && ok "--devices on the CPU is said once" || bad "--devices on the CPU is said once"
fi

# ---------------------------------------------------------------- interrupted batch
mk 2000 1500 3 8 9 "$T/big.png"
mkdir -p "$T/bigs"
for i in 1 2 3 4; do cp "$T/big.png" "$T/bigs/b$i.png"; done
# interrupt SIGNAL STATUS DIR: a CPU batch stopped by SIGNAL after 1 s exits STATUS, no temp files.
# The reference convolution (conv=cpu) keeps the batch busy past that second; the fast CPU
# variant would finish it first.
interrupt() {
    mkdir -p "$3"
    "$TESSERA" --headless -q --backend cpu -j 2 --variant conv=cpu -o "$3" --ops "gauss:31" "$T/bigs" 2>"$T/err" &
    pid=$!
    sleep 1
    kill -"$1" $pid 2>/dev/null
    wait $pid; rc=$?
    expect "SIG$1 mid-batch exits $2" "$2" "interrupted"
    no_temps "$3" && ok "SIG$1 leaves no temp files" || bad "SIG$1 leaves no temp files ($(ls -a "$3" | tr '\n' ' '))"
}
interrupt TERM 143 "$T/o9"
interrupt INT 130 "$T/o10"

# Ctrl+C at random moments of a -j 4 batch, again and again (bounded: 30 runs or 25 s): a worker
# may be creating its temp file at that very moment; none may be left, and the message stays true.
mkdir -p "$T/stress"
i=0; while [ $i -lt 32 ]; do mk 400 300 3 8 $((300 + i)) "$T/stress/s$i.png"; i=$((i + 1)); done
runs=0 stopped=0 left=0 wrong=0 end=$(($(date +%s) + 25))
while [ $runs -lt 30 ] && [ "$(date +%s)" -lt $end ]; do
    rm -rf "$T/so"; mkdir -p "$T/so"
    "$TESSERA" --headless -q --backend cpu -j 4 -o "$T/so" --ops gauss:3 --format bmp "$T/stress" 2>"$T/err" &
    pid=$!
    # from 50 ms: the signal is not handled before the program has started
    sleep "$(printf "%d.%03d" 0 $((50 + $(od -An -N2 -tu2 /dev/urandom) % 600)))"
    kill -INT $pid 2>/dev/null
    wait $pid; rc=$?
    runs=$((runs + 1))
    if [ $rc = 130 ]; then
        stopped=$((stopped + 1))
        grep -q "interrupted; temporary files removed" "$T/err" || wrong=$((wrong + 1))
    elif [ $rc != 0 ]; then
        wrong=$((wrong + 1))
    fi
    no_temps "$T/so" || { left=$((left + 1)); ls -a "$T/so" | grep tmp | head -3; }
done
[ $left = 0 ] && ok "SIGINT at random moments ($stopped of $runs runs stopped): no temp file left" || bad "SIGINT at random moments: temp files left in $left of $runs runs"
[ $wrong = 0 ] && ok "every stopped run exits 130 and says so" || bad "every stopped run exits 130 and says so ($wrong wrong)"

summary
