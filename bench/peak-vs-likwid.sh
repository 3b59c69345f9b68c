#!/usr/bin/env bash
# `numaprobe peak` (read, the whole system) against
# `likwid-bench -t load_<width> -w S0:1GB:N` (N = every CPU of socket 0, 1 GB
# in all), side by side, at each vector width both have: numaprobe's
# `--vector avx512|avx2|sse2|scalar` against likwid's load_avx512, load_avx,
# load_sse and load (equal settings: the same load width). On a one-node
# machine both are every CPU reading its own memory, so the figures must
# agree (target: within 5 %). Prints a
# Markdown table (for doc/commands/peak.md) and the commands it ran. Installs Debian's
# likwid when missing (as bench/vs-likwid.sh does).
#
# numaprobe runs with --pages $PAGES (default 4k): likwid-bench's buffers
# are plain malloc, so they get huge pages only when THP is `always`.
#
# Environment: PAGES (default 4k; thp to see what huge pages add), BUDGET (numaprobe's time budget per step, default 3s), REPEAT
# (runs of each side, alternating, medians compared; default 3), PRIO
# (prefix of both sides' commands, default `nice -n -19` as root).
set -euo pipefail
cd "$(dirname "$0")/.."

BUDGET=${BUDGET:-3s}
PAGES=${PAGES:-4k}
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

np_peak() { # $1: numaprobe's --vector. Parsed after the run: a Python
    # parser started in a pipe would take a CPU from the streaming threads.
    run $NP peak --mix read --system-only --vector "$1" --pages "$PAGES" --size "$PER" --time-budget "$BUDGET" --format json -o target/bench/peak.json
    python3 -c "import json; d=json.load(open('target/bench/peak.json')); print(d['system'][0]['gbs'])"
}
likwid_peak() { # $1: likwid's test; it prints MByte/s (10^6 B/s)
    run likwid-bench -t "$1" -w "S0:1GB:$N" 2>/dev/null | awk '/^MByte\/s:/ {print $2/1000}'
}

echo "| width | numaprobe peak | likwid-bench | ratio | target |"
echo "| :--- | ---: | ---: | ---: | :--- |"
runs=()
for pair in avx512:load_avx512 avx2:load_avx sse2:load_sse scalar:load; do
    w=${pair%%:*} t=${pair##*:}
    case $w in
    avx512) grep -qw avx512f /proc/cpuinfo || continue ;;
    avx2) grep -qw avx2 /proc/cpuinfo || continue ;;
    esac
    a=() b=()
    for _ in $(seq "$REPEAT"); do
        a+=("$(np_peak "$w")")
        b+=("$(likwid_peak "$t")")
    done
    A=$(printf '%s\n' "${a[@]}" | median)
    B=$(printf '%s\n' "${b[@]}" | median)
    R=$(python3 -c "print(f'{$A/$B:.3f}')")
    printf '| %s / %s, %s threads, GB/s | %.2f | %.2f | %s | within 5 %% |\n' "$w" "$t" "$N" "$A" "$B" "$R"
    runs+=("$w: numaprobe ${a[*]}; likwid ${b[*]}")
done
echo
printf 'Runs (GB/s): %s.\n' "$(IFS=';'; echo "${runs[*]}")"
echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $N CPUs, 1-minute load $(cut -d' ' -f1 /proc/loadavg) at end."
echo
echo "Commands:"
echo
awk '!seen[$0]++ { print "    " $0 }' "$CMDLOG"
