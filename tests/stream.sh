#!/bin/sh
# tests/stream.sh - the batch as a warm worker: --files-from FILE|- (lines, -0), --jsonl. Every
# line gets one record, bad lines and bad files are reported per line and never end the process,
# the outputs equal the folder run's byte for byte, and a record comes back before the input
# ends. Usage: sh tests/stream.sh build/tessera. Ends with "N passed, N failed, N skipped".
TESSERA=${1:-build/tessera}
case $TESSERA in /*) ;; *) TESSERA=$PWD/$TESSERA ;; esac
MKIMAGE=$(dirname "$TESSERA")/mkimage
T=$(mktemp -d /tmp/tessera-stream.XXXXXX)
trap 'rm -rf "$T"' EXIT
SUITE=stream
. "$(dirname "$0")/harness.sh"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=$(command -v python3 || echo "")

mk() { "$MKIMAGE" "$@" >/dev/null || { echo "mkimage failed: $*"; exit 1; }; }
mkdir -p "$T/in/sub" "$T/in/dir"
mk 33 17 3 8 1 "$T/in/a.png"
mk 20 30 1 8 2 "$T/in/sub/b.png"
mk 64 48 3 8 3 "$T/in/sub/c.jpg"
printf '\211PNG\r\n\032\n broken' >"$T/in/broken.png"
count() { grep -c "$1" "$2" 2>/dev/null; }
# field NAME of record N (1-based) of FILE, with python when there is one (else "")
field() { [ -n "$PY" ] && "$PY" -c 'import json,sys; print(json.loads(open(sys.argv[3]).read().splitlines()[int(sys.argv[2])-1]).get(sys.argv[1]))' "$@" 2>/dev/null; }

# ---- a list with good files, a missing one, a broken one, a folder, an empty line
printf 'a.png\nmissing.png\n\nbroken.png\ndir\nsub/b.png\n./sub/c.jpg\n' >"$T/list"
(cd "$T/in" && "$TESSERA" --files-from "$T/list" --jsonl -o "$T/out" --ops flip,gauss:3 >"$T/rec" 2>"$T/err"); rc=$?
[ $rc = 1 ] && ok "--files-from FILE: exit 1 when some lines failed" || bad "--files-from FILE: exit 1 when some lines failed (exit $rc)"
n=$(wc -l <"$T/rec")
[ "$n" = 6 ] && ok "one record per non-empty line (6)" || bad "one record per non-empty line ($n)"
[ "$(count '"status": "ok"' "$T/rec")" = 3 ] && [ "$(count '"status": "error"' "$T/rec")" = 3 ] &&
    ok "3 ok and 3 error records" || { cat "$T/rec" >"$T/err"; bad "3 ok and 3 error records"; }
sed -n 1p "$T/rec" | grep -q '"input": "a.png", "output": "'"$T"'/out/a.png", "status": "ok", "error": null, "ms": [0-9.]*, "device": "cpu"' &&
    ok "a record names input, output, status, error, ms, device" || { sed -n 1p "$T/rec" >"$T/err"; bad "a record names input, output, status, error, ms, device"; }
grep -q '"input": "missing.png".*"status": "error", "error": "No such file' "$T/rec" && ok "a missing file: an error record" || bad "a missing file: an error record"
grep -q '"input": "dir".*"error": "a folder' "$T/rec" && ok "a folder line: an error record" || bad "a folder line: an error record"
sed -n 6p "$T/rec" | grep -q '"input": "./sub/c.jpg"' && ok "records in input order" || bad "records in input order"
(cd "$T/in" && "$TESSERA" --headless -q -r -o "$T/ref" --ops flip,gauss:3 a.png sub 2>/dev/null)
same=1
for f in a.png sub/b.png sub/c.jpg; do cmp -s "$T/out/$f" "$T/ref/${f#sub/}" || same=0; done
[ $same = 1 ] && ok "the outputs mirror the lines and equal a folder run's byte for byte" || bad "the outputs mirror the lines and equal a folder run's byte for byte"
if [ -n "$PY" ]; then
    "$PY" -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/rec" 2>"$T/err" &&
        ok "every record is valid JSON" || bad "every record is valid JSON"
else
    skip "every record is valid JSON" "no python3"
fi

# ---- stdin, -0 (a newline inside a name), absolute and climbing paths keep the name alone
nl='
'
cp "$T/in/a.png" "$T/in/new${nl}line.png"
(cd "$T/in/sub" && printf '%s\0%s\0%s' "$T/in/new${nl}line.png" ../a.png b.png |
    "$TESSERA" --files-from - -0 --jsonl -q -o "$T/o0" >"$T/rec0" 2>"$T/err"); rc=$?
[ $rc = 0 ] && [ "$(count '"status": "ok"' "$T/rec0")" = 3 ] && ok "-0 from stdin: 3 ok (a newline in a name)" || bad "-0 from stdin: 3 ok (exit $rc)"
[ -f "$T/o0/new${nl}line.png" ] && [ -f "$T/o0/a.png" ] && [ -f "$T/o0/b.png" ] &&
    ok "absolute and ../ paths keep the name alone" || bad "absolute and ../ paths keep the name alone"
grep -q 'new\\u000aline.png' "$T/rec0" && ok "control bytes escaped in JSON" || bad "control bytes escaped in JSON"
printf 'a.png\0b.png\n' >"$T/nul"
(cd "$T/in" && "$TESSERA" --files-from "$T/nul" --jsonl -q -o "$T/o1" >"$T/rec1" 2>/dev/null); rc=$?
[ $rc = 1 ] && grep -q '"error": "line 1: a NUL byte' "$T/rec1" && ok "a NUL in a line without -0: an error record" || bad "a NUL in a line without -0: an error record (exit $rc)"
# a line longer than any path, then a good one: the process goes on
{ head -c 5000 /dev/zero | tr '\0' x; printf '\na.png\n'; } >"$T/long"
(cd "$T/in" && "$TESSERA" --files-from "$T/long" --jsonl -q -o "$T/o2" >"$T/rec2" 2>/dev/null); rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/rec2")" = 2 ] && grep -q '"error": "line 1: line of 5000 bytes' "$T/rec2" &&
    grep -q '"input": "a.png".*"ok"' "$T/rec2" && ok "a 5000-byte line: an error record, the next line converted" || bad "a 5000-byte line: an error record, the next line converted"
# an empty list: nothing to do, exit 0
"$TESSERA" --files-from /dev/null --jsonl -q -o "$T/o3" >"$T/rec3" 2>"$T/err"; rc=$?
[ $rc = 0 ] && [ ! -s "$T/rec3" ] && ok "an empty list: no record, exit 0" || bad "an empty list: no record, exit 0 (exit $rc)"

# ---- a warm process: a record comes back before the input ends
if [ -n "$PY" ]; then
    (cd "$T/in" && "$PY" - "$TESSERA" "$T/o4" >"$T/py.out" 2>"$T/err" <<'EOF'
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "--files-from", "-", "--jsonl", "-q", "-o", sys.argv[2]],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for name in ["a.png", "nothing.png", "sub/b.png"]:
    p.stdin.write((name + "\n").encode()); p.stdin.flush()
    rec = json.loads(p.stdout.readline())   # before the next line is written
    print(rec["input"], rec["status"])
p.stdin.close()
print("exit", p.wait())
EOF
    )
    [ "$(cat "$T/py.out")" = "a.png ok${nl}nothing.png error${nl}sub/b.png ok${nl}exit 1" ] &&
        ok "one line in, its record out, before the input ends" || { cat "$T/py.out" >>"$T/err"; bad "one line in, its record out, before the input ends"; }
else
    skip "one line in, its record out" "no python3"
fi

# ---- --skip-existing: a second run over the same list skips what the first wrote
(cd "$T/in" && "$TESSERA" --files-from "$T/list" --jsonl -q --skip-existing -o "$T/out" --ops flip,gauss:3 >"$T/rec6" 2>/dev/null); rc=$?
[ "$(count '"status": "skipped"' "$T/rec6")" = 3 ] && [ "$(count '"status": "error"' "$T/rec6")" = 3 ] &&
    grep -q '"input": "a.png", "output": "'"$T"'/out/a.png", "status": "skipped", "error": null' "$T/rec6" &&
    ok "--skip-existing: the written ones are skipped records with their output" || { cat "$T/rec6" >"$T/err"; bad "--skip-existing: the written ones are skipped records (exit $rc)"; }

# ---- --jsonl in a plain batch; --shard over a list; the usage errors
(cd "$T/in" && "$TESSERA" --headless --jsonl -q -r -o "$T/o5" a.png sub >"$T/rec5" 2>/dev/null); rc=$?
[ $rc = 0 ] && [ "$(count '"status": "ok"' "$T/rec5")" = 3 ] && ok "--jsonl with INPUT arguments: one record each" || bad "--jsonl with INPUT arguments (exit $rc)"
printf 'a.png\nsub/b.png\nsub/c.jpg\n' >"$T/list3"
for k in 0 1; do (cd "$T/in" && "$TESSERA" --files-from "$T/list3" --jsonl -q --shard $k/2 -o "$T/s$k" >"$T/recs$k" 2>/dev/null); done
[ "$(cat "$T/recs0" "$T/recs1" | wc -l)" = 3 ] && ok "--shard over a list: the 2 shards' records add up to the list" || bad "--shard over a list: the 2 shards' records add up to the list"
run() { "$TESSERA" "$@" >"$T/run.out" 2>"$T/err"; rc=$?; }
run --files-from "$T/list" -o "$T/x" "$T/in/a.png"
[ $rc = 2 ] && grep -q "no INPUT arguments" "$T/err" && ok "--files-from with INPUT arguments: usage error" || bad "--files-from with INPUT arguments: usage error (exit $rc)"
run --headless -0 -o "$T/x" "$T/in/a.png"
[ $rc = 2 ] && grep -q "give --files-from" "$T/err" && ok "-0 without --files-from: usage error" || bad "-0 without --files-from: usage error (exit $rc)"
run --files-from "$T/list" --jsonl --timings -o "$T/x"
[ $rc = 2 ] && grep -q "stdout" "$T/err" && ok "--jsonl with --timings: usage error" || bad "--jsonl with --timings: usage error (exit $rc)"
run --files-from "$T/nonexistent" -o "$T/x"
[ $rc = 2 ] && grep -q "nonexistent" "$T/err" && ok "--files-from a missing file: usage error" || bad "--files-from a missing file: usage error (exit $rc)"
run --files-from "$T/list" -o "$T/x.png"
[ $rc = 2 ] && grep -q "directory" "$T/err" && ok "--files-from with -o FILE: usage error" || bad "--files-from with -o FILE: usage error (exit $rc)"
run --files-from "$T/list"
[ $rc = 2 ] && grep -q "needs -o" "$T/err" && ok "--files-from without -o: usage error" || bad "--files-from without -o: usage error (exit $rc)"
summary
