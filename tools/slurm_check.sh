#!/bin/sh
# tools/slurm_check.sh - `--shard slurm` under a real Slurm: brings up a one-node cluster from
# Debian's packages (munged, slurmctld, slurmd as root, every file in a temp folder, ports picked
# free), submits `sbatch --array=0-3` running `tessera --headless --shard slurm`, waits, checks
# that the four outputs are disjoint and that their union equals the unsharded run byte for byte,
# then tears the cluster down. Without slurmctld/slurmd/munged, or not as root: "skipped".
#   sh tools/slurm_check.sh [build/tessera]        (make engines-check; make engines-deps installs)
# TESSERA_SLURM_FILES=N (default 48) sets the corpus size, TESSERA_SLURM_INPUT=DIR uses a folder of
# images instead (tools/bench_engines.sh), TESSERA_SLURM_OPS the chain; TESSERA_SLURM_KEEP=1 keeps
# the temp folder.
# Ends with "N passed, N failed, N skipped".
TESSERA=$(cd "$(dirname "${1:-build/tessera}")" && pwd)/$(basename "${1:-build/tessera}")
MKIMAGE=$(dirname "$TESSERA")/mkimage
NFILES=${TESSERA_SLURM_FILES:-48}
SUITE=slurm
T=$(mktemp -d /tmp/tessera-slurm.XXXXXX)
chmod 755 "$T"
. "$(dirname "$0")/../tests/harness.sh"

pids=""
teardown() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done; done
    [ -n "${TESSERA_SLURM_KEEP:-}" ] && echo "# kept $T" || rm -rf "$T"
}
trap teardown EXIT
trap 'exit 1' INT TERM

missing=""
for c in slurmctld slurmd munged sbatch squeue sinfo; do
    command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || missing="$missing $c"
done
if [ -n "$missing" ]; then
    skip "Slurm job array" "not installed:$missing; make engines-deps installs Debian's slurmctld slurmd munge"
    summary
fi
if [ "$(id -u)" != 0 ]; then
    skip "Slurm job array" "slurmd must run as root here"; summary
fi
[ -x "$TESSERA" ] && [ -x "$MKIMAGE" ] || { echo "no $TESSERA or $MKIMAGE: make all first"; failed=1; summary; }
PATH=$PATH:/usr/sbin

# A free TCP port on the loopback (the kernel's choice, so two checks at once do not collide).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CTLD_PORT=$(free_port); SLURMD_PORT=$(free_port)
while [ "$SLURMD_PORT" = "$CTLD_PORT" ]; do SLURMD_PORT=$(free_port); done
HOST=$(hostname -s)
NCPU=$(nproc)
MEM_MB=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)

# ---- munge: its own key, socket and files
mkdir -p "$T/munge" "$T/spool" "$T/state" "$T/log" "$T/in/sub" "$T/out"
dd if=/dev/urandom of="$T/munge/key" bs=1024 count=1 2>/dev/null
chmod 700 "$T/munge"; chmod 400 "$T/munge/key"
munged --force --socket="$T/munge/sock" --key-file="$T/munge/key" --pid-file="$T/munge/pid" \
    --log-file="$T/log/munged.log" --seed-file="$T/munge/seed" 2>"$T/log/munged.err" || {
    cat "$T/log/munged.err" "$T/log/munged.log" 2>/dev/null | tail -5 >"$T/err"
    bad "munged starts"; summary
}
pids="$(cat "$T/munge/pid")"

# ---- slurm.conf: one node with every core, state and logs here, no cgroups, no accounting
cat >"$T/slurm.conf" <<EOF
ClusterName=tessera
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1,batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$NCPU RealMemory=$MEM_MB State=UNKNOWN
PartitionName=check Nodes=$HOST Default=YES MaxTime=10 State=UP OverSubscribe=NO
EOF
: >"$T/plugstack.conf"
echo "PlugStackConfig=$T/plugstack.conf" >>"$T/slurm.conf"
export SLURM_CONF="$T/slurm.conf"

slurmctld -f "$SLURM_CONF" -i 2>"$T/log/slurmctld.err" &&
    slurmd -f "$SLURM_CONF" -N "$HOST" 2>"$T/log/slurmd.err" || true
# both daemonize and write their pid files; wait for the node to come up idle
i=0
while [ $i -lt 300 ]; do
    state=$(sinfo -h -N -o %t 2>/dev/null | head -1)
    [ "$state" = idle ] && break
    sleep 0.1; i=$((i + 1))
done
for f in slurmctld slurmd; do [ -f "$T/$f.pid" ] && pids="$(cat "$T/$f.pid") $pids"; done
if [ "$state" != idle ]; then
    tail -n 8 "$T/log/slurmctld.log" "$T/log/slurmd.log" "$T/log/"*.err >"$T/err" 2>/dev/null
    bad "the one-node cluster comes up (node state '$state' after 30 s)"; summary
fi
ok "one-node Slurm up in $((i / 10)).$((i % 10)) s (node $HOST, $NCPU CPUs)"

