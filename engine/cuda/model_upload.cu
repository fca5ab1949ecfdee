/* Model upload (one weight arena, converted to bf16 on the host and copied once) and the
 * workspace arena, grown only when a longer input arrives. */
#include "cuda_model.cuh"
#include "check.cuh"
#include "kernels/cuda/kernels.cuh"
#include "kernels/cuda/linattn_chunk.cuh"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_BYTES 256

/* Two passes over the same list of tensors: the first (host == NULL) only sums sizes, the
 * second converts into the host image and hands out device pointers into the arena. */
typedef struct {
    size_t off;
    char *host;
    char *dev;
} packer;

static size_t align_up(size_t n) { return (n + ALIGN_BYTES - 1) / ALIGN_BYTES * ALIGN_BYTES; }

static bf16 *put_bf16(packer *p, const float *src, size_t n) {
    if (!src) return NULL;
    size_t at = p->off;
    p->off = align_up(p->off + n * sizeof(bf16));
    if (!p->host) return NULL;
    bf16 *dst = (bf16 *)(p->host + at);
    for (size_t i = 0; i < n; i++) dst[i] = __float2bfloat16(src[i]);
    return (bf16 *)(p->dev + at);
}

/* a then b contiguously (n values each), one allocation */
static bf16 *put_bf16_pair(packer *p, const float *a, const float *b, size_t n) {
    size_t at = p->off;
    p->off = align_up(p->off + 2 * n * sizeof(bf16));
    if (!p->host) return NULL;
    bf16 *dst = (bf16 *)(p->host + at);
    for (size_t i = 0; i < n; i++) dst[i] = __float2bfloat16(a[i]);
    for (size_t i = 0; i < n; i++) dst[n + i] = __float2bfloat16(b[i]);
    return (bf16 *)(p->dev + at);
}

static float *put_f32(packer *p, const float *src, size_t n) {
    if (!src) return NULL;
    size_t at = p->off;
    p->off = align_up(p->off + n * sizeof(float));
    if (!p->host) return NULL;
    memcpy(p->host + at, src, n * sizeof(float));
    return (float *)(p->dev + at);
}

static void pack_model(packer *p, hs_cuda_model *cm, const hs_model *m) {
    const hs_config *c = &m->cfg;
    size_t d = (size_t)c->hidden_size, F = (size_t)c->intermediate_size, V = (size_t)c->vocab_size;
    cm->embed = put_bf16(p, m->embed, V * d);
    cm->lm_head = m->lm_head == m->embed ? cm->embed : put_bf16(p, m->lm_head, V * d);
    cm->norm = put_f32(p, m->norm, d);
    for (int l = 0; l < c->num_layers; l++) {
        const hs_layer_weights *lw = &m->layers[l];
        cu_layer_w *cl = &cm->layers[l];
        cl->attn_norm = put_f32(p, lw->attn_norm, d);
        cl->mlp_norm = put_f32(p, lw->mlp_norm, d);
        /* gate then up, adjacent: the [2F, d] matrix of one GEMM */
        cl->gate_up = put_bf16_pair(p, lw->gate_proj, lw->up_proj, F * d);
        cl->down = put_bf16(p, lw->down_proj, d * F);
        for (int j = 0; j < c->layers[l].n_mixers; j++) {
            const hs_mixer_config *mc = &c->layers[l].mixers[j];
            const hs_mixer_weights *w = &lw->mix[j];
            cu_mixer_w *cw = &cl->mix[j];
            size_t H = (size_t)mc->num_heads, Hkv = (size_t)(mc->num_kv_heads > 0 ? mc->num_kv_heads : mc->num_heads);
            size_t dk = (size_t)mc->head_k_dim, dv = (size_t)mc->head_v_dim, K = (size_t)mc->conv_size;
            cw->q = put_bf16(p, w->q_proj, H * dk * d);
            cw->k = put_bf16(p, w->k_proj, Hkv * dk * d);
            cw->v = put_bf16(p, w->v_proj, Hkv * dv * d);
            cw->o = put_bf16(p, w->o_proj, d * H * dv);
            if (mc->type == HS_GLA) {
                size_t r = (size_t)mc->gate_low_rank_dim;
                cw->gk0 = put_bf16(p, w->gk_proj0, r * d);
                cw->gk1 = put_bf16(p, w->gk_proj1, H * dk * r);
                cw->gk_bias = put_f32(p, w->gk_bias, H * dk);
            }
            if (mc->type == HS_GDN) {
                cw->a = put_bf16(p, w->a_proj, H * d);
                cw->b = put_bf16(p, w->b_proj, H * d);
                cw->A_log = put_f32(p, w->A_log, H);
                cw->dt_bias = put_f32(p, w->dt_bias, H);
            }
            if (mc->type == HS_GLA || mc->type == HS_GDN) {
                cw->g = put_bf16(p, w->g_proj, H * dv * d);
                cw->g_norm = put_f32(p, w->g_norm, dv);
                if (mc->use_short_conv) {
                    cw->q_conv = put_f32(p, w->q_conv, H * dk * K);
                    cw->k_conv = put_f32(p, w->k_conv, H * dk * K);
                    cw->v_conv = put_f32(p, w->v_conv, H * dv * K);
                }
            }
        }
    }
}

