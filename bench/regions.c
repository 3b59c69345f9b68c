/* regions.c: does a buffer's latency depend on where its pages landed?
 * Written for doc/footprint-and-trust.md, "What makes some runs slower".
 *
 * Maps SIZE MiB with THP (as `numaprobe latency` does), then, slice by
 * slice of REGION MiB, a random chase confined to that slice (the median
 * of 9 samples of 20000 loads), then one random chase over the whole
 * buffer (9 samples of 200000 loads). Prints the slices' latencies, the
 * whole chase's, and the mean of the slices. Each run maps new memory, so
 * runs differ in the physical (and, in a VM, the host's) pages behind it.
 *
 *   cc -O2 -o regions regions.c && ./regions SIZE_MIB REGION_MIB CPU */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sched.h>
static uint64_t st = 88172645463325252ULL;
static uint64_t rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return st; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC_RAW, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmpd(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
static void link(char *b, size_t bytes, uint32_t *perm) {
    size_t n = bytes / 64;
    for (size_t i = 0; i < n; i++) perm[i] = i;
    for (size_t i = n - 1; i > 0; i--) { size_t j = rnd() % i; uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
    for (size_t i = 0; i < n; i++) *(void **)(b + i * 64) = b + (size_t)perm[i] * 64;
}
static double time_chase(void **q, int steps, void ***end) {
    double t[9];
    for (int k = 0; k < 100000; k++) q = *q;
    for (int s = 0; s < 9; s++) { double t0 = now(); for (int k = 0; k < steps; k++) q = *q; t[s] = (now() - t0) / steps; }
    qsort(t, 9, sizeof t[0], cmpd); *end = q; return t[4];
}
int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s SIZE_MIB REGION_MIB CPU\n", argv[0]); return 2; }
    size_t sz = (size_t)atol(argv[1]) << 20, R = (size_t)atol(argv[2]) << 20, H = 2 << 20;
    cpu_set_t s; CPU_ZERO(&s); CPU_SET(atoi(argv[3]), &s); sched_setaffinity(0, sizeof s, &s);
    char *m = mmap(0, sz + H, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *p = (char *)(((uintptr_t)m + H - 1) & ~(H - 1));
    madvise(p, sz, MADV_HUGEPAGE); memset(p, 1, sz);
    uint32_t *perm = malloc(sz / 64 * sizeof *perm);
    double sum = 0; void **end;
    printf("slices");
    for (size_t r = 0; r < sz / R; r++) {
        link(p + r * R, R, perm);
        double v = time_chase((void **)(p + r * R), 20000, &end);
        sum += v; printf(" %.0f", v);
    }
    link(p, sz, perm);
    double whole = time_chase((void **)p, 200000, &end);
    printf("\nwhole %.1f mean_of_slices %.1f %p\n", whole, sum / (sz / R), (void *)end);
    return 0;
}
