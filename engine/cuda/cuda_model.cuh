/* The model on the GPU: weights in one cudaMalloc arena (bf16 for every matrix, fp32 for
 * norms, gate biases, A_log, dt_bias and conv taps) and a workspace arena sized for the
 * largest T seen so far, so a forward allocates nothing on the device. */
#ifndef HS_CUDA_MODEL_CUH
#define HS_CUDA_MODEL_CUH

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

extern "C" {
#include "cuda_backend.h"
}

typedef __nv_bfloat16 bf16;

typedef struct {
    bf16 *q, *k, *v, *o;           /* [H*dk,d] [Hkv*dk,d] [Hkv*dv,d] [d,H*dv] */
    bf16 *gk0, *gk1, *g, *a, *b;   /* gla gate [r,d] [H*dk,r]; gate proj [H*dv,d]; gdn [H,d] [H,d] */
    float *gk_bias, *g_norm, *A_log, *dt_bias;
    float *q_conv, *k_conv, *v_conv; /* [C, K] */
} cu_mixer_w;

typedef struct {
    float *attn_norm, *mlp_norm;
    bf16 *gate_up;                 /* [2F, d]: gate_proj rows then up_proj rows (one GEMM) */
    bf16 *down;                    /* [d, F] */
    cu_mixer_w mix[2];
} cu_layer_w;

/* Workspace, sized for ws_T tokens. */
typedef struct {
    int T;
    float *x, *hf;                 /* [T,d] residual, normed (fp32) */
    bf16 *hb;                      /* [T,d] normed (GEMM input) */
    float *q, *k, *v, *o, *gk, *g, *tmp; /* [T, width] */
    bf16 *lrb;                     /* [T, r] gla low rank */
    float *beta, *la;              /* [T, Hmax] */
    float *gu;                     /* [T, 2F] */
    bf16 *mb;                      /* [T, F] */
    bf16 *ob;                      /* [T, width] */
    float *row_scale;              /* [T] */
    float *nll;                    /* [T] */
    float *logits;                 /* [logit_rows, V] */
    int logit_rows;
    int32_t *tokens;               /* [T] */
    uint8_t *mask;                 /* [total heads] */
    void *la_work;                 /* chunked gla/gdn scratch (HS_CUDA_LINATTN=chunk), la_work_bytes */
    size_t la_work_bytes;
} cu_workspace;

/* The layer stack captured as a CUDA graph (engine/cuda/forward.cu: layers_forward). key: the
 * forward it replays; seen: the last forward run eagerly (a second one alike is captured). */
typedef struct {
    cudaGraphExec_t exec;
    unsigned char key[64], seen[64];
    int broken;                    /* a capture failed: eager from then on */
} cu_fwd_graph;

/* Called by the forward right after mixer (layer, mixer) ran, with its activations still in the
 * workspace (engine/cuda/decode.cu's prefill fills the decoder's caches from them). Returns 0
 * or -1 with err. A set hook makes the forward launch eagerly (no graph). */
typedef int (*cu_mixer_hook)(void *ctx, int layer, int mixer, int T, char *err, size_t errlen);

struct hs_cuda_model {
    hs_config cfg;
    bf16 *embed, *lm_head;
    float *norm;
    cu_layer_w layers[HS_MAX_LAYERS];
    int mask_off[HS_MAX_LAYERS][2]; /* offset of each mixer's heads in ws.mask */
    int total_heads;
    size_t width, rank, hmax;      /* widest per-token mixer activation, gla rank, most heads */
    void *arena;                   /* weights */
    size_t arena_bytes;
    void *ws_arena;                /* workspace */
    size_t ws_bytes;
    cu_workspace ws;
    cublasHandle_t blas;
    cudaStream_t st;
    cu_fwd_graph graph;
    int device;
    cu_mixer_hook mixer_hook;      /* NULL: none */
    void *mixer_hook_ctx;
};

/* The knobs resolved as the plugin uses them (engine/cuda/forward.cu restates the rules of
 * engine/knobs.c, which the plugin cannot call). */
typedef struct {
    double log_L0;                 /* 0 => no log scaling */
    int swla, swla_window, swla_stride, swa_window, rope_window;
} cu_knobs;

int cu_resolve_knobs(cu_knobs *o, const hs_knobs *k, const hs_config *c, char *err, size_t errlen);
/* Effective softmax window of a mixer: 0 = full causal. */
int cu_mixer_window(const cu_knobs *k, const hs_mixer_config *m);

/* Grows the workspace to hold T tokens (no-op when it already does). */
int cu_workspace_ensure(hs_cuda_model *cm, int T, char *err, size_t errlen);

hs_cuda_model *cu_model_upload(const hs_model *m, char *err, size_t errlen);
void cu_model_free(hs_cuda_model *cm);
int cu_forward(hs_cuda_model *cm, const int32_t *tokens, int T, const hs_knobs *k,
               const hs_forward_opts *opts, char *err, size_t errlen);

/* Incremental decoding (engine/cuda/decode.cu; the semantics of engine/cuda_backend.h). */
hs_cuda_decoder *cu_decoder_new(hs_cuda_model *cm, const hs_knobs *k, int max_tokens, char *err, size_t errlen);
int cu_decoder_prefill(hs_cuda_decoder *d, const int32_t *tokens, int n, float *logits,
                       const hs_forward_opts *opts, char *err, size_t errlen);
int cu_decoder_step(hs_cuda_decoder *d, int32_t token, float *logits, char *err, size_t errlen);
void cu_decoder_free(hs_cuda_decoder *d);

#endif
