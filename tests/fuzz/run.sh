#!/bin/sh
# Runs each libFuzzer target with a seed corpus built from assets/, small images of every writer,
# truncations of them and the crafted inputs of tests/test_hostile.c (written by the unit tests
# with TESSERA_SEED_DIR). The whole loader, TIFF, WebP, --ops and kernel files get SECONDS each;
# the other per-format targets (jpeg png bmp gif psd pnm tga exif) a third of it (at least 5), so
# that the targets stay a few minutes in CI. UBSan reports are fatal (the build uses -fno-sanitize-recover; halt_on_error here
# too). FUZZ_FULL=1 gives every target the whole SECONDS (the long runs before a release);
# FUZZ_JOBS=N runs N targets at once (each is one process).
# Usage: sh tests/fuzz/run.sh BUILD SECONDS TARGET... ; exits non-zero on a crash.
set -u
BUILD=$1 SECONDS_EACH=$2; shift 2
C=$BUILD/fuzz/corpus
S=$BUILD/fuzz/seeds
mkdir -p "$BUILD/fuzz/crashes"
for t in "$@"; do rm -rf "${C:?}/$t"; mkdir -p "$C/$t"; done
rm -rf "$S"; mkdir -p "$S"
for f in assets/*.png; do [ "$(wc -c <"$f")" -lt 70000 ] && cp "$f" "$S/"; done
for ext in png jpg bmp tga ppm pgm; do "$BUILD/mkimage" 9 7 3 8 1 "$S/s.$ext" 2>/dev/null; done
"$BUILD/mkimage" 9 7 1 8 4 "$S/g.jpg"; "$BUILD/mkimage" 9 7 1 16 2 "$S/s16.pgm"
"$BUILD/mkimage" 9 7 4 16 3 "$S/s16.png"; "$BUILD/mkimage" 9 7 2 8 5 "$S/ga.png"
for f in "$S"/s.*; do head -c 60 "$f" >"$f.cut"; done
[ -x "$BUILD/test_unit" ] && TESSERA_SEED_DIR=$S "$BUILD/test_unit" hostile_jpeg hostile_bmp hostile_tga \
    hostile_psd >/dev/null 2>&1 # not the 2 GiB PNG: its bytes are no seed
seed() { # target, then file patterns
    t=$1; shift
    [ -d "$C/$t" ] || return 0
    for f in "$@"; do [ -f "$f" ] && cp "$f" "$C/$t/"; done
}
seed load "$S"/*
seed jpeg "$S"/*.jpg "$S"/*.jpg.cut
seed png "$S"/*.png "$S"/*.png.cut
seed bmp "$S"/*.bmp "$S"/*.bmp.cut
seed tga "$S"/*.tga "$S"/*.tga.cut
seed psd "$S"/*.psd
seed gif "$S"/*.gif
seed pnm "$S"/*.ppm "$S"/*.pgm "$S"/*.ppm.cut
[ -d "$C/gif" ] && printf 'GIF89a\001\000\001\000\200\000\000\000\000\000\377\377\377,\000\000\000\000\001\000\001\000\000\002\002D\001\000;' >"$C/gif/two.gif"
[ -d "$C/ops" ] && cp tests/fuzz/seeds/ops/* "$C/ops/"
# photos: seeds made with Pillow (tests/fuzz/seeds/README-photos); the loader gets them too
for t in exif webp tiff heif jxl; do
    [ -d "$C/$t" ] && cp tests/fuzz/seeds/$t/* "$C/$t/"
    [ -d "$C/load" ] && [ "$t" != exif ] && cp tests/fuzz/seeds/$t/* "$C/load/"
done
[ -d "$C/kernel" ] && cp tests/fuzz/seeds/kernel/* "$C/kernel/"
run_one() { # target; prints its summary, returns non-zero on a crash
    t=$1
    case $t in
    load | ops | kernel | tiff | webp) secs=$SECONDS_EACH ;;
    *) secs=$((SECONDS_EACH / 3)); [ "$secs" -ge 5 ] || secs=5 ;;
    esac
    [ "${FUZZ_FULL:-0}" = 1 ] && secs=$SECONDS_EACH
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
    "$BUILD/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$BUILD/fuzz/crashes/$t-" \
        "$C/$t" >"$BUILD/fuzz/$t.log" 2>&1
    rc=$?
    {
        echo "== fuzz_$t: ${secs}s, $(ls "$C/$t" | wc -l) corpus files after the run"
        grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)" "$BUILD/fuzz/$t.log" | tail -3
        grep -E "cov: [0-9]+" -o "$BUILD/fuzz/$t.log" | tail -1
        if [ $rc != 0 ]; then
            echo "fuzz_$t: FAILED (exit $rc); see $BUILD/fuzz/$t.log and $BUILD/fuzz/crashes/"
            grep -E "ERROR|SUMMARY|runtime error" "$BUILD/fuzz/$t.log" | head -5
        fi
    } >"$BUILD/fuzz/$t.summary"
    cat "$BUILD/fuzz/$t.summary"
    return $rc
}
JOBS=${FUZZ_JOBS:-1}
status=0
while [ $# -gt 0 ]; do # batches of JOBS targets at once
    pids=""
    n=0
    while [ $# -gt 0 ] && [ $n -lt "$JOBS" ]; do
        run_one "$1" &
        pids="$pids $!"
        n=$((n + 1)); shift
    done
    for p in $pids; do wait "$p" || status=1; done
done
exit $status
