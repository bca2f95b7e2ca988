#!/usr/bin/env bash
# `velvet batch --shard` under a real Slurm: starts a one-node cluster from Debian's packages
# (munged, slurmctld, slurmd; its own slurm.conf, MUNGE key, state, spool and logs in a temp
# folder; no systemd), submits the job-array script of docs/SCALING.md (taken from the doc,
# its GPU request dropped: the node renders on lavapipe) over six short synthetic clips in
# three shards, stops two tasks while each renders its second clip (one with SIGTERM alone,
# `scancel --batch --signal=TERM`, one with a plain `scancel`), requeues them, and checks that
# every output exists exactly once and decodes with its input's frame count, that no partial
# file is left, that the stopped tasks exited 143 and resumed without rendering their finished
# clip again, and that Slurm saw the same. Every daemon is stopped and the folder removed on
# exit, whatever happens. Needs root (slurmd starts the jobs).
#
#   Tools/slurm-test.sh [--velvet PATH]     (default .build/debug/velvet, as CI builds it)
set -euo pipefail
cd "$(dirname "$0")/.."
velvet=.build/debug/velvet
while [ $# -gt 0 ]; do
    case "$1" in
        --velvet) velvet=${2:?--velvet needs a path}; shift 2 ;;
        *) echo "slurm-test: unknown option $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "slurm-test: needs root (slurmd starts each job as its user)" >&2; exit 2; }
[ -x "$velvet" ] || { echo "slurm-test: no velvet at $velvet (run swift build)" >&2; exit 2; }
velvet=$(readlink -f "$velvet")
Tools/setup.sh --slurm >&2

clips=6          # clip-0 … clip-5; shard I of 3 takes clip-I and clip-(I+3)
shards=3
frames_of() { echo $((18 + 4 * $1)); }   # a different length per clip, so a swap would show
started=$SECONDS

# A short path: the MUNGE socket's name must fit a sockaddr_un.
cluster=$(mktemp -d /tmp/velvet-slurm.XXXXXX)
chmod 755 "$cluster"
export SLURM_CONF=$cluster/slurm.conf
job=""

