/* The SWLA visibility rule of the chunked linear-attention kernels, shared by the CUDA kernels
 * (linattn_chunk*.cu) and the CPU test of their chunk schedule (tests/test_linattn_chunk.c),
 * so the test checks the very functions the kernels run. Plain C, no CUDA headers. */
#ifndef HS_LINATTN_WINDOW_H
#define HS_LINATTN_WINDOW_H

#ifdef __CUDACC__
#define LA_HD __host__ __device__ __forceinline__
#else
#define LA_HD static inline
#endif

#define LA_CHUNK 64   /* tokens per chunk (CU_LA_CHUNK) */
#define LA_SWLA_EXACT 1
#define LA_SWLA_OVERLAP 2

/* First position query t may see under the SWLA knob (0 when off), as la_visible_lo in
 * kernels/cpu/linattn.c: exact (t - W, t]; overlap: the restart point max(0, (t/S+1)S - W). */
LA_HD long la_chunk_lo(long t, int swla, int W, int S) {
    long lo = 0;
    if (swla == LA_SWLA_EXACT) lo = t - W + 1;
    else if (swla == LA_SWLA_OVERLAP) lo = (t / S + 1) * S - W;
    return lo > 0 ? lo : 0;
}

/* Chunk n's carried state holds chunks [la_chunk_fz(n), n-1]: every one of them is visible in
 * full to every query of chunk n (the visible start never decreases with t, so the last query
 * binds). Chunks [la_chunk_pd(n), la_chunk_fz(n) - 1] are cut by some query's window edge and
 * are computed directly with a mask (at most two for exact windows). */
LA_HD int la_chunk_fz(int n, int T, int swla, int W, int S) {
    long t1 = (long)(n + 1) * LA_CHUNK < (long)T ? (long)(n + 1) * LA_CHUNK - 1 : (long)T - 1;
    long fs = (la_chunk_lo(t1, swla, W, S) + LA_CHUNK - 1) / LA_CHUNK;
    return fs < n ? (int)fs : n;
}
LA_HD int la_chunk_pd(int n, int swla, int W, int S) {
    return (int)(la_chunk_lo((long)n * LA_CHUNK, swla, W, S) / LA_CHUNK);
}

/* Chunk-aligned overlap SWLA by restarted passes (gdn): block z of sc chunks (stride S = sc
 * chunks, window W = wc chunks) owns chunks [*own, *end) of the N; its recurrence restarts
 * from zero at chunk *beg = max(0, (z+1) sc - wc), the spec's restart point. */
LA_HD void la_overlap_pass(int z, int N, int sc, int wc, int *beg, int *own, int *end) {
    *own = z * sc;
    *end = *own + sc < N ? *own + sc : N;
    *beg = (z + 1) * sc - wc > 0 ? (z + 1) * sc - wc : 0;
}

#endif
