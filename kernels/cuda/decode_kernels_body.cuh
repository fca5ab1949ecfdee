/* The kernel bodies of incremental decoding (decode_kernels.cu launches them): one new token
 * against a KV cache or a recurrent state. Plain CUDA C++ with no launch syntax, so that
 * tests/gpu/decode_emu.cpp runs the same text on the CPU (threads as coroutines, shuffles and
 * barriers emulated) against double-precision references of the contract.
 * The arithmetic mirrors the whole-sequence kernels the decoder must agree with
 * (elementwise.cu's rope and conv, linattn.cu's recurrences and windowed walk, attention.cu's
 * q scaling), so a decoded token sees the numbers the full forward would give. */
#ifndef HS_DECODE_KERNELS_BODY_CUH
#define HS_DECODE_KERNELS_BODY_CUH

#include "kernels.cuh"

#include <math.h>

#define DEC_PER_LANE (CU_MAX_HEAD_DIM / 32) /* head-dim entries per lane, at most */
#define DEC_ATT_WARPS 4
#define DEC_ATT_MAX_SPLITS 128              /* key ranges of one head scored in parallel */
#define DEC_ATT_MIN_LEN 64                  /* keys per range, at least */

__device__ static float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* A decode step's projection, out[o] (+)= sum_i in[i] w[o, i] for one input row: one warp per
 * output row of w, 16-byte loads, fp32 sums (bf16 products are exact in fp32, so only the
 * summation order differs from the GEMM of the whole-sequence forward). At one row a GEMM
 * launch is sized for matrices; this reads the weights once. in_dim % 8 == 0, w and in
 * 16-byte aligned (the launcher checks). */
#define DEC_GEMV_WARPS 8
struct alignas(16) dec_bf16x8 { __nv_bfloat16 v[8]; };

__global__ static void __launch_bounds__(DEC_GEMV_WARPS * 32)
dec_gemv_kernel(float *out, const __nv_bfloat16 *in, const __nv_bfloat16 *w, int in_dim, int out_dim, int accumulate) {
    const int o = (int)(blockIdx.x * DEC_GEMV_WARPS + (threadIdx.x >> 5)), lane = (int)(threadIdx.x & 31);
    if (o >= out_dim) return;              /* whole warps: o is the warp's */
    const dec_bf16x8 *wr = (const dec_bf16x8 *)(w + (size_t)o * in_dim), *xr = (const dec_bf16x8 *)in;
    float acc = 0.0f;
    for (int i = lane; i < in_dim / 8; i += 32) {
        const dec_bf16x8 a = wr[i], b = xr[i];
        #pragma unroll
        for (int j = 0; j < 8; j++) acc += __bfloat162float(a.v[j]) * __bfloat162float(b.v[j]);
    }
    acc = warp_sum(acc);
    if (lane == 0) out[o] = accumulate ? out[o] + acc : acc;
}

__global__ static void embed_token_kernel(float *x, const __nv_bfloat16 *embed, int token, int d) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < d; j += gridDim.x * blockDim.x)
        x[j] = __bfloat162float(embed[(size_t)token * d + j]);
}

/* The angle formula of elementwise.cu's rope_kernel, at one position. */
__global__ static void rope_at_kernel(float *x, int pos, int n_heads, int head_dim, double log_theta) {
    int half = head_dim / 2, n = n_heads * half;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int p = i % half, h = i / half;
        double a = (double)pos * exp(-2.0 * p / head_dim * log_theta);
        float c = (float)cos(a), s = (float)sin(a);
        float *y = x + (size_t)h * head_dim;
        float x0 = y[p], x1 = y[p + half];
        y[p] = x0 * c - x1 * s;
        y[p + half] = x1 * c + x0 * s;
    }
}

/* One thread per channel: it alone reads and shifts its column of the history, so in-place
 * out == x is safe. The taps are summed oldest first, as conv_silu_kernel does. */