# ---- the corpus: NFILES PNG and JPEG files, some in a subfolder (-r), all sizes different
IN="$T/in"
if [ -n "${TESSERA_SLURM_INPUT:-}" ]; then
    IN=$(cd "$TESSERA_SLURM_INPUT" && pwd) || { bad "TESSERA_SLURM_INPUT=$TESSERA_SLURM_INPUT"; summary; }
    NFILES=$(find "$IN" -type f | wc -l)
fi
i=0
while [ -z "${TESSERA_SLURM_INPUT:-}" ] && [ $i -lt "$NFILES" ]; do
    case $((i % 4)) in
    0) f="$T/in/p$i.png" ;; 1) f="$T/in/sub/s$i.png" ;; *) f="$T/in/j$i.jpg" ;;
    esac
    "$MKIMAGE" $((40 + i * 7)) $((30 + i * 5)) 3 8 $((500 + i)) "$f" >/dev/null || { bad "mkimage"; summary; }
    i=$((i + 1))
done
OPS=${TESSERA_SLURM_OPS:-gauss:3,flip,equalize}

# ---- the array: one output folder per task, so that overlaps show
cat >"$T/job.sh" <<EOF
#!/bin/sh
#SBATCH --job-name=tessera-check
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --output=$T/log/task-%a.out
exec "$TESSERA" --headless -q -r --backend cpu -j 1 -o "$T/out/task-\$SLURM_ARRAY_TASK_ID" \\
    --ops "$OPS" --shard slurm "$IN"
EOF
t0=$(date +%s.%N)
job=$(sbatch --parsable "$T/job.sh" 2>"$T/err")
if [ -z "$job" ]; then bad "sbatch --array=0-3 is accepted"; summary; fi
ok "sbatch --array=0-3 accepted (job $job)"
i=0
while [ $i -lt 1200 ] && [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; do sleep 0.1; i=$((i + 1)); done
t1=$(date +%s.%N)
if [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; then
    squeue -j "$job" >"$T/err" 2>&1; bad "the array finishes within 120 s"; summary
fi
# the states from slurmctld's log (no accounting database): every task "done" with exit 0
n_ok=$(grep -c "JobId=${job}_[0-3](.*) WEXITSTATUS 0" "$T/log/slurmctld.log" 2>/dev/null)
tasks_ran=0
for k in 0 1 2 3; do [ -d "$T/out/task-$k" ] && tasks_ran=$((tasks_ran + 1)); done
cat "$T/log/"task-*.out >"$T/err" 2>/dev/null
[ "$tasks_ran" = 4 ] && [ "$n_ok" -ge 4 ] && ok "4 array tasks ran and exited 0" \
    || bad "4 array tasks ran and exited 0 ($tasks_ran output folders, $n_ok 'WEXITSTATUS 0')"

# ---- the same files in one process, then the checks
t2=$(date +%s.%N)
"$TESSERA" --headless -q -r --backend cpu -j "$NCPU" -o "$T/out/all" --ops "$OPS" "$IN" 2>"$T/err"
rc=$?
t3=$(date +%s.%N)
[ $rc = 0 ] && ok "the unsharded run" || bad "the unsharded run (exit $rc)"
list() { (cd "$1" 2>/dev/null && find . -type f | LC_ALL=C sort); }
n_all=$(list "$T/out/all" | wc -l)
: >"$T/union"
for k in 0 1 2 3; do list "$T/out/task-$k" >>"$T/union"; done
n_union=$(wc -l <"$T/union")
n_distinct=$(LC_ALL=C sort -u "$T/union" | wc -l)
[ "$n_all" = "$NFILES" ] && ok "the unsharded run wrote all $NFILES files" || bad "the unsharded run wrote $n_all of $NFILES files"
[ "$n_union" = "$n_distinct" ] && ok "the 4 shards are disjoint" || bad "the 4 shards are disjoint ($n_union files, $n_distinct distinct)"
same=1
for k in 0 1 2 3; do
    [ -d "$T/out/task-$k" ] || continue
    for f in $(list "$T/out/task-$k"); do cmp -s "$T/out/task-$k/$f" "$T/out/all/$f" || { same=0; echo "# differs: $f"; }; done
done
[ "$same" = 1 ] && [ "$(LC_ALL=C sort -u "$T/union")" = "$(list "$T/out/all")" ] \
    && ok "the union of the 4 shards equals the unsharded run byte for byte" \
    || bad "the union of the 4 shards equals the unsharded run byte for byte"
# first task's start to last task's end, from slurmctld's log ("[2026-11-26T18:24:36.883] ...")
span=$(grep -E "(Allocate|_job_complete): JobId=${job}_" "$T/log/slurmctld.log" | sed 's/^\[[^T]*T\([^]]*\)\].*/\1/' |
    awk -F: '{ t = $1 * 3600 + $2 * 60 + $3; if (NR == 1 || t < lo) lo = t; if (t > hi) hi = t }
             END { if (NR) printf "%.2f", hi - lo; else print "?" }')
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
per=""
for k in 0 1 2 3; do per="$per $(list "$T/out/task-$k" | wc -l)"; done
echo "# $NFILES files, --ops $OPS, CPU backend, $NCPU CPUs: array of 4 tasks (1 CPU and -j 1 each; files per task:$per) $(secs "$t0" "$t1") s from sbatch to the last task's end, $span s from the first task's start; one process (-j $NCPU) $(secs "$t2" "$t3") s"
summary
