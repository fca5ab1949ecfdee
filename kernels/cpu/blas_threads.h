/* Threading policy of the CPU kernels: OpenMP owns the cores (OpenBLAS is kept
 * single-threaded by blas_core.c, so sgemm calls from inside parallel regions never fan out
 * again), and a kernel call only forks a team when it has enough work. */
#ifndef HS_BLAS_THREADS_H
#define HS_BLAS_THREADS_H

#include <cblas.h>

/* Whether a kernel call is worth an OpenMP team: below ~1 ms of work the fork/join (and, on
 * a busy machine, waiting at the join for a descheduled thread) costs more than it saves. */
#define HS_PARALLEL_MIN_FLOPS 3e7
static inline int hs_parallel_worth(double flops) { return flops >= HS_PARALLEL_MIN_FLOPS; }

/* For code that issues sgemm from inside its own parallel regions: makes sure OpenBLAS does
 * not fan out (a no-op while blas_core.c's single-threaded setting holds) and restores the
 * previous thread count afterwards. */
static inline int hs_blas_serial_begin(void) {
    int n = openblas_get_num_threads();
    if (n > 1) openblas_set_num_threads(1);
    return n;
}

static inline void hs_blas_serial_end(int n) {
    if (n > 1) openblas_set_num_threads(n);
}

#endif
