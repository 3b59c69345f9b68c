/* A STREAM-like OpenMP kernel for `numaprobe tune`'s tests (built with
 * `gcc -fopenmp` by the test and by the VM rig): three arrays of N doubles,
 * initialised in parallel (first touch by each thread), then ITER rounds of
 * copy, scale, add and triad. Usage: stream [N] [ITER]. It keeps running
 * for a while so numaprobe can sample where its memory is.
 *
 * Test hook: with STREAM_FAIL_IF_UNBOUND set and OMP_PROC_BIND=false (the
 * `none` binding), it prints a message on stderr and exits 3, so the test
 * sees a candidate fail with a known status and stderr. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    int iter = argc > 2 ? atoi(argv[2]) : 10;
    const char *bind = getenv("OMP_PROC_BIND");
    if (getenv("STREAM_FAIL_IF_UNBOUND") && bind && strcmp(bind, "false") == 0) {
        fprintf(stderr, "stream: refusing to run unbound (test hook)\n");
        return 3;
    }
    if (n < 1 || iter < 1) {
        fprintf(stderr, "usage: stream [N>0] [ITER>0]\n");
        return 2;
    }
    /* Arrays aligned to, and sized in, 2 MiB (the x86-64 transparent huge
     * page): an interleaved array then alternates whole huge pages from an
     * aligned start, and a static schedule splits it at page boundaries, so
     * the VM check can expect an even split without a huge page's slack. */
    size_t align = 2 << 20, bytes = (n * sizeof(double) + align - 1) / align * align;
    double *a = aligned_alloc(align, bytes), *b = aligned_alloc(align, bytes),
           *c = aligned_alloc(align, bytes);
    if (!a || !b || !c) {
        fprintf(stderr, "stream: out of memory\n");
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.0;
    }
    double t0 = omp_get_wtime();
    for (int k = 0; k < iter; k++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) c[i] = a[i];
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) b[i] = 3.0 * c[i];
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
    }
    double t = omp_get_wtime() - t0;
    /* 10 arrays of n doubles move per iteration (2+2+3+3). */
    printf("threads %d n %ld iter %d time %.3f s bandwidth %.1f MB/s check %g\n",
           omp_get_max_threads(), n, iter, t, 10.0 * 8 * n * iter / t / 1e6, a[n / 2]);
    return 0;
}
