#!/bin/sh
# tests/docs.sh - README.md and the manual page against the binary's own tables: every option of
# `tessera --help` (made from app/cli.c's option table) is in README.md and in --help-man, every
# --option README.md names exists, the --format lists agree, and the keys of README's key table
# are exactly those of --help's key list (made from app/viewer/viewer_keys.c's binding table).
# Usage: sh tests/docs.sh build/tessera [README.md]. Ends with "N passed, N failed, N skipped".
TESSERA=${1:-build/tessera}
README=${2:-$(dirname "$0")/../README.md}
T=$(mktemp -d /tmp/tessera-docs.XXXXXX)
trap 'rm -rf "$T"' EXIT
SUITE=docs
. "$(dirname "$0")/harness.sh"

"$TESSERA" --help >"$T/help" 2>"$T/err" || { bad "--help"; summary; }
"$TESSERA" --help-man >"$T/man" 2>"$T/err" || { bad "--help-man"; summary; }

# The options --help lists: "--name" and "-x" tokens of the option column.
sed -n '/^Options:/,/^$/p' "$T/help" | grep '^  -' | cut -c3-24 |
    grep -o -- '-[-a-zA-Z]*' | sort -u >"$T/opts"
[ "$(wc -l <"$T/opts")" -gt 20 ] && ok "--help lists the options" || bad "--help lists the options"
# README's options: in backquotes, as written on a command line.
grep -o '`[^`]*`' "$README" | grep -o -- '\(^\|[ `[]\)--\?[a-zA-Z][-a-zA-Z]*' |
    sed 's/^[ `[]//' | sort -u >"$T/readme-opts"
missing=$(grep -- '^--' "$T/opts" | while read -r o; do
    grep -qxF -- "$o" "$T/readme-opts" || printf '%s ' "$o"; done)
[ -z "$missing" ] && ok "README names every long option" || bad "README lacks: $missing"
missing=$(grep -- '^-[a-zA-Z]$' "$T/opts" | while read -r o; do
    grep -qxF -- "$o" "$T/readme-opts" || printf '%s ' "$o"; done)
[ -z "$missing" ] && ok "README names every short option" || bad "README lacks: $missing"
unknown=$(grep -- '^--' "$T/readme-opts" | while read -r o; do
    grep -qxF -- "$o" "$T/opts" || printf '%s ' "$o"; done)
[ -z "$unknown" ] && ok "every --option README names exists" || bad "README names unknown options: $unknown"
# the man page holds the same options (roff writes - as \-)
sed 's/\\-/-/g; s/\\f[BIR]//g' "$T/man" >"$T/man.txt"
missing=$(grep -- '^--' "$T/opts" | while read -r o; do
    grep -q -- "$o\\b" "$T/man.txt" || printf '%s ' "$o"; done)
[ -z "$missing" ] && ok "the man page names every option" || bad "man page lacks: $missing"
if command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man -l "$T/man" >"$T/man.out" 2>"$T/err" && [ ! -s "$T/err" ] &&
        grep -q "TESSERA(1)" "$T/man.out" && ok "man -l renders the page without warnings" ||
        bad "man -l renders the page without warnings"
else
    skip "man -l renders the page" "no man"
fi

# --format: the list in --help and in README's synopsis
fmt_help=$(grep -- '^  --format' "$T/help" | sed 's/.*FMT *//; s/ (default.*//; s/,\? or /, /; s/, /\n/g' | sort | tr '\n' ' ')
fmt_readme=$(grep -o -- '--format [a-z|]*' "$README" | head -1 | sed 's/--format //; s/|/\n/g' | sort | tr '\n' ' ')
[ -n "$fmt_help" ] && [ "$fmt_help" = "$fmt_readme" ] && ok "--format lists agree ($fmt_help)" ||
    bad "--format: --help says '$fmt_help', README '$fmt_readme'"

# Keys: --help's key column (names as --keys spells them) against README's "### Keys" table.
sed -n '/^Viewer keys/,/^$/p' "$T/help" | grep '^  ' | cut -c3-24 | tr ' ' '\n' | grep . |
    sed 's/^plus$/+/; s/^minus$/-/; s/^comma$/,/' | sort -u >"$T/keys"
[ "$(wc -l <"$T/keys")" -gt 20 ] && ok "--help lists the keys" || bad "--help lists the keys"
sed -n '/^### Keys/,/^## /p' "$README" | sed -n '/^|/p' | sed '1,2d' |
    sed 's/\\|/PIPE/g' | cut -d'|' -f2 | grep -o '`[^`]*`' | tr -d '`' |
    sed 's/^PIPE$/|/' | sort -u >"$T/readme-keys"
if cmp -s "$T/keys" "$T/readme-keys"; then
    ok "README's key table has exactly the bound keys ($(wc -l <"$T/keys"))"
else
    bad "README's keys differ from the binding table (< bound only, > README only): $(diff "$T/keys" "$T/readme-keys" | grep '^[<>]' | tr '\n' ' ')"
fi
summary
