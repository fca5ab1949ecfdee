/* Pooled maps (model-spec section 7) of one head straight from its mixer's device tensors:
 * the GPU side of engine/analysis_map.c, with its rules (bins, sampled rows, causal counts,
 * NaN cells). One block pools one row bin at a time: each computed query row's weights
 * (softmax exp(z - max), gla/gdn |c_{t,s}|, the same row walks as head_stats.cu) go to the
 * block's row buffer, then warps fold them into the bin's column sums, maxima and counts.
 * Memory: one row of T floats and 3 x bins_s values per block (at most PM_MAX_BLOCKS blocks),
 * nothing T x T. Every row of a 64K input (exact) is ~T^2/2 dot products of dk for a softmax
 * head; a gdn row is a sequential sweep, which is why long inputs sample rows by default. */
#include "pooled_map_body.cuh"

size_t cu_pooled_map_scratch(int T, int bins_t, int bins_s) {
    return (size_t)pm_blocks(bins_t) * pm_block_bytes(T, bins_s);
}

cudaError_t cu_pooled_map(float *cells, void *scratch, cu_map_geom g, cu_map_head hd, int T, cudaStream_t st) {
    if (g.bins_t < 1 || g.bins_s < 1 || T < 1) return cudaErrorInvalidValue;
    if (hd.kind == CU_MAP_GDN && hd.dk > CU_MAX_HEAD_DIM) return cudaErrorInvalidValue;
    if (hd.kind == CU_MAP_SOFTMAX && (hd.Hkv < 1 || hd.H % hd.Hkv)) return cudaErrorInvalidValue;
    if (hd.swla != CU_SWLA_OFF && hd.S < 1) hd.S = 1;
    size_t smem = hd.kind == CU_MAP_GLA ? pm_gla_smem(hd.dk) : 0;
    pooled_map_kernel<<<pm_blocks(g.bins_t), PM_THREADS, smem, st>>>(cells, (char *)scratch, g, hd, T);
    return cudaGetLastError();
}
