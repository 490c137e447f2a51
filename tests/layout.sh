#!/bin/sh
# tests/layout.sh - the code's own rules, read from the sources (no build needed):
#  - ts_/TS_ name only what kernels/tessera.h declares: no other file defines such a name
#    (function, type, macro), header guards apart;
#  - kernels/ (the library) never prints, exits, opens files or reads the environment;
#  - a part of app/ (batch, viewer, codec, common) never includes the command line (cli.h).
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0
check() { # name, offending lines (empty: pass)
    if [ -z "$2" ]; then pass=$((pass + 1)); echo "ok   $1"
    else fail=$((fail + 1)); echo "FAIL $1"; echo "$2" | head -10 | sed 's/^/     /'; fi
}
public=$(grep -oE '\b(ts|TS)_[A-Za-z0-9_]+' kernels/tessera.h | sort -u)
defs=$(grep -anE '^(#define +(ts|TS)_[A-Za-z0-9_]+|typedef .*\b(ts|TS)_[A-Za-z0-9_]+;|[a-z].*[ *](ts|TS)_[A-Za-z0-9_]+\(.*[^;]$|(struct|enum) +(ts|TS)_[A-Za-z0-9_]+ *\{)' \
        $(find app kernels -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' | grep -v '^kernels/tessera.h$') |
    grep -avE '#define +TS_[A-Z0-9_]+_(H|CUH)\b' |
    while IFS= read -r line; do
        for n in $(echo "$line" | cut -d: -f3- | grep -oE '\b(ts|TS)_[A-Za-z0-9_]+' | head -1); do
            echo "$public" | grep -qx "$n" || echo "$line"
        done
    done)
check "ts_/TS_ names are tessera.h's alone" "$defs"
# a call after code on a line counts even when a comment follows it (the comment is cut first)
lib=$(grep -anE '\b(printf|fprintf|puts|exit|abort|fopen|getenv|open)\(' kernels/*.c kernels/*.cu kernels/*.cuh kernels/*.h 2>/dev/null |
    sed -E 's#(//|/\*).*##' | grep -aE '\b(printf|fprintf|puts|exit|abort|fopen|getenv|open)\(' |
    grep -avE 'snprintf|vsnprintf|^\S+:[0-9]+: *\*')
check "kernels/ never prints, exits, opens files or reads the environment" "$lib"
cli=$(grep -lE '#include "cli.h"' app/*/*.[ch] 2>/dev/null)
check "no part of app/ includes the command line" "$cli"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