static void measure(hs_cuda_model *cm) {
    const hs_config *c = &cm->cfg;
    cm->width = cm->rank = cm->hmax = 1;
    cm->total_heads = 0;
    for (int l = 0; l < c->num_layers; l++)
        for (int j = 0; j < c->layers[l].n_mixers; j++) {
            const hs_mixer_config *mc = &c->layers[l].mixers[j];
            size_t H = (size_t)mc->num_heads, Hkv = (size_t)(mc->num_kv_heads > 0 ? mc->num_kv_heads : mc->num_heads);
            size_t w[4] = {H * (size_t)mc->head_k_dim, Hkv * (size_t)mc->head_k_dim,
                           Hkv * (size_t)mc->head_v_dim, H * (size_t)mc->head_v_dim};
            for (int i = 0; i < 4; i++) if (w[i] > cm->width) cm->width = w[i];
            if (H > cm->hmax) cm->hmax = H;
            if (mc->type == HS_GLA && (size_t)mc->gate_low_rank_dim > cm->rank) cm->rank = (size_t)mc->gate_low_rank_dim;
            cm->mask_off[l][j] = cm->total_heads;
            cm->total_heads += mc->num_heads;
        }
}

static int upload(hs_cuda_model *cm, const hs_model *m, char *err, size_t errlen) {
    CUDA_CHECK(cudaGetDevice(&cm->device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&cm->st, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&cm->blas));
    CUBLAS_CHECK(cublasSetStream(cm->blas, cm->st));
    CUDA_CHECK(cu_attention_setup());
    packer p = {0, NULL, NULL};
    pack_model(&p, cm, m);
    cm->arena_bytes = p.off;
    CUDA_CHECK(cudaMalloc(&cm->arena, cm->arena_bytes));
    char *host = (char *)malloc(cm->arena_bytes);
    if (!host) {
        snprintf(err, errlen, "out of host memory staging %zu MB of weights", (cm->arena_bytes >> 20) + 1);
        return -1;
    }
    memset(host, 0, cm->arena_bytes);
    packer q = {0, host, (char *)cm->arena};
    pack_model(&q, cm, m);
    cudaError_t e = cudaMemcpy(cm->arena, host, cm->arena_bytes, cudaMemcpyHostToDevice);
    free(host);
    CUDA_CHECK(e);
    return 0;
}

hs_cuda_model *cu_model_upload(const hs_model *m, char *err, size_t errlen) {
    hs_cuda_model *cm = (hs_cuda_model *)calloc(1, sizeof *cm);
    if (!cm) {
        snprintf(err, errlen, "out of host memory");
        return NULL;
    }
    cm->cfg = m->cfg;
    measure(cm);
    if (upload(cm, m, err, errlen)) {
        cu_model_free(cm);
        return NULL;
    }
    return cm;
}

void cu_model_free(hs_cuda_model *cm) {
    if (!cm) return;
    if (cm->st) cudaStreamSynchronize(cm->st);
    if (cm->graph.exec) cudaGraphExecDestroy(cm->graph.exec);
    if (cm->ws_arena) cudaFree(cm->ws_arena);
    if (cm->arena) cudaFree(cm->arena);
    if (cm->blas) cublasDestroy(cm->blas);
    if (cm->st) cudaStreamDestroy(cm->st);
    free(cm);
}

