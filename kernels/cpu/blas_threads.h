/* OpenBLAS (pthreads build) does not know about our OpenMP threads: a sgemm issued from
 * inside a parallel region would try to fan out again and fight over the same cores.
 * Kernels that call sgemm on small tiles from every OpenMP thread switch OpenBLAS to one
 * thread for the duration and restore the previous count afterwards. */
#ifndef HS_BLAS_THREADS_H
#define HS_BLAS_THREADS_H

#include <cblas.h>

/* Whether a kernel call is worth an OpenMP team: below ~1 ms of work the fork/join (and, on
 * a busy machine, waiting at the join for a descheduled thread) costs more than it saves. */
#define HS_PARALLEL_MIN_FLOPS 3e7
static inline int hs_parallel_worth(double flops) { return flops >= HS_PARALLEL_MIN_FLOPS; }

static inline int hs_blas_serial_begin(void) {
    int n = openblas_get_num_threads();
    if (n > 1) openblas_set_num_threads(1);
    return n;
}

static inline void hs_blas_serial_end(int n) {
    if (n > 1) openblas_set_num_threads(n);
}

#endif
