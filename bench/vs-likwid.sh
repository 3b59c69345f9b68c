#!/usr/bin/env bash
# numaprobe against references, side by side, in one run:
#   - read bandwidth, 1 and 2 threads, vs `likwid-bench -t load_avx` (1 GB)
#   - non-temporal write and copy vs `store_mem_avx` and `copy_mem_avx`
#   - idle latency of the random chase over 1 GiB vs bench/chase.c (a plain C
#     pointer chase written for this comparison)
#   - the CV of every cell of `numaprobe latency` and `numaprobe bandwidth`
#     with default settings
# Prints a Markdown table (for doc/benchmarks.md) and the exact commands it ran.
# Installs Debian's likwid (and a C compiler) when missing.
#
# Environment: BUDGET (numaprobe time budget per cell, default 3s), REPEAT
# (runs of each side per comparison, alternating, medians compared; default
# 3), WAIT_QUIET (seconds
# to wait for the 1-minute load average to drop below 0.7 before starting,
# default 300; the machine may be shared), PRIO (prefix of every measuring
# command, default `nice -n -19` as root: on a shared machine the measuring
# threads then get nearly all of their CPU; both sides of every comparison
# run with the same prefix).
set -euo pipefail
cd "$(dirname "$0")/.."

BUDGET=${BUDGET:-3s}
REPEAT=${REPEAT:-3}
WAIT_QUIET=${WAIT_QUIET:-300}
if [ "$(id -u)" -eq 0 ]; then PRIO=${PRIO-nice -n -19}; else PRIO=${PRIO-}; fi

apt_install() {
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
missing=()
command -v likwid-bench >/dev/null 2>&1 || missing+=(likwid)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}" >&2
    apt_install "${missing[@]}"
fi

echo "== building" >&2
cargo build --release -q -p numaprobe
mkdir -p target/bench
cc -O2 -Wall -o target/bench/chase bench/chase.c
NP=target/release/numaprobe
CHASE=target/bench/chase
# numaprobe's latency runs on the first core of node 0; the C chase uses the same CPU.
CPU=$(cut -d, -f1 /sys/devices/system/node/node0/cpulist | cut -d- -f1)

load1() { cut -d' ' -f1 /proc/loadavg; }
quiet() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 0.7 else 1)" "$(load1)"; }
waited=0
while ! quiet && [ "$waited" -lt "$WAIT_QUIET" ]; do
    [ "$waited" -eq 0 ] && echo "== waiting for a quiet machine (load $(load1))" >&2
    sleep 10
    waited=$((waited + 10))
done
LOAD_START=$(load1)

# Commands are logged to a file: most run inside $(...) subshells.
CMDLOG=target/bench/commands.txt
: >"$CMDLOG"
run() { echo "${PRIO:+$PRIO }$*" >>"$CMDLOG"; $PRIO "$@"; }

# Median of numbers on stdin.
median() { python3 -c "import sys,statistics; v=[float(x) for x in sys.stdin.read().split()]; print(statistics.median(v))"; }
# A field of the first cell of a numaprobe JSON document on stdin.
cell() { python3 -c "import sys,json; print(json.load(sys.stdin)['cells'][0]['$1'])"; }

np_bw() { # op threads -> GB/s
    run $NP bandwidth --op "$1" --threads "$2" --cpu-nodes 0 --mem-nodes 0 --size 1GB \
        --time-budget "$BUDGET" --format json | cell median
}
likwid_bw() { # test threads -> GB/s (likwid prints MByte/s, 10^6 B/s)
    run likwid-bench -t "$1" -W "N:1GB:$2" 2>/dev/null | awk '/^MByte\/s:/ {print $2/1000}'
}
np_lat() { # -> ns
    run $NP latency --cpu-nodes 0 --mem-nodes 0 --size 1GiB --time-budget "$BUDGET" --format json | cell median
}
c_lat() { # -> ns
    run $CHASE 1024 "$CPU" 21 | awk '{print $2}'
}

echo "== measuring (load $(load1))" >&2
declare -a ROWS
row() { ROWS+=("$1|$2|$3|$4|$5"); }
ratio() { python3 -c "print(f'{$1/$2:.3f}')"; }

# Each comparison runs both sides REPEAT times, alternating, and compares the
# medians: on a shared machine the load drifts, and alternating gives both
# sides the same share of it.
A=""
B=""
pair() { # "numaprobe function args" "reference function args"
    local a=() b=()
    for _ in $(seq "$REPEAT"); do
        a+=("$($1)")
        b+=("$($2)")
    done
    A=$(printf '%s\n' "${a[@]}" | median)
    B=$(printf '%s\n' "${b[@]}" | median)
}

for t in 1 2; do
    pair "np_bw read $t" "likwid_bw load_avx $t"
    row "read, $t thread(s), GB/s" "$A" "$B (load_avx)" "$(ratio "$A" "$B")" ">= 0.95"
done
for t in 1 2; do
    pair "np_bw write-nt $t" "likwid_bw store_mem_avx $t"
    row "non-temporal write, $t thread(s), GB/s" "$A" "$B (store_mem_avx)" "$(ratio "$A" "$B")" ">= 0.95"
    pair "np_bw copy-nt $t" "likwid_bw copy_mem_avx $t"
    row "non-temporal copy, $t thread(s), GB/s" "$A" "$B (copy_mem_avx)" "$(ratio "$A" "$B")" ">= 0.95"
done
pair "np_lat" "c_lat"
row "idle latency, random chase 1 GiB, ns" "$A" "$B (bench/chase.c)" "$(ratio "$A" "$B")" "within 3 %"

# CV of every default cell (no options but the format).
lat_cv=$(run $NP latency --format json | python3 -c "import sys,json; print(' '.join(f\"{c['cv']*100:.2f}\" for c in json.load(sys.stdin)['cells']))")
bw_cv=$(run $NP bandwidth --format json | python3 -c "import sys,json; print(' '.join(f\"{c['cv']*100:.2f}\" for c in json.load(sys.stdin)['cells']))")
row "CV of default latency cells, %" "$lat_cv" "" "" "< 2"
row "CV of default bandwidth cells, %" "$bw_cv" "" "" "reported"

LOAD_END=$(load1)
echo "| measurement | numaprobe | reference | ratio | target |"
echo "| :--- | ---: | ---: | ---: | :--- |"
for r in "${ROWS[@]}"; do
    IFS='|' read -r m a b q t <<<"$r"
    fmt() { python3 -c "import sys; x=sys.argv[1]; print(f'{float(x):.2f}' if x.replace('.','',1).isdigit() else x)" "$1"; }
    echo "| $m | $(fmt "$a") | ${b:+$(fmt "${b%% *}") ${b#* }} | $q | $t |"
done
echo
echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs;" \
    "vector width $($NP bandwidth --size 8MiB --time-budget 10ms --format json | python3 -c "import sys,json; print(json.load(sys.stdin)['cells'][0]['vector_width'])");" \
    "1-minute load average $LOAD_START at start, $LOAD_END at end."
echo
echo "Commands:"
echo
awk '!seen[$0]++ { print "    " $0 }' "$CMDLOG"