/* Logit rows per block: at most 32M floats of logits at once. */
#define LOGIT_BLOCK_FLOATS ((size_t)32 << 20)

int cu_workspace_ensure(hs_cuda_model *cm, int T, char *err, size_t errlen) {
    if (cm->ws_arena && cm->ws.T >= T) return 0;
    /* capacity in steps of 256 tokens: a loop that grows its input by one token per forward
     * (niah --device cuda appends each answer token) reallocates once per 256 tokens, not on
     * every forward */
    const int cap = T > INT_MAX - 255 ? T : (T + 255) / 256 * 256;
    const hs_config *c = &cm->cfg;
    size_t t = (size_t)cap, d = (size_t)c->hidden_size, F = (size_t)c->intermediate_size;
    size_t V = (size_t)c->vocab_size, W = cm->width;
    size_t rows = LOGIT_BLOCK_FLOATS / V;
    if (rows < 1) rows = 1;
    if (rows > t) rows = t;
    size_t la_bytes = 0;               /* the chunked scans' scratch, the largest gla/gdn mixer's */
    for (int l = 0; cu_la_chunk_enabled() && l < c->num_layers; l++)
        for (int j = 0; j < c->layers[l].n_mixers; j++) {
            const hs_mixer_config *mc = &c->layers[l].mixers[j];
            if (mc->type != HS_GLA && mc->type != HS_GDN) continue;
            size_t b = cu_la_chunk_work_bytes(cap, mc->num_heads, mc->head_k_dim, mc->head_v_dim);
            if (b > la_bytes) la_bytes = b;
        }
    struct { void **slot; size_t bytes; } parts[] = {
        {(void **)&cm->ws.x, t * d * 4}, {(void **)&cm->ws.hf, t * d * 4}, {(void **)&cm->ws.hb, t * d * 2},
        {(void **)&cm->ws.q, t * W * 4}, {(void **)&cm->ws.k, t * W * 4}, {(void **)&cm->ws.v, t * W * 4},
        {(void **)&cm->ws.o, t * W * 4}, {(void **)&cm->ws.gk, t * W * 4}, {(void **)&cm->ws.g, t * W * 4},
        {(void **)&cm->ws.tmp, (t + 128) * W * 4}, /* + 128 rows: the wgmma attentions' padded K/V (forward.cu) */
        {(void **)&cm->ws.lrb, t * cm->rank * 2},
        {(void **)&cm->ws.beta, t * cm->hmax * 4}, {(void **)&cm->ws.la, t * cm->hmax * 4},
        {(void **)&cm->ws.gu, t * 2 * F * 4}, {(void **)&cm->ws.mb, t * F * 2}, {(void **)&cm->ws.ob, t * W * 2},
        {(void **)&cm->ws.row_scale, t * 4}, {(void **)&cm->ws.nll, t * 4},
        {(void **)&cm->ws.logits, rows * V * 4}, {(void **)&cm->ws.tokens, t * 4},
        {(void **)&cm->ws.mask, (size_t)cm->total_heads},
        {(void **)&cm->ws.la_work, la_bytes},
    };
    const int n = (int)(sizeof parts / sizeof parts[0]);
    size_t total = 0;
    for (int i = 0; i < n; i++) total += align_up(parts[i].bytes);
    if (cm->ws_arena) {
        CUDA_CHECK(cudaStreamSynchronize(cm->st));
        CUDA_CHECK(cudaFree(cm->ws_arena));
        cm->ws_arena = NULL;
        cm->ws.T = 0;
    }
    cudaError_t e = cudaMalloc(&cm->ws_arena, total);
    if (e != cudaSuccess) {
        cm->ws_arena = NULL;
        snprintf(err, errlen, "out of GPU memory for T=%d (workspace %zu MB): %s", T, (total >> 20) + 1,
                 cudaGetErrorString(e));
        return -1;
    }
    cm->ws_bytes = total;
    char *base = (char *)cm->ws_arena;
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        *parts[i].slot = base + off;
        off += align_up(parts[i].bytes);
    }
    cm->ws.logit_rows = (int)rows;
    cm->ws.la_work_bytes = la_bytes;
    cm->ws.T = cap;
    return 0;
}