__global__ static void conv_step_kernel(float *out, float *hist, const float *x, const float *w, int C,
                                        int K, int silu) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float xc = x[c], acc = xc;
    if (w) {
        acc = 0.0f;
        for (int j = 0; j < K - 1; j++) acc += w[(size_t)c * K + j] * hist[(size_t)j * C + c];
        acc += w[(size_t)c * K + K - 1] * xc;
        for (int j = 0; j + 1 < K - 1; j++) hist[(size_t)j * C + c] = hist[(size_t)(j + 1) * C + c];
        if (K > 1) hist[(size_t)(K - 2) * C + c] = xc;
    }
    out[c] = silu ? acc / (1.0f + expf(-acc)) : acc;
}

/* ---------------------------------------------------------- softmax attention ---- */

/* Block (range b, head h): its warps take every DEC_ATT_WARPS-th key of the range with an
 * online softmax each, then merge into one partial (max, sum, dv weighted values) in part. */
__global__ static void __launch_bounds__(DEC_ATT_WARPS * 32)
dec_attn_part_kernel(float *part, const float *q, const float *kc, const float *vc, int cap, int lo,
                     int n, int len, int H, int Hkv, int dk, int dv, float qscale) {
    __shared__ float sm_m[DEC_ATT_WARPS], sm_l[DEC_ATT_WARPS];
    __shared__ float sm_acc[DEC_ATT_WARPS][CU_MAX_HEAD_DIM];
    const int h = blockIdx.y, b = blockIdx.x, kvh = h / (H / Hkv);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const size_t kld = (size_t)Hkv * dk, vld = (size_t)Hkv * dv;
    float qr[DEC_PER_LANE], acc[DEC_PER_LANE];
    #pragma unroll
    for (int u = 0; u < DEC_PER_LANE; u++) {
        int i = lane + 32 * u;
        qr[u] = i < dk ? q[(size_t)h * dk + i] * qscale : 0.0f;
        acc[u] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    const int i1 = min(n, (b + 1) * len);
    for (int i = b * len + warp; i < i1; i += DEC_ATT_WARPS) {
        const size_t slot = (size_t)((lo + i) % cap);
        const float *kr = kc + slot * kld + (size_t)kvh * dk;
        float d = 0.0f;
        #pragma unroll
        for (int u = 0; u < DEC_PER_LANE; u++) {
            int c = lane + 32 * u;
            if (c < dk) d += qr[u] * kr[c];
        }
        d = warp_sum(d);
        const float mn = fmaxf(m, d), corr = expf(m - mn), p = expf(d - mn);
        l = l * corr + p;
        m = mn;
        const float *vr = vc + slot * vld + (size_t)kvh * dv;
        #pragma unroll
        for (int u = 0; u < DEC_PER_LANE; u++) {
            int e = lane + 32 * u;
            if (e < dv) acc[u] = acc[u] * corr + p * vr[e];
        }
    }
    if (lane == 0) { sm_m[warp] = m; sm_l[warp] = l; }
    #pragma unroll
    for (int u = 0; u < DEC_PER_LANE; u++) {
        int e = lane + 32 * u;
        if (e < dv) sm_acc[warp][e] = acc[u];
    }
    __syncthreads();
    float M = -INFINITY;
    for (int w = 0; w < DEC_ATT_WARPS; w++) M = fmaxf(M, sm_m[w]);
    float *out = part + ((size_t)h * gridDim.x + b) * ((size_t)dv + 2);
    for (int e = threadIdx.x; e < dv; e += blockDim.x) {
        float s = 0.0f;
        for (int w = 0; w < DEC_ATT_WARPS; w++)
            if (sm_m[w] > -INFINITY) s += sm_acc[w][e] * expf(sm_m[w] - M);
        out[2 + e] = s;
    }
    if (threadIdx.x == 0) {
        float L = 0.0f;
        for (int w = 0; w < DEC_ATT_WARPS; w++)
            if (sm_m[w] > -INFINITY) L += sm_l[w] * expf(sm_m[w] - M);
        out[0] = M;
        out[1] = L;
    }
}

/* One block per head: the key ranges' partials merged into the head's output. */
__global__ static void dec_attn_merge_kernel(float *o, const float *part, int splits, int dv) {
    const int h = blockIdx.x;
    const float *ph = part + (size_t)h * splits * ((size_t)dv + 2);
    float M = -INFINITY;
    for (int b = 0; b < splits; b++) M = fmaxf(M, ph[(size_t)b * (dv + 2)]);
    float L = 0.0f;
    for (int b = 0; b < splits; b++) {
        const float mb = ph[(size_t)b * (dv + 2)];
        if (mb > -INFINITY) L += ph[(size_t)b * (dv + 2) + 1] * expf(mb - M);
    }
    const float inv = L > 0.0f ? 1.0f / L : 0.0f;
    for (int e = threadIdx.x; e < dv; e += blockDim.x) {
        float s = 0.0f;
        for (int b = 0; b < splits; b++) {
            const float mb = ph[(size_t)b * (dv + 2)];
            if (mb > -INFINITY) s += ph[(size_t)b * (dv + 2) + 2 + e] * expf(mb - M);
        }
        o[(size_t)h * dv + e] = s * inv;
    }
}

/* ----------------------------------------------------------- linear attention ---- */

/* One time step of a gla/gdn head as a lane holds it: its rows i = lane + 32u of k and of the
 * gla decay exp(gk) (1 past dk), and the scalars. Loaded a step ahead of its use, so the
 * sequential loops below wait on memory once, not once per step. */
struct la_row {
    float k[DEC_PER_LANE], a[DEC_PER_LANE], v[DEC_PER_LANE];
    float beta, alpha;
};

/* Row t (k, gates; v channel j only when j >= 0, else the lane's v channels) of head h. */
__device__ static void la_load(la_row *r, const float *k, const float *v, const float *gk, const float *beta,
                               const float *log_alpha, size_t t, int H, int h, int dk, int dv, int j, int lane) {
    const size_t kld = (size_t)H * dk, vld = (size_t)H * dv;
    const float *kr = k + t * kld + (size_t)h * dk, *vr = v + t * vld + (size_t)h * dv;
    #pragma unroll
    for (int u = 0; u < DEC_PER_LANE; u++) {
        int i = lane + 32 * u;
        r->k[u] = i < dk ? kr[i] : 0.0f;
        r->v[u] = j >= 0 ? (u == 0 ? vr[j] : 0.0f) : i < dv ? vr[i] : 0.0f;
    }
    if (beta) {
        r->beta = beta[t * H + h];
        r->alpha = expf(log_alpha[t * H + h]);
    } else {
        const float *gr = gk + t * kld + (size_t)h * dk;
        #pragma unroll
        for (int u = 0; u < DEC_PER_LANE; u++) {
            int i = lane + 32 * u;
            r->a[u] = i < dk ? expf(gr[i]) : 1.0f;
        }
    }
}

/* One warp per (head h, value channel j): lane holds rows i = lane + 32u of the state column
 * S[h][:, j], stored contiguously at S + (h*dv + j)*dk. The update is linattn.cu's scan:
 * gla s = exp(gk) s + k v_j; gdn s = alpha s + k beta (v_j - alpha k.s). */
__global__ static void la_run_kernel(float *S, float *out, const float *q, const float *k, const float *v,
                                     const float *gk, const float *beta, const float *log_alpha, int T,
                                     int H, int dk, int dv, int load) {
    const long wid = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (wid >= (long)H * dv) return;
    const int h = (int)(wid / dv), j = (int)(wid % dv);
    const size_t kld = (size_t)H * dk, vld = (size_t)H * dv;
    const float scale = 1.0f / sqrtf((float)dk);
    float *col = S + ((size_t)h * dv + j) * dk;
    float s[DEC_PER_LANE];
    #pragma unroll
    for (int u = 0; u < DEC_PER_LANE; u++) {
        int i = lane + 32 * u;
        s[u] = load && i < dk ? col[i] : 0.0f;
    }
    la_row cur, nxt;
    if (T > 0) la_load(&cur, k, v, gk, beta, log_alpha, 0, H, h, dk, dv, j, lane);
    nxt = cur;
    for (int t = 0; t < T; t++) {
        if (t + 1 < T) la_load(&nxt, k, v, gk, beta, log_alpha, (size_t)t + 1, H, h, dk, dv, j, lane);
        const float vj = cur.v[0];
        if (beta) {
            float kv = 0.0f;
            #pragma unroll
            for (int u = 0; u < DEC_PER_LANE; u++) kv += cur.k[u] * s[u];
            kv = warp_sum(kv);
            const float w = cur.beta * (vj - cur.alpha * kv);
            #pragma unroll
            for (int u = 0; u < DEC_PER_LANE; u++) s[u] = cur.alpha * s[u] + cur.k[u] * w;
        } else {
            #pragma unroll
            for (int u = 0; u < DEC_PER_LANE; u++) s[u] = cur.a[u] * s[u] + cur.k[u] * vj;
        }
        if (out) {
            const float *qr = q + (size_t)t * kld + (size_t)h * dk;
            float acc = 0.0f;
            #pragma unroll
            for (int u = 0; u < DEC_PER_LANE; u++) {
                int i = lane + 32 * u;
                if (i < dk) acc += qr[i] * scale * s[u];
            }
            acc = warp_sum(acc);
            if (lane == 0) out[(size_t)t * vld + (size_t)h * dv + j] = acc;
        }
        cur = nxt;
    }
    #pragma unroll
    for (int u = 0; u < DEC_PER_LANE; u++) {
        int i = lane + 32 * u;
        if (i < dk) col[i] = s[u];
    }
}

/* One warp per head: linattn.cu's window_kernel for the single query t, over history rings
 * whose row for position s sits in slot s % cap (read as row `slot` of a [cap, ...] tensor). */
__global__ static void la_window_step_kernel(float *out, const float *q, const float *hk, const float *hv,
                                             const float *hg, const float *hbeta, const float *hla,
                                             int cap, int t, int lo, int H, int dk, int dv) {
    const long wid = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (wid >= H) return;
    const int h = (int)wid;
    const float scale = 1.0f / sqrtf((float)dk);
    float x[DEC_PER_LANE], acc[DEC_PER_LANE];
    #pragma unroll
    for (int u = 0; u < DEC_PER_LANE; u++) {
        int i = lane + 32 * u;
        x[u] = i < dk ? q[(size_t)h * dk + i] * scale : 0.0f;
        acc[u] = 0.0f;
    }
    size_t slot = (size_t)(t % cap);
    la_row cur, nxt;
    la_load(&cur, hk, hv, hg, hbeta, hla, slot, H, h, dk, dv, -1, lane);
    nxt = cur;
    for (int s = t; s >= lo; s--) {
        const size_t prev = slot ? slot - 1 : (size_t)cap - 1;
        if (s > lo) la_load(&nxt, hk, hv, hg, hbeta, hla, prev, H, h, dk, dv, -1, lane);
        float d = 0.0f;
        #pragma unroll
        for (int u = 0; u < DEC_PER_LANE; u++) d += x[u] * cur.k[u];
        d = warp_sum(d);
        float c;
        if (hbeta) {
            c = cur.beta * d;
            #pragma unroll
            for (int u = 0; u < DEC_PER_LANE; u++) x[u] = cur.alpha * (x[u] - c * cur.k[u]);
        } else {
            c = d;
            #pragma unroll
            for (int u = 0; u < DEC_PER_LANE; u++) x[u] *= cur.a[u];
        }
        #pragma unroll
        for (int u = 0; u < DEC_PER_LANE; u++) acc[u] += c * cur.v[u];
        slot = prev;
        cur = nxt;
    }
    #pragma unroll
    for (int u = 0; u < DEC_PER_LANE; u++) {
        int e = lane + 32 * u;
        if (e < dv) out[(size_t)h * dv + e] = acc[u];
    }
}

#endif
