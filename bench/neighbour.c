/* neighbour.c: a memory-streaming neighbour for bench/trust: one thread
 * reads and writes a buffer far larger than any cache, for ever, the way a
 * bandwidth-hungry job beside numaprobe would. Written for that bench only.
 *
 *   cc -O2 -o neighbour neighbour.c
 *   ./neighbour [SIZE_MIB]      (default 512; stop it with a signal)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 512;
    size_t n = mib * (1UL << 20) / sizeof(uint64_t);
    uint64_t *a = malloc(n * sizeof(uint64_t));
    if (!a) {
        fprintf(stderr, "neighbour: cannot allocate %zu MiB\n", mib);
        return 1;
    }
    memset(a, 1, n * sizeof(uint64_t));
    volatile uint64_t sink = 0;
    for (;;) {
        uint64_t s = 0;
        for (size_t i = 0; i < n; i += 8) {
            s += a[i];
            a[i] = s;
        }
        sink += s;
    }
    return 0;
}
