# Sourced by hot-code.sh and instructions.sh: running the daemons the bench starts under
# callgrind, and stopping them so that callgrind writes its profiles.
#
#   callgrind_wrapper WORK OUT BIN [VALGRIND_ARGS...]
#       writes WORK/daemon, which the bench takes as --bin: it runs BIN under callgrind in a
#       session of its own (profiles to OUT.<pid>) and records each pid in WORK/pids.
#   callgrind_stop WORK
#       the bench kills the wrapper with SIGKILL; the daemon under valgrind runs on until it
#       gets SIGTERM, then callgrind writes its profile. Waits at most 60 s.

callgrind_wrapper() {
    local work=$1 out=$2 bin=$3
    shift 3
    cat >"$work/daemon" <<WRAP
#!/usr/bin/env bash
setsid valgrind --tool=callgrind --callgrind-out-file=$out.%p \\
    --dump-instr=no --dump-line=no $* "$bin" "\$@" &
echo \$! >>"$work/pids"
wait
WRAP
    chmod +x "$work/daemon"
}

callgrind_stop() {
    local work=$1 pid alive
    [[ -f $work/pids ]] || return 0
    while read -r pid; do kill -TERM "$pid" 2>/dev/null || true; done <"$work/pids"
    for _ in $(seq 1 600); do
        alive=0
        while read -r pid; do kill -0 "$pid" 2>/dev/null && alive=1; done <"$work/pids"
        ((alive)) || { rm -f "$work/pids"; return 0; }
        sleep 0.1
    done
    echo "daemons under valgrind still running after 60 s" >&2
    return 1
}
