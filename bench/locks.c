/* locks.c: a plain C lock and atomic contention run, the reference
 * `numaprobe c2c --locks` is compared with (bench/locks). Written for this
 * comparison only.
 *
 * Same method as numaprobe, nothing more: THREADS threads pinned to CPUs
 * 0..THREADS-1 (or the CPUs given), one shared 64-byte aligned counter (and,
 * for the spin lock, a lock word on the same line). Each sample: all threads
 * leave a barrier, the main thread waits until all are inside, sleeps SLICE
 * ms, sets a stop flag; each thread does batches of 32 operations until it
 * sees the flag. ops/s = all operations / (last end - first start), with
 * CLOCK_MONOTONIC_RAW. One warm-up sample, then SAMPLES; the counter is
 * checked against the operations counted. Prints the median Mops/s and the
 * ns per operation of one thread (threads / rate).
 *
 * atomic_add: __atomic_fetch_add(SEQ_CST) (x86-64: lock xadd; arm64 with
 * -march=armv8.1-a: ldaddal). spin_lock: test-and-test-and-set with
 * __atomic_exchange_n(ACQUIRE), a plain increment, a release store.
 *
 *   cc -O2 -pthread -o locks locks.c
 *   ./locks add|lock THREADS [SLICE_MS] [SAMPLES] [CPU...]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 32
#if defined(__x86_64__)
#define RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define RELAX() __asm__ volatile("isb" ::: "memory")
#else
#define RELAX() ((void)0)
#endif
#define MAXT 256

static struct {
    _Alignas(128) volatile uint32_t lock;
    uint64_t counter;
} line;
static _Alignas(128) volatile int stop;
static _Alignas(128) volatile int running;
static _Alignas(128) volatile int quit;
static pthread_barrier_t start_b, end_b;
static int op_lock;
static int cpus[MAXT];
static uint64_t done[MAXT];
static uint64_t t0[MAXT], t1[MAXT];

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg) {
    int i = (int)(intptr_t)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus[i], &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "cannot pin to CPU %d\n", cpus[i]);
        exit(1);
    }
    for (;;) {
        pthread_barrier_wait(&start_b);
        if (quit)
            return NULL;
        __atomic_fetch_add(&running, 1, __ATOMIC_SEQ_CST);
        uint64_t n = 0, s = now_ns();
        do {
            for (int k = 0; k < BATCH; k++) {
                if (op_lock) {
                    for (;;) {
                        while (__atomic_load_n(&line.lock, __ATOMIC_RELAXED))
                            RELAX();
                        if (__atomic_exchange_n(&line.lock, 1, __ATOMIC_ACQUIRE) == 0)
                            break;
                    }
                    uint64_t v = __atomic_load_n(&line.counter, __ATOMIC_RELAXED);
                    __atomic_store_n(&line.counter, v + 1, __ATOMIC_RELAXED);
                    __atomic_store_n(&line.lock, 0, __ATOMIC_RELEASE);
                } else {
                    __atomic_fetch_add(&line.counter, 1, __ATOMIC_SEQ_CST);
                }
            }
            n += BATCH;
        } while (!__atomic_load_n(&stop, __ATOMIC_RELAXED));
        t0[i] = s;
        t1[i] = now_ns();
        done[i] = n;
        pthread_barrier_wait(&end_b);
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s add|lock THREADS [SLICE_MS] [SAMPLES] [CPU...]\n", argv[0]);
        return 2;
    }
    op_lock = strcmp(argv[1], "lock") == 0;
    int n = atoi(argv[2]);
    double slice_ms = argc > 3 ? atof(argv[3]) : 20.0;
    int samples = argc > 4 ? atoi(argv[4]) : 10;
    if (n < 1 || n > MAXT || samples < 1 || samples > 10000) {
        fprintf(stderr, "bad THREADS or SAMPLES\n");
        return 2;
    }
    for (int i = 0; i < n; i++)
        cpus[i] = argc > 5 + i ? atoi(argv[5 + i]) : i;
    pthread_barrier_init(&start_b, NULL, n + 1);
    pthread_barrier_init(&end_b, NULL, n + 1);
    pthread_t th[MAXT];
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    double rates[10001];
    struct timespec sl = {(time_t)(slice_ms / 1000), (long)((slice_ms - 1000 * (long)(slice_ms / 1000)) * 1e6)};
    for (int s = -1; s < samples; s++) {
        line.counter = 0;
        line.lock = 0;
        stop = 0;
        running = 0;
        pthread_barrier_wait(&start_b);
        while (__atomic_load_n(&running, __ATOMIC_SEQ_CST) < n)
            sched_yield();
        nanosleep(&sl, NULL);
        __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
        pthread_barrier_wait(&end_b);
        uint64_t total = 0, first = UINT64_MAX, last = 0;
        for (int i = 0; i < n; i++) {
            total += done[i];
            if (t0[i] < first) first = t0[i];
            if (t1[i] > last) last = t1[i];
        }
        if (line.counter != total) {
            fprintf(stderr, "lost updates: counter %llu, operations %llu\n",
                    (unsigned long long)line.counter, (unsigned long long)total);
            return 1;
        }
        if (s >= 0)
            rates[s] = (double)total / (double)(last - first) * 1e9;
    }
    quit = 1;
    pthread_barrier_wait(&start_b);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    qsort(rates, samples, sizeof rates[0], cmp);
    double med = samples % 2 ? rates[samples / 2] : (rates[samples / 2 - 1] + rates[samples / 2]) / 2;
    printf("%s threads=%d Mops/s=%.2f ns/op=%.2f\n", op_lock ? "spin_lock" : "atomic_add", n,
           med / 1e6, n / med * 1e9);
    return 0;
}
