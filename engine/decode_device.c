/* Greedy generation on a device (decode_device.h): one greedy loop over three incremental
 * backends, the CPU decoder, the CUDA plugin's decoder and forwards of the growing sequence. */
#include "decode_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "decode.h"
#include "forward_device.h"

typedef int (*prefill_fn)(void *ctx, const int32_t *prompt, int T, float *logits,
                          const hs_forward_opts *opts, char *err, size_t errlen);
typedef int (*step_fn)(void *ctx, int32_t token, float *logits, char *err, size_t errlen);

static int argmax_logits(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (x[i] > x[best]) best = i;
    return best;
}

/* hs_generate_greedy's loop: no step after the last token, which nothing reads. */
static int greedy_loop(void *ctx, prefill_fn prefill, step_fn step, const hs_model *m,
                       const int32_t *prompt, int T, int max_new, int32_t *out, int *n_out,
                       float *logits_out, const hs_forward_opts *opts, char *err, size_t errlen) {
    const int V = m->cfg.vocab_size;
    float *logits = malloc(sizeof(float) * (size_t)V);
    if (!logits) { snprintf(err, errlen, "generate: out of memory"); return -1; }
    int rc = prefill(ctx, prompt, T, logits, opts, err, errlen);
    for (int i = 0; rc == 0 && i < max_new; i++) {
        if (logits_out) memcpy(logits_out + (size_t)i * V, logits, sizeof(float) * (size_t)V);
        int y = argmax_logits(logits, V);
        if (y == m->cfg.eos_id) break;
        out[(*n_out)++] = y;
        if (i + 1 < max_new) rc = step(ctx, y, logits, err, errlen);
    }
    free(logits);
    return rc;
}

/* ---- forwards of the growing sequence ---- */

typedef struct {
    hs_generate_forward_fn forward;
    void *ctx;
    int32_t *seq;
    int n;
    hs_forward_opts o;
} by_forward;

static int fwd_prefill(void *ctx, const int32_t *prompt, int T, float *logits, const hs_forward_opts *opts,
                       char *err, size_t errlen) {
    (void)opts;                /* already in g->o */
    by_forward *g = ctx;
    memcpy(g->seq, prompt, sizeof(int32_t) * (size_t)T);
    g->n = T;
    g->o.logits = logits;
    return g->forward(g->ctx, g->seq, g->n, &g->o, err, errlen);
}

static int fwd_step(void *ctx, int32_t token, float *logits, char *err, size_t errlen) {
    by_forward *g = ctx;
    g->seq[g->n++] = token;
    g->o.logits = logits;
    return g->forward(g->ctx, g->seq, g->n, &g->o, err, errlen);
}

/* Every forward gets base with its outputs replaced by one logits row. */
static int greedy_forwards(const hs_model *m, hs_generate_forward_fn forward, void *ctx, const int32_t *prompt,
                           int T, int max_new, int32_t *out, int *n_out, float *logits_out,
                           const hs_forward_opts *base, char *err, size_t errlen) {
    by_forward g;
    memset(&g, 0, sizeof g);
    g.forward = forward;
    g.ctx = ctx;
    g.seq = malloc(sizeof(int32_t) * ((size_t)T + (size_t)max_new));
    if (!g.seq) { snprintf(err, errlen, "generate: out of memory"); return -1; }
    if (base) g.o = *base;
    g.o.n_logit_rows = 1;
    g.o.nll = NULL;
    g.o.hidden = NULL;
    int rc = greedy_loop(&g, fwd_prefill, fwd_step, m, prompt, T, max_new, out, n_out, logits_out, NULL, err,
                         errlen);
    free(g.seq);
    return rc;
}

int hs_generate_greedy_by_forward(const hs_model *m, hs_generate_forward_fn forward, void *ctx,
                                  const int32_t *prompt, int T, int max_new, int32_t *out, int *n_out,
                                  const hs_forward_opts *base, char *err, size_t errlen) {
    *n_out = 0;
    if (T < 1) { snprintf(err, errlen, "generate: empty prompt"); return -1; }
    if (max_new < 1) return 0;
    return greedy_forwards(m, forward, ctx, prompt, T, max_new, out, n_out, NULL, base, err, errlen);
}

