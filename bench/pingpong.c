/* pingpong.c: a plain C cache-line ping-pong, the reference `numaprobe c2c`
 * is compared with (bench/c2c). Written for this comparison only.
 *
 * Same method as numaprobe's HITM figure, nothing more: two threads pinned
 * to CPU A and CPU B share one 64-bit word alone in a 128-byte aligned
 * block. A writes an odd n, B spins until it sees n and writes n + 1, A
 * spins until it sees n + 1. Plain (relaxed) loads and stores, no pause.
 * A sample times ROUND_TRIPS round trips with CLOCK_MONOTONIC_RAW; after one
 * warm-up sample, SAMPLES samples; prints the median, min and max of
 * round trip / 2 in ns.
 *
 *   cc -O2 -pthread -o pingpong pingpong.c
 *   ./pingpong CPU_A CPU_B [SAMPLES]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUND_TRIPS 64
#define STOP UINT64_MAX

struct slot {
    _Alignas(128) uint64_t v;
    char pad[120];
};

static struct slot line;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0 || sched_getcpu() != cpu) {
        fprintf(stderr, "cannot pin to CPU %d\n", cpu);
        exit(1);
    }
}

static uint64_t load(void) { return __atomic_load_n(&line.v, __ATOMIC_RELAXED); }
static void store(uint64_t v) { __atomic_store_n(&line.v, v, __ATOMIC_RELAXED); }

static void *responder(void *arg) {
    pin(*(int *)arg);
    uint64_t expect = 1;
    for (;;) {
        uint64_t v;
        while ((v = load()) != expect && v != STOP)
            ;
        if (v == STOP)
            return NULL;
        store(expect + 1);
        expect += 2;
    }
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s CPU_A CPU_B [SAMPLES]\n", argv[0]);
        return 2;
    }
    int a = atoi(argv[1]), b = atoi(argv[2]);
    int samples = argc > 3 ? atoi(argv[3]) : 20000;
    double *s = malloc(sizeof(double) * samples);
    pthread_t t;
    pthread_create(&t, NULL, responder, &b);
    pin(a);
    uint64_t n = 0;
    for (int i = -1; i < samples; i++) {
        double t0 = now_ns();
        for (int k = 0; k < ROUND_TRIPS; k++) {
            store(++n);
            while (load() != n + 1)
                ;
            n++;
        }
        double t1 = now_ns();
        if (i >= 0)
            s[i] = (t1 - t0) / (2.0 * ROUND_TRIPS);
    }
    store(STOP);
    pthread_join(t, NULL);
    qsort(s, samples, sizeof(double), cmp);
    printf("median %.2f min %.2f max %.2f ns one way (%d samples of %d round trips)\n",
           s[samples / 2], s[0], s[samples - 1], samples, ROUND_TRIPS);
    return 0;
}
