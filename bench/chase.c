/* chase.c: a plain C pointer chase, the reference numaprobe's latency is
 * compared with (bench/vs-likwid.sh). Written for this comparison only.
 *
 * Same method as `numaprobe latency` defaults, nothing more: pin to one CPU,
 * map SIZE bytes (2 MiB aligned, MADV_HUGEPAGE unless --4k), touch every
 * page, link the 64-byte lines into one random cycle (Sattolo), then time
 * STEPS dependent loads per sample with CLOCK_MONOTONIC_RAW, SAMPLES times
 * after one warm-up sample, and print the median, min and max in ns/load.
 *
 * --held times short samples (4,096 loads) and sets aside every sample in
 * which the thread spent more than 2 % of the wall time off its CPU (wall
 * time less CLOCK_THREAD_CPUTIME_ID), the rule numaprobe keeps its samples
 * by, without its refill after a switch or its sample shortening: what a
 * plain program that asks the kernel would print on a busy machine. It
 * keeps SAMPLES x 128 samples (or stops after 60 s of wall time).
 *
 *   cc -O2 -o chase chase.c
 *   ./chase [--4k] [--held] SIZE_MIB CPU [SAMPLES]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LINE 64
#define HUGE (2UL << 20)

static uint64_t rng_state = 0x6e756d6170726f62ULL;

static uint64_t splitmix64(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Not inlined, and the final pointer is returned and printed, so no load can
 * be dropped. */
__attribute__((noinline)) static void **chase(void **p, uint64_t steps) {
    for (uint64_t i = 0; i < steps / 8; i++) {
        p = (void **)*p; p = (void **)*p; p = (void **)*p; p = (void **)*p;
        p = (void **)*p; p = (void **)*p; p = (void **)*p; p = (void **)*p;
    }
    return p;
}

int main(int argc, char **argv) {
    int small = 0, held = 0, a = 1;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--4k") == 0) small = 1;
        else if (strcmp(argv[a], "--held") == 0) held = 1;
        else { fprintf(stderr, "%s: unknown option %s\n", argv[0], argv[a]); return 2; }
    }
    if (argc - a < 2) {
        fprintf(stderr, "usage: %s [--4k] [--held] SIZE_MIB CPU [SAMPLES]\n", argv[0]);
        return 2;
    }
    size_t size = (size_t)strtoull(argv[a], NULL, 10) << 20;
    int cpu = atoi(argv[a + 1]);
    int samples = argc - a > 2 ? atoi(argv[a + 2]) : 21;
    if (samples < 1 || samples > 1000) samples = 21;

    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0 || sched_getcpu() != cpu) {
        perror("pin");
        return 1;
    }
    char *map = mmap(NULL, size + HUGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) { perror("mmap"); return 1; }
    char *buf = (char *)(((uintptr_t)map + HUGE - 1) & ~(HUGE - 1));
    madvise(buf, size, small ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
    for (size_t off = 0; off < size; off += 4096) buf[off] = 1;

    size_t n = size / LINE;
    uint32_t *perm = malloc(n * sizeof *perm);
    if (!perm) { perror("malloc"); return 1; }
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) { /* Sattolo: j < i */
        size_t j = (size_t)(((splitmix64() >> 32) * (uint64_t)i) >> 32);
        uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        *(void **)(buf + i * LINE) = buf + (size_t)perm[i] * LINE;
    free(perm);

    /* About 50 ms per sample at 100 ns per load. */
    uint64_t steps = 1 << 19;
    void **p = (void **)buf;
    p = chase(p, steps); /* warm-up */
    if (held) {
        /* A sample of 4,096 loads lasts well under a scheduler's slice, so
         * a busy CPU still leaves most samples whole. */
        const uint64_t short_steps = 4096;
        int want = samples * 128, kept = 0, aside = 0;
        double *k = malloc(want * sizeof *k);
        double stop = now_ns() + 60e9;
        while (kept < want && now_ns() < stop) {
            double w0 = now_ns(), c0 = thread_cpu_ns();
            p = chase(p, short_steps);
            double w1 = now_ns(), c1 = thread_cpu_ns();
            if ((w1 - w0) - (c1 - c0) > 0.02 * (w1 - w0)) aside++;
            else k[kept++] = (w1 - w0) / short_steps;
        }
        if (kept == 0) { fprintf(stderr, "no sample held its CPU\n"); return 1; }
        qsort(k, kept, sizeof *k, cmp);
        printf("median_ns %.2f min_ns %.2f max_ns %.2f samples %d set_aside %d end %p\n",
               k[kept / 2], k[0], k[kept - 1], kept, aside, (void *)p);
        return 0;
    }
    double *t = malloc(samples * sizeof *t);
    for (int s = 0; s < samples; s++) {
        double t0 = now_ns();
        p = chase(p, steps);
        t[s] = (now_ns() - t0) / steps;
    }
    qsort(t, samples, sizeof *t, cmp);
    printf("median_ns %.2f min_ns %.2f max_ns %.2f samples %d end %p\n",
           t[samples / 2], t[0], t[samples - 1], samples, (void *)p);
    return 0;
}