/* ---- the CPU decoder ---- */

static int cpu_prefill(void *ctx, const int32_t *prompt, int T, float *logits, const hs_forward_opts *opts,
                       char *err, size_t errlen) {
    return hs_decoder_prefill(ctx, prompt, T, logits, opts, err, errlen);
}

static int cpu_step(void *ctx, int32_t token, float *logits, char *err, size_t errlen) {
    return hs_decoder_step(ctx, token, logits, NULL, NULL, err, errlen);
}

/* ---- the CUDA plugin's decoder ---- */

typedef struct {
    const hs_cuda_api *api;
    hs_cuda_decoder *dec;
} on_gpu;

static int gpu_prefill(void *ctx, const int32_t *prompt, int T, float *logits, const hs_forward_opts *opts,
                       char *err, size_t errlen) {
    on_gpu *g = ctx;
    return g->api->decoder_prefill(g->dec, prompt, T, logits, opts, err, errlen);
}

static int gpu_step(void *ctx, int32_t token, float *logits, char *err, size_t errlen) {
    on_gpu *g = ctx;
    return g->api->decoder_step(g->dec, token, logits, err, errlen);
}

typedef struct {
    const hs_model *m;
    const hs_knobs *k;
} cuda_forward;

static int cuda_forward_run(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts, char *err,
                            size_t errlen) {
    cuda_forward *f = ctx;
    return hs_forward_on(HS_DEVICE_CUDA, f->m, tokens, T, f->k, opts, err, errlen);
}

static int decoder_disabled(void) {
    const char *e = getenv("HS_CUDA_DECODER");
    return e && !strcmp(e, "0");
}

static int generate_cuda(const hs_model *m, const hs_knobs *k, const int32_t *prompt, int T, int max_new,
                         int32_t *out, int *n_out, float *logits_out, const hs_forward_opts *opts,
                         char *err, size_t errlen) {
    on_gpu g;
    g.api = NULL;
    hs_cuda_model *cm = hs_forward_device_model(m, &g.api, err, errlen);
    if (!cm) return -1;
    char why[256] = "HS_CUDA_DECODER=0";
    g.dec = decoder_disabled() ? NULL : g.api->decoder_new(cm, k, T + max_new, why, sizeof why);
    if (g.dec) {
        int rc = greedy_loop(&g, gpu_prefill, gpu_step, m, prompt, T, max_new, out, n_out, logits_out, opts,
                             err, errlen);
        g.api->decoder_free(g.dec);
        return rc;
    }
    static int told;
    if (!told && !decoder_disabled()) {
        fprintf(stderr, "hybridscope: the GPU decoder cannot run (%s); decoding by one forward per token\n", why);
        told = 1;
    }
    cuda_forward f = {m, k};
    return greedy_forwards(m, cuda_forward_run, &f, prompt, T, max_new, out, n_out, logits_out, opts, err, errlen);
}

int hs_generate_greedy_on(int device, const hs_model *m, const hs_knobs *k, const int32_t *prompt, int T,
                          int max_new, int32_t *out, int *n_out, float *logits_out,
                          const hs_forward_opts *opts, char *err, size_t errlen) {
    *n_out = 0;
    if (T < 1) { snprintf(err, errlen, "generate: empty prompt"); return -1; }
    if (max_new < 1) return 0;
    if (max_new > 0x7fffffff - T) { snprintf(err, errlen, "generate: %d + %d tokens is too many", T, max_new); return -1; }
    int d = hs_device_resolve(device, err, errlen);
    if (d < 0) return -1;
    if (k && hs_knobs_validate(k, &m->cfg, err, errlen)) return -1;
    if (d == HS_DEVICE_CUDA)
        return generate_cuda(m, k, prompt, T, max_new, out, n_out, logits_out, opts, err, errlen);
    hs_decoder *dec = hs_decoder_new(m, k, T + max_new, err, errlen);
    if (!dec) return -1;
    int rc = greedy_loop(dec, cpu_prefill, cpu_step, m, prompt, T, max_new, out, n_out, logits_out, opts, err,
                         errlen);
    hs_decoder_free(dec);
    return rc;
}
