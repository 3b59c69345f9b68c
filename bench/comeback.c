/* comeback.c: does a chase that holds its CPU read slower beside busy
 * loops, and for how long after it gets the CPU back? Written to find where
 * numaprobe's latency beside busy loops comes from; prints a table, asserts
 * nothing.
 *
 * One process, one mapping (SIZE_MIB, 2 MiB aligned, MADV_HUGEPAGE, linked
 * into one random cycle as bench/chase.c does), the chase pinned to CPU 0
 * and timed in samples of 1,500 loads (about 0.2 ms) with the wall clock
 * and the thread's CPU time. LOOPS busy-loop processes are started before
 * the mapping and stopped (SIGSTOP) at once; PHASES phases of SECONDS each
 * then alternate quiet (loops stopped) and busy (SIGCONT), so the quiet and
 * busy figures share the mapping and differ only in the loops. A sample in
 * which the thread spent more than 20 us off its CPU marks a comeback and
 * is not counted; the others are binned by the CPU time since the last
 * comeback.
 *
 * Environment: BASHLOOP=1 makes each loop `bash -c 'while :; do :; done'`
 * (the loop the trial and bench/trust use) where it is a C
 * `for (;;)`; LOOPCPU=N pins the loops to CPU N (unpinned by default);
 * BUILDBUSY=1 leaves the loops running while the mapping is built.
 *
 *   cc -O2 -o comeback comeback.c
 *   BASHLOOP=1 ./comeback 1024 6 3 4
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define LINE 64
#define HUGE (2UL << 20)
#define STEPS 1500
#define MAX_LOOPS 64

static uint64_t rng_state = 0x6e756d6170726f62ULL;

static uint64_t splitmix64(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp);
    return v[n / 2];
}

__attribute__((noinline)) static void **chase(void **p, int steps) {
    for (int i = 0; i < steps; i++) p = (void **)*p;
    return p;
}

/* Time since the comeback, in ms: the bins' upper edges. */
static const double EDGES[] = {0.25, 0.5, 1, 2, 4, 8, 1e30};
#define BINS (sizeof EDGES / sizeof EDGES[0])

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s SIZE_MIB PHASES SECONDS LOOPS\n", argv[0]);
        return 2;
    }
    size_t size = (size_t)strtoull(argv[1], NULL, 10) << 20;
    int phases = atoi(argv[2]), loops = atoi(argv[4]);
    double seconds = atof(argv[3]);
    if (size == 0 || phases < 2 || seconds <= 0 || loops < 1 || loops > MAX_LOOPS) {
        fprintf(stderr, "%s: SIZE_MIB > 0, PHASES >= 2, SECONDS > 0, LOOPS 1-%d\n", argv[0],
                MAX_LOOPS);
        return 2;
    }
    pid_t pid[MAX_LOOPS];
    for (int i = 0; i < loops; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            /* A loop must not outlive the measurement. */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getenv("LOOPCPU")) {
                cpu_set_t c;
                CPU_ZERO(&c);
                CPU_SET(atoi(getenv("LOOPCPU")), &c);
                sched_setaffinity(0, sizeof c, &c);
            }
            if (getenv("BASHLOOP"))
                execl("/bin/bash", "bash", "-c", "while :; do :; done", (char *)NULL);
            for (;;) __asm__ volatile("");
        }
        if (!getenv("BUILDBUSY")) kill(pid[i], SIGSTOP);
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("pin"); return 1; }

    char *map = mmap(NULL, size + HUGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) { perror("mmap"); return 1; }
    char *buf = (char *)(((uintptr_t)map + HUGE - 1) & ~(HUGE - 1));
    madvise(buf, size, MADV_HUGEPAGE);
    for (size_t off = 0; off < size; off += 4096) buf[off] = 1;
    size_t n = size / LINE;
    uint32_t *perm = malloc(n * sizeof *perm);
    if (!perm) { perror("malloc"); return 1; }
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(((splitmix64() >> 32) * (uint64_t)i) >> 32);
        uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        *(void **)(buf + i * LINE) = buf + (size_t)perm[i] * LINE;
    free(perm);
    void **p = chase((void **)buf, 1 << 22);

    size_t cap = (size_t)(seconds * 1e9 / (STEPS * 20.0)) + 1; /* >= 20 ns a load */
    double *kept = malloc(cap * sizeof *kept), *all_quiet = malloc(cap * phases * sizeof *all_quiet);
    double *bin[BINS];
    size_t nbin[BINS] = {0}, nq = 0;
    for (size_t b = 0; b < BINS; b++) bin[b] = malloc(cap * phases * sizeof(double));

    printf("| phase | condition | samples held | comebacks | median (ns) |\n|---:|---|---:|---:|---:|\n");
    for (int ph = 0; ph < phases; ph++) {
        int busy = ph % 2;
        for (int i = 0; i < loops; i++) kill(pid[i], busy ? SIGCONT : SIGSTOP);
        usleep(200000);
        size_t k = 0, comebacks = 0;
        double since = 1e18, end = ns(CLOCK_MONOTONIC) + seconds * 1e9;
        while (ns(CLOCK_MONOTONIC) < end && k < cap) {
            double w0 = ns(CLOCK_MONOTONIC), c0 = ns(CLOCK_THREAD_CPUTIME_ID);
            p = chase(p, STEPS);
            double w1 = ns(CLOCK_MONOTONIC), c1 = ns(CLOCK_THREAD_CPUTIME_ID);
            if ((w1 - w0) - (c1 - c0) > 20000) { comebacks++; since = 0; continue; }
            since += c1 - c0;
            double v = (w1 - w0) / STEPS;
            kept[k++] = v;
            if (busy) {
                size_t b = 0;
                while (since / 1e6 > EDGES[b]) b++;
                bin[b][nbin[b]++] = v;
            } else {
                all_quiet[nq++] = v;
            }
        }
        printf("| %d | %s | %zu | %zu | %.1f |\n", ph + 1, busy ? "busy" : "quiet", k, comebacks,
               median(kept, k));
        fflush(stdout);
    }
    for (int i = 0; i < loops; i++) kill(pid[i], SIGKILL);
    double q = median(all_quiet, nq);
    printf("\nbusy samples by CPU time since the comeback, against the quiet median %.1f ns:\n\n", q);
    printf("| since the comeback (ms) | samples | median (ns) | vs quiet |\n|---|---:|---:|---:|\n");
    double lo = 0;
    for (size_t b = 0; b < BINS; b++) {
        if (nbin[b]) {
            double m = median(bin[b], nbin[b]);
            if (b == BINS - 1) printf("| %g and more ", lo);
            else printf("| %g-%g ", lo, EDGES[b]);
            printf("| %zu | %.1f | %+.1f %% |\n", nbin[b], m, 100 * (m / q - 1));
        }
        lo = EDGES[b];
    }
    fprintf(stderr, "end %p\n", (void *)p);
    return 0;
}
