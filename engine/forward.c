/* The whole-model forward pass (model-spec section 4) on the CPU. Activations are O(T*d):
 * the residual stream x and the normed h are [T,d]; the MLP, the logits and the NLL run in
 * row blocks so neither [T,F] nor [T,V] is ever held. */
#include "forward.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixer_internal.h"
#include "cpu/kernels.h"
#include "cpu/vexp.h"

/* Row block for the vocabulary projection: at most this many floats of logits at once. */
#define LOGIT_BLOCK_FLOATS (16u << 20)

typedef struct {
    float *x, *h;              /* [T,d] residual stream and its normed copy */
    float *gate, *up;          /* [HS_ROW_BLOCK, F] */
    float *logit_blk;          /* [logit_rows, V] (only when logits or nll are wanted) */
    int logit_rows;
    hs_mixer_ws ws;
} fwd_buffers;

static void free_buffers(fwd_buffers *b) {
    free(b->x); free(b->h); free(b->gate); free(b->up); free(b->logit_blk);
    hs_mixer_ws_free(&b->ws);
}

static int alloc_buffers(fwd_buffers *b, const hs_config *c, int T, int want_logits,
                         char *err, size_t errlen) {
    memset(b, 0, sizeof *b);
    size_t td = (size_t)T * c->hidden_size, bf = (size_t)HS_ROW_BLOCK * c->intermediate_size;
    size_t rows = LOGIT_BLOCK_FLOATS / (size_t)c->vocab_size;
    if (rows < 1) rows = 1;
    if (rows > (size_t)T) rows = (size_t)T;
    b->logit_rows = (int)rows;
    size_t nlog = want_logits ? rows * c->vocab_size : 0;
    size_t need = (2 * td + 2 * bf + nlog) * sizeof(float) + hs_mixer_ws_bytes(c, T);
    b->x = malloc(td * sizeof(float));
    b->h = malloc(td * sizeof(float));
    b->gate = malloc(bf * sizeof(float));
    b->up = malloc(bf * sizeof(float));
    if (nlog) b->logit_blk = malloc(nlog * sizeof(float));
    char werr[HS_ERR_LEN];
    int ws_rc = hs_mixer_ws_alloc(&b->ws, c, T, werr, sizeof werr);
    if (!b->x || !b->h || !b->gate || !b->up || (nlog && !b->logit_blk) || ws_rc) {
        free_buffers(b);
        snprintf(err, errlen, "out of memory for T=%d (need %zu MB)", T, (need >> 20) + 1);
        return -1;
    }
    return 0;
}

/* x[rows] += (silu(h Wg^T) * (h Wu^T)) Wd^T in row blocks. */
static void mlp_forward(float *x, const float *h, const hs_layer_weights *lw, int T, int d,
                        int F, float *gate, float *up) {
    for (int r0 = 0; r0 < T; r0 += HS_ROW_BLOCK) {
        int nb = T - r0 < HS_ROW_BLOCK ? T - r0 : HS_ROW_BLOCK;
        const float *hb = h + (size_t)r0 * d;
        matmul_forward(gate, hb, lw->gate_proj, nb, d, F);
        matmul_forward(up, hb, lw->up_proj, nb, d, F);
        swiglu_forward(gate, gate, up, (size_t)nb * F);
        matmul_accumulate(x + (size_t)r0 * d, gate, lw->down_proj, nb, F, d);
    }
}

/* -ln softmax(row)[target]: log-sum-exp with the row max, the sum in double. hs_expf is an
 * accurate vectorisable expf (kernels/cpu/vexp.h), not a fast-math approximation. */
static double row_nll(const float *row, int V, int target) {
    float mx = row[0];
    #pragma omp simd reduction(max : mx)
    for (int j = 1; j < V; j++) mx = row[j] > mx ? row[j] : mx;
    double s = 0;
    #pragma omp simd reduction(+ : s)
    for (int j = 0; j < V; j++) s += (double)hs_expf(row[j] - mx);
    return log(s) + (double)mx - (double)row[target];
}

/* Logits for rows [lo, hi) in blocks; copies the requested rows out and computes the NLL of
 * the next token. */