# Stops what this script started (by the PIDs in its pid files and the processes working in
# its folder) and removes the folder; on failure first prints the logs.
cleanup() {
    local status=$?
    set +e
    trap - EXIT INT TERM HUP
    if [ "$status" -ne 0 ]; then
        for log in "$cluster"/log/*.log "$cluster"/shared/jobs/*.log; do
            [ -f "$log" ] && { echo "--- $log (last 30 lines)" >&2; tail -n 30 "$log" >&2; }
        done
    fi
    if [ -n "$job" ]; then
        scancel --full "$job" 2>/dev/null
        for _ in $(seq 50); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.2; done
    fi
    [ -f "$cluster/slurmctld.pid" ] && scontrol shutdown >/dev/null 2>&1
    for pidfile in "$cluster/slurmctld.pid" "$cluster/slurmd.pid" "$cluster/munge/munged.pid"; do
        [ -f "$pidfile" ] || continue
        local pid; pid=$(cat "$pidfile")
        # Only the daemon itself: a PID left in a stale file may belong to another process now.
        case "$(cat "/proc/$pid/comm" 2>/dev/null)" in slurmctld|slurmd|munged) ;; *) continue ;; esac
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null
    done
    # Job steps or renders still working in the folder (a task that outlived its daemons).
    for proc in /proc/[0-9]*; do
        case "$(readlink "$proc/cwd" 2>/dev/null)" in "$cluster"|"$cluster"/*) kill -KILL "${proc#/proc/}" 2>/dev/null ;; esac
    done
    rm -rf "$cluster"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

fail() { echo "slurm-test: $*" >&2; exit 1; }
# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s until it succeeds.
wait_for() {
    local limit=$1 what=$2; shift 2
    local deadline=$((SECONDS + limit))
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${limit} s waiting for $what"
        sleep 0.1
    done
}

# --- the cluster --------------------------------------------------------------------------
mkdir -p "$cluster"/{munge,state,spool,log} "$cluster"/shared/{velvet/bin,jobs/out,clips}
head -c 1024 /dev/urandom > "$cluster/munge/munge.key"
chmod 400 "$cluster/munge/munge.key"
munged --force --socket="$cluster/munge/munge.socket" --key-file="$cluster/munge/munge.key" \
    --log-file="$cluster/log/munged.log" --pid-file="$cluster/munge/munged.pid" --seed-file="$cluster/munge/munged.seed"
wait_for 10 "munged" test -S "$cluster/munge/munge.socket"

node=$(hostname -s)
read -r controller_port node_port < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))')
cat > "$SLURM_CONF" <<EOF
ClusterName=velvet-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$controller_port
SlurmdPort=$node_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$cluster/munge/munge.socket
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/log/slurmctld.log
SlurmdLogFile=$cluster/log/slurmd.log
# No systemd or cgroup setup here: processes are tracked through /proc.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# Finished tasks stay visible to scontrol for the checks.
MinJobAge=900
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N "$node"
node_idle() { [ "$(sinfo -h -n "$node" -o %t 2>/dev/null)" = idle ]; }
wait_for 60 "node $node to be idle" node_idle
idle_after=$((SECONDS - started))

# --- the job: clips, list, the doc's script -----------------------------------------------
for i in $(seq 0 $((clips - 1))); do
    ffmpeg -nostdin -loglevel error -f lavfi -i "testsrc2=size=192x108:rate=25" -frames:v "$(frames_of "$i")" \
        -pix_fmt yuv420p -c:v libx264 -preset ultrafast "$cluster/shared/clips/clip-$i.mp4"
    echo "$cluster/shared/clips/clip-$i.mp4" >> "$cluster/shared/jobs/inputs.txt"
done
ln -s "$velvet" "$cluster/shared/velvet/bin/velvet"
ln -s "$(readlink -f models)" "$cluster/shared/velvet/models"
awk '/^## Slurm/ { section = 1 } section && /^```bash/ { inside = 1; next } inside && /^```/ { exit } inside' \
    docs/SCALING.md | grep -v '^#SBATCH --gres=' | sed "s#/shared/#$cluster/shared/#g" > "$cluster/shared/jobs/velvet.sbatch"
grep -q '^exec .*velvet batch' "$cluster/shared/jobs/velvet.sbatch" || fail "no job script under '## Slurm' in docs/SCALING.md"

export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp} VELVET_VALIDATION=1   # the jobs inherit these
out=$cluster/shared/jobs/out
# The command line overrides the doc's sizes for a 2-core node.
job=$(sbatch --parsable --array=0-$((shards - 1)) --cpus-per-task=1 --time=10 \
    --chdir="$cluster/shared/jobs" "$cluster/shared/jobs/velvet.sbatch")
submitted_after=$((SECONDS - started))

task_field() {   # task_field TASK FIELD: a field of `scontrol show job` for JOB_TASK
    scontrol -o show job "${job}_$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# --- the kills, mid-render, and the requeues ----------------------------------------------
declare -A stop_state stop_exit clip_left finished_stamp stopped_at
# stop_mid_render TASK HOW...: once TASK has finished its first clip and writes its second,
# stops it with the scancel arguments HOW, records what is left, and requeues it.
stop_mid_render() {
    local task=$1; shift
    local first=clip-$task second=clip-$((task + 3)) partial pid
    writing() { compgen -G "$out/.$second.mp4.velvet-partial-*" >/dev/null; }
    wait_for 240 "task $task to render $second" writing
    partial=$(compgen -G "$out/.$second.mp4.velvet-partial-*" | head -n 1)
    pid=${partial##*-}
    grep -qz "^SLURM_ARRAY_TASK_ID=$task$" "/proc/$pid/environ" || fail "the partial's writer $pid is not task $task"
    [ -f "$out/$first.mp4" ] || fail "task $task writes $second before $first is finished"
    [ ! -e "$out/$second.mp4" ] || fail "$second was finished before the kill"
    finished_stamp[$task]=$(stat -c '%i %.9Y' "$out/$first.mp4")
    scancel "$@" "${job}_$task"
    stopped_at[$task]=$((SECONDS - started))
    stopped() { case "$(task_field "$task" JobState)" in FAILED|COMPLETED|CANCELLED) return 0 ;; *) return 1 ;; esac; }
    wait_for 60 "task $task to stop" stopped
    wait_for 10 "velvet $pid to exit" eval "! kill -0 $pid 2>/dev/null"
    stop_state[$task]="$(task_field "$task" JobState) $(task_field "$task" ExitCode)"
    # The other tasks are still rendering: only the stopped clip's files count here.
    clip_left[$task]=$(find "$out" -name "$second.mp4" -o -name ".$second.mp4.velvet-*" | wc -l)
    # A requeue while Slurm still finishes the kill (state CG), or within a second of a cancel,
    # is launched and then dropped ("already killed, do not launch batch job").
    settled() { [ "$(squeue -h -j "${job}_$task" -o %t 2>/dev/null)" != "CG" ]; }
    wait_for 60 "task $task to finish completing" settled
    # slurmd revokes a cancelled job's credential and refuses a relaunch whose credential was
    # made in the same second as the revocation (one-second resolution): start after it.
    sleep 2
    # Slurm holds a requeued job back 2 minutes unless told to start it now.
    scontrol requeue "${job}_$task"
    scontrol update jobid="${job}_$task" StartTime=now
}
signalled=1      # sent SIGTERM alone (scancel --batch --signal=TERM): velvet's exit is the task's
cancelled=2      # cancelled (plain scancel): Slurm sends SIGTERM, then SIGKILL after KillWait
stop_mid_render "$signalled" --batch --signal=TERM
stop_mid_render "$cancelled"

all_done() {
    local task state
    for task in $(seq 0 $((shards - 1))); do
        state=$(task_field "$task" JobState)
        case "$state" in
            COMPLETED) ;;
            FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) fail "task $task ended $state" ;;
            *) return 1 ;;
        esac
    done
}
wait_for 300 "every task to complete" all_done
finished_after=$((SECONDS - started))

# --- the checks ---------------------------------------------------------------------------
failures=0
rows=()
check() {   # check NAME EXPECTED ACTUAL
    local verdict=ok
    [ "$2" = "$3" ] || { verdict=FAILED; failures=$((failures + 1)); }
    rows+=("$(printf '%-58s %-22s %-22s %s' "$1" "$2" "$3" "$verdict")")
}
logs=("$cluster"/shared/jobs/velvet-"$job"_*.log)
check "task $signalled, SIGTERM: Slurm state, exit code" "FAILED 143:0" "${stop_state[$signalled]}"
check "task $cancelled, scancel: Slurm state, exit code" "CANCELLED 143:0" "${stop_state[$cancelled]}"
for task in "$signalled" "$cancelled"; do
    log=$cluster/shared/jobs/velvet-${job}_$task.log
    same_file=$([ "$(stat -c '%i %.9Y' "$out/clip-$task.mp4")" = "${finished_stamp[$task]}" ] && echo unchanged || echo replaced)
    check "task $task: velvet's SIGTERM line" "1" "$(grep -c 'interrupted (SIGTERM); unfinished output removed' "$log")"
    check "task $task: clip-$((task + 3)) files right after the stop" "0" "${clip_left[$task]}"
    check "task $task: restarts after the requeue" "1" "$(task_field "$task" Restarts)"
    check "task $task: finished clip-$task skipped then, file" "1 unchanged" \
        "$(grep -c "skipped .*clip-$task.mp4 (done" "$log") $same_file"
done
for task in $(seq 0 $((shards - 1))); do
    check "task $task: Slurm state, exit code" "COMPLETED 0:0" "$(task_field "$task" JobState) $(task_field "$task" ExitCode)"
done
expected_listing=$(for i in $(seq 0 $((clips - 1))); do echo "clip-$i.mp4"; echo ".clip-$i.mp4.velvet-done"; done | sort)
check "out/ holds each output and its record, nothing else" "$((2 * clips)) files" \
    "$( [ "$(ls -A "$out" | sort)" = "$expected_listing" ] && echo "$((2 * clips)) files" || ls -A "$out" | tr '\n' ' ')"
check "partial files at the end" "0" "$(find "$cluster" -name '.*.velvet-partial-*' | wc -l)"
for i in $(seq 0 $((clips - 1))); do
    rendered=$(cat "${logs[@]}" | grep -c "rendered $cluster/shared/clips/clip-$i.mp4 ->" || true)
    decoded=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 \
        "$out/clip-$i.mp4" 2>&1 || true)
    check "clip-$i: renders in all logs, frames decoded" "1 $(frames_of "$i")" "$rendered $decoded"
done

echo
printf '%-58s %-22s %-22s %s\n' "check" "expected" "actual" ""
printf '%s\n' "${rows[@]}"
echo
echo "slurm-test: node idle after ${idle_after} s, job $job submitted at ${submitted_after} s, task $signalled" \
    "signalled at ${stopped_at[$signalled]} s, task $cancelled cancelled at ${stopped_at[$cancelled]} s," \
    "all $shards tasks done at ${finished_after} s; $clips clips, $(nproc) CPU(s)"
[ "$failures" -eq 0 ] || fail "$failures check(s) failed"
echo "slurm-test: passed"
