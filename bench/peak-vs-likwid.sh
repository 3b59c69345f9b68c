#!/usr/bin/env bash
# `numaprobe peak` (read, the whole system) against
# `likwid-bench -t load_avx -w S0:1GB:N` (N = every CPU of socket 0, 1 GB in
# all), side by side. On a one-node machine both are every CPU reading its
# own memory, so the figures must agree (target: within 5 %). Prints a
# Markdown table (for README.md) and the commands it ran. Installs Debian's
# likwid when missing (as bench/vs-likwid.sh does).
#
# Environment: BUDGET (numaprobe's time budget per step, default 3s), REPEAT
# (runs of each side, alternating, medians compared; default 3), PRIO
# (prefix of both sides' commands, default `nice -n -19` as root).
set -euo pipefail
cd "$(dirname "$0")/.."

BUDGET=${BUDGET:-3s}
REPEAT=${REPEAT:-3}
if [ "$(id -u)" -eq 0 ]; then PRIO=${PRIO-nice -n -19}; else PRIO=${PRIO-}; fi

if ! command -v likwid-bench >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "== installing likwid" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq likwid >/dev/null
fi

echo "== building" >&2
cargo build --release -q -p numaprobe
NP=target/release/numaprobe
mkdir -p target/bench
CMDLOG=target/bench/peak-commands.txt
: >"$CMDLOG"
run() { echo "${PRIO:+$PRIO }$*" >>"$CMDLOG"; $PRIO "$@"; }

# Every CPU of socket 0 (likwid's S0 domain) and how much each thread gets.
N=$(nproc)
PER=$((1000 / N))MB
median() { python3 -c "import sys,statistics; print(statistics.median(float(x) for x in sys.stdin.read().split()))"; }

np_peak() {
    run $NP peak --mix read --system-only --size "$PER" --time-budget "$BUDGET" --format json \
        | python3 -c "import sys,json; d=json.load(sys.stdin); print(d['system'][0]['gbs'])"
}
likwid_peak() { # likwid prints MByte/s (10^6 B/s)
    run likwid-bench -t load_avx -w "S0:1GB:$N" 2>/dev/null | awk '/^MByte\/s:/ {print $2/1000}'
}

a=() b=()
for _ in $(seq "$REPEAT"); do
    a+=("$(np_peak)")
    b+=("$(likwid_peak)")
done
A=$(printf '%s\n' "${a[@]}" | median)
B=$(printf '%s\n' "${b[@]}" | median)
R=$(python3 -c "print(f'{$A/$B:.3f}')")

echo "| measurement | numaprobe peak | likwid-bench load_avx | ratio | target |"
echo "| :--- | ---: | ---: | ---: | :--- |"
printf '| system read, %s threads, GB/s | %.2f | %.2f | %s | within 5 %% |\n' "$N" "$A" "$B" "$R"
echo
echo "Runs: numaprobe ${a[*]}; likwid ${b[*]} (GB/s)."
echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $N CPUs, 1-minute load $(cut -d' ' -f1 /proc/loadavg) at end."
echo
echo "Commands:"
echo
awk '!seen[$0]++ { print "    " $0 }' "$CMDLOG"