static void head_forward(const hs_model *m, const float *hn, const int32_t *tokens, int T,
                         const hs_forward_opts *opts, float *blk, int blk_rows) {
    const hs_config *c = &m->cfg;
    int d = c->hidden_size, V = c->vocab_size;
    int n_rows = opts->logits ? opts->n_logit_rows : 0;
    int first_logit = T - n_rows;
    int lo = opts->nll ? 0 : first_logit;
    int hi = n_rows ? T : T - 1;
    for (int r0 = lo; r0 < hi; r0 += blk_rows) {
        int nb = hi - r0 < blk_rows ? hi - r0 : blk_rows;
        matmul_forward(blk, hn + (size_t)r0 * d, m->lm_head, nb, d, V);
        #pragma omp parallel for schedule(static)
        for (int i = 0; i < nb; i++) {
            int t = r0 + i;
            const float *row = blk + (size_t)i * V;
            if (n_rows && t >= first_logit)
                memcpy(opts->logits + (size_t)(t - first_logit) * V, row, (size_t)V * sizeof *row);
            if (opts->nll && t < T - 1) opts->nll[t] = (float)row_nll(row, V, tokens[t + 1]);
        }
    }
}

int hs_forward(const hs_model *m, const int32_t *tokens, int T, const hs_knobs *knobs,
               const hs_forward_opts *opts, char *err, size_t errlen) {
    static const hs_knobs no_knobs;
    static const hs_forward_opts no_opts;
    const hs_config *c = &m->cfg;
    if (!knobs) knobs = &no_knobs;
    if (!opts) opts = &no_opts;
    if (T < 1) { snprintf(err, errlen, "empty input (T=%d)", T); return -1; }
    for (int t = 0; t < T; t++)
        if (tokens[t] < 0 || tokens[t] >= c->vocab_size) {
            snprintf(err, errlen, "token %d at position %d is outside the vocabulary [0, %d)",
                     tokens[t], t, c->vocab_size);
            return -1;
        }
    if (opts->logits && (opts->n_logit_rows < 1 || opts->n_logit_rows > T)) {
        snprintf(err, errlen, "logit rows %d outside 1..T=%d", opts->n_logit_rows, T);
        return -1;
    }
    if (hs_knobs_validate(knobs, c, err, errlen)) return -1;
    hs_knobs_resolved kr;
    hs_knobs_resolve(&kr, knobs, c);

    fwd_buffers b;
    if (alloc_buffers(&b, c, T, opts->logits || opts->nll, err, errlen)) return -1;
    int d = c->hidden_size, F = c->intermediate_size, rc = 0;

    for (int t = 0; t < T; t++)
        memcpy(b.x + (size_t)t * d, m->embed + (size_t)tokens[t] * d, (size_t)d * sizeof(float));

    for (int l = 0; l < c->num_layers && !rc; l++) {
        const hs_layer_weights *lw = &m->layers[l];
        /* HH layers: both mixers read the same normed h; their outputs add into x. */
        rmsnorm_forward(b.h, b.x, lw->attn_norm, T, d, c->norm_eps);
        for (int j = 0; j < c->layers[l].n_mixers && !rc; j++)
            rc = hs_mixer_run(b.x, m, l, j, b.h, T, knobs, &kr, opts, &b.ws);
        if (rc) break;
        rmsnorm_forward(b.h, b.x, lw->mlp_norm, T, d, c->norm_eps);
        mlp_forward(b.x, b.h, lw, T, d, F, b.gate, b.up);
        if (opts->progress && opts->progress(opts->progress_ctx, (double)(l + 1) / (c->num_layers + 1)))
            rc = HS_CANCELLED;
    }
    if (!rc) {
        rmsnorm_forward(b.h, b.x, m->norm, T, d, c->norm_eps);
        if (opts->hidden) memcpy(opts->hidden, b.h, (size_t)T * d * sizeof(float));
        if (opts->logits || opts->nll) head_forward(m, b.h, tokens, T, opts, b.logit_blk, b.logit_rows);
        if (opts->progress) (void)opts->progress(opts->progress_ctx, 1.0);
    }
    if (rc == HS_CANCELLED) snprintf(err, errlen, "cancelled");
    else if (rc) snprintf(err, errlen, "forward failed");
    free_buffers(&b);
    return rc;
}
