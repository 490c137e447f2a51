#!/bin/sh
# Runs each libFuzzer target for SECONDS with a seed corpus built from assets/ and hostile cases.
# Usage: sh tests/fuzz/run.sh BUILD SECONDS TARGET... ; exits non-zero on a crash.
set -u
BUILD=$1 SECONDS_EACH=$2; shift 2
C=$BUILD/fuzz/corpus
mkdir -p "$BUILD/fuzz/crashes"
for t in "$@"; do rm -rf "${C:?}/$t"; mkdir -p "$C/$t"; done
# image seeds: the small assets, small images of every writer, truncations of them
if [ -d "$C/load" ]; then
    for f in assets/*.png; do [ "$(wc -c <"$f")" -lt 70000 ] && cp "$f" "$C/load/"; done
    for ext in png jpg bmp tga ppm pgm; do
        "$BUILD/mkimage" 9 7 3 8 1 "$C/load/s.$ext" 2>/dev/null
    done
    "$BUILD/mkimage" 9 7 1 16 2 "$C/load/s16.pgm"; "$BUILD/mkimage" 9 7 4 16 3 "$C/load/s16.png"
    for f in "$C"/load/s.*; do head -c 60 "$f" >"$f.cut"; done
fi
[ -d "$C/ops" ] && cp tests/fuzz/seeds/ops/* "$C/ops/"
# photos: seeds made with Pillow (tests/fuzz/seeds/README-photos); the loader gets them too
for t in exif webp tiff; do
    [ -d "$C/$t" ] && cp tests/fuzz/seeds/$t/* "$C/$t/"
    [ -d "$C/load" ] && [ "$t" != exif ] && cp tests/fuzz/seeds/$t/* "$C/load/"
done
[ -d "$C/kernel" ] && cp tests/fuzz/seeds/kernel/* "$C/kernel/"
status=0
for t in "$@"; do
    echo "== fuzz_$t: ${SECONDS_EACH}s"
    "$BUILD/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -max_len=65536 -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$BUILD/fuzz/crashes/$t-" \
        "$C/$t" >"$BUILD/fuzz/$t.log" 2>&1
    rc=$?
    grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)" "$BUILD/fuzz/$t.log" | tail -3
    grep -E "cov: [0-9]+" -o "$BUILD/fuzz/$t.log" | tail -1
    if [ $rc != 0 ]; then
        echo "fuzz_$t: FAILED (exit $rc); see $BUILD/fuzz/$t.log and $BUILD/fuzz/crashes/"
        grep -E "ERROR|SUMMARY" "$BUILD/fuzz/$t.log" | head -5
        status=1
    fi
done
exit $status
