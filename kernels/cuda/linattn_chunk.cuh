/* Chunked linear attention on the GPU (gla and gdn, model-spec sections 4 and 6), the
 * tensor-core counterpart of the full recurrences in linattn.cu, and the default since they
 * passed the device checks (docs/bench-notes.md, session 3); HS_CUDA_LINATTN=recurrent selects
 * the recurrences (cu_la_chunk_enabled). Same tensors and layouts as the recurrences: q, k, gk [T, H*dk], v, out [T, H*dv],
 * beta, log_alpha [T, H]; q, k already L2-normalised for gdn.
 *
 * Matmuls run as TF32 WMMA (m16n16k8, fp32 accumulation): inputs keep 10 mantissa bits
 * instead of bf16's 7, every product is accumulated in fp32, and the recurrent state (and
 * every decay factor and its exponent) stays fp32 or wider. The gdn state pass, where tf32
 * rounding of the state would compound from chunk to chunk, splits the state into two tf32
 * halves (hi + lo) so the state products keep close to fp32 accuracy.
 *
 * Every launcher needs a scratch area of cu_la_chunk_work_bytes(T, H, dk, dv) bytes (device
 * memory, 256-byte aligned), which the engine keeps in its workspace arena. */
#ifndef HS_LINATTN_CHUNK_CUH
#define HS_LINATTN_CHUNK_CUH

#include <cuda_runtime.h>
#include <stddef.h>

#define CU_LA_CHUNK 64        /* tokens per chunk */
#define CU_LA_CHUNK_MAXD 128  /* largest dk, dv the chunk kernels take (multiples of 16) */

/* 1 when HS_CUDA_LINATTN=chunk (read once). */
int cu_la_chunk_enabled(void);
/* 1 when the chunk kernels take these head dims. */
int cu_la_chunk_fits(int dk, int dv);
/* Scratch bytes either chunk launcher needs for T tokens (0 when the dims do not fit). */
size_t cu_la_chunk_work_bytes(int T, int H, int dk, int dv);

/* Gated linear attention by chunks. swla: CU_SWLA_OFF, CU_SWLA_EXACT (window W: query t sees
 * s in (t-W, t]) or CU_SWLA_OVERLAP (window W, stride S: query t sees s >= max(0, (t/S+1)S-W)),
 * all exact to the spec's definitions (no approximation in the window edge). */
cudaError_t cu_gla_chunk(float *out, const float *q, const float *k, const float *v, const float *gk,
                         int T, int H, int dk, int dv, int swla, int W, int S, void *work,
                         size_t work_bytes, cudaStream_t st);
/* Gated delta rule by chunks (WY/UT form). SWLA, when W (and S) are multiples of the chunk:
 * overlap: each block of S tokens runs its own state pass from its restart point, all blocks
 * in parallel (W/S times the plain state pass's work); exact (W >= 2 chunks): blocks of
 * B = W/64 - 1 chunks, a prefix pass (state and transition product, restarted every block)
 * and a suffix pass per block, the window of each chunk = a suffix of the block before and a
 * prefix of its own, plus the one chunk the window edge cuts (see linattn_chunk_gdn_body.cuh).
 * Other SWLA settings are not taken (cu_gdn_chunk_supports says which). */
int cu_gdn_chunk_supports(int T, int swla, int W, int S);
cudaError_t cu_gdn_chunk(float *out, const float *q, const float *k, const float *v, const float *beta,
                         const float *log_alpha, int T, int H, int dk, int dv, int swla, int W, int S,
                         void *work, size_t work_bytes, cudaStream_t st);

#endif
