# tests/harness.sh - what the shell suites share (sourced, with SUITE and T set): counters and the
# ok/bad/skip lines that tests/run_all.sh reads, and the closing "N passed, N failed, N skipped".
passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok   $SUITE: $1"; }
# bad NAME: a failure, with the last command's stderr ($T/err) indented below it.
bad() { failed=$((failed + 1)); echo "FAIL $SUITE: $1"; [ -s "$T/err" ] && sed 's/^/     | /' "$T/err" | head -20; }
skip() { skipped=$((skipped + 1)); echo "skip $SUITE: $1 ($2)"; }
# summary: the closing line; the status says whether anything failed.
summary() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" = 0 ]; exit; }
