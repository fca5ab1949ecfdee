/* probe (model-spec section 7): one forward with a capture hook that computes every head's
 * entropy and top-k hit rate on the probe rows, then greedy decoding whose per-step head
 * distributions give the retrieval score. */
#include "analysis_api.h"
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hs_probe_result_free(hs_probe_result *r) {
    if (!r) return;
    free(r->tokens);
    free(r->probe_pos);
    free(r->heads);
    memset(r, 0, sizeof *r);
}

/* Argmax of every head's distribution for each generated token, filled by head_fn. */
typedef struct {
    const hs_config *cfg;
    int T, max_new, n_heads;
    int *amax;                 /* [n_heads, max_new]; -1 = not seen */
} retrieval_ctx;

static void record_argmax(void *ctx, int layer, int mixer, int head, int t, const float *dist) {
    retrieval_ctx *rc = ctx;
    int i = t - (rc->T - 1);
    if (i < 0 || i >= rc->max_new) return;
    int idx = hs_config_head_index(rc->cfg, layer, mixer, head);
    if (idx < 0) return;
    rc->amax[(size_t)idx * rc->max_new + i] = hs_dist_argmax_f(dist, t + 1);
}

int hs_probe_run(hs_probe_result *r, const hs_model *m, const hs_knobs *k, const hs_probe_opts *o,
                 int32_t *gen, int *n_gen, char *err, size_t errlen) {
    const hs_config *c = &m->cfg;
    int T = o->T;
    memset(r, 0, sizeof *r);
    if (n_gen) *n_gen = 0;
    r->span_start = r->span_end = -1;
    if (T < 1) { snprintf(err, errlen, "probe: empty input"); return -1; }
    for (int i = 0; i < o->n_probe; i++)
        if (o->probe_pos[i] < 0 || o->probe_pos[i] >= T) {
            snprintf(err, errlen, "--probe-positions: position %d is outside the input [0, %d)",
                     o->probe_pos[i], T);
            return -1;
        }
    int has_span = o->span_start >= 0 && o->span_end > o->span_start;
    if (has_span && o->span_end > T) {
        snprintf(err, errlen, "--span: %d:%d is outside the input [0, %d)", o->span_start, o->span_end, T);
        return -1;
    }
    if (o->max_new < 0) { snprintf(err, errlen, "--gen: must be at least 0"); return -1; }
    hs_tokenizer tk;
    if (hs_tokenizer_init(&tk, c, err, errlen)) return -1;

    r->T = T;
    r->n_probe = o->n_probe > 0 ? o->n_probe : 1;
    r->topk = o->topk > 0 ? o->topk : hs_topk_default(T);
    r->n_heads = hs_config_head_count(c);
    r->tokens = malloc(sizeof(int32_t) * (size_t)T);
    r->probe_pos = malloc(sizeof(int) * (size_t)r->n_probe);
    r->heads = calloc((size_t)r->n_heads, sizeof *r->heads);
    int max_new = o->max_new;
    int32_t *out = malloc(sizeof(int32_t) * (size_t)(max_new > 0 ? max_new : 1));
    retrieval_ctx rc = { c, T, max_new, r->n_heads, NULL };
    rc.amax = malloc(sizeof(int) * (size_t)r->n_heads * (size_t)(max_new > 0 ? max_new : 1));
    if (!r->tokens || !r->probe_pos || !r->heads || !out || !rc.amax) {
        free(out); free(rc.amax);
        hs_probe_result_free(r);
        snprintf(err, errlen, "probe: out of memory");
        return -1;
    }
    memcpy(r->tokens, o->tokens, sizeof(int32_t) * (size_t)T);
    if (o->n_probe > 0) memcpy(r->probe_pos, o->probe_pos, sizeof(int) * (size_t)o->n_probe);
    else r->probe_pos[0] = T - 1;
    if (has_span) { r->span_start = o->span_start; r->span_end = o->span_end; }
    for (size_t i = 0; i < (size_t)r->n_heads * (size_t)(max_new > 0 ? max_new : 1); i++) rc.amax[i] = -1;

    hs_probe_stats ps = { c, T, r->probe_pos, r->n_probe, r->span_start, r->span_end, r->topk,
                          r->heads, 0 };
    for (int l = 0, i = 0; l < c->num_layers; l++)
        for (int j = 0; j < c->layers[l].n_mixers; j++)
            for (int h = 0; h < c->layers[l].mixers[j].num_heads; h++, i++) {
                r->heads[i].layer = l; r->heads[i].mixer = j; r->heads[i].head = h;
                r->heads[i].type = c->layers[l].mixers[j].type;
            }
    hs_forward_opts fo;
    memset(&fo, 0, sizeof fo);
    fo.capture = hs_probe_stats_capture;
    fo.capture_ctx = &ps;
    fo.progress = o->progress;
    fo.progress_ctx = o->progress_ctx;
    int n_out = 0, ret;
    if (o->use_cuda)
        ret = hs_probe_fill_cuda(r, m, k, max_new, out, &n_out, rc.amax, o->progress, o->progress_ctx,
                                 err, errlen);
    else if (max_new > 0)
        ret = hs_generate_greedy(m, k, r->tokens, T, max_new, out, &n_out, record_argmax, &rc,
                                 &fo, err, errlen);
    else
        ret = hs_forward_layers(m, r->tokens, T, k, c->num_layers, &fo, err, errlen);
    if (ret == 0 && ps.failed) { snprintf(err, errlen, "probe: out of memory in the analysis"); ret = -1; }
    if (ret != 0) {
        free(out); free(rc.amax);
        hs_probe_result_free(r);
        return ret;
    }
    /* Retrieval: generated token i came from query row T-1+i. */
    double *score = calloc((size_t)r->n_heads, sizeof(double));
    if (!score) {
        free(out); free(rc.amax);
        hs_probe_result_free(r);
        snprintf(err, errlen, "probe: out of memory");
        return -1;
    }
    hs_retrieval_score(score, rc.amax, r->n_heads, max_new > 0 ? max_new : 1, r->tokens,
                       r->span_start, r->span_end, out, n_out);
    for (int h = 0; h < r->n_heads; h++) r->heads[h].retrieval = score[h];
    free(score);
    if (max_new > 0) {
        r->has_answer = 1;
        hs_tokenizer_decode(r->answer, sizeof r->answer, &tk, out, n_out);
        r->correct = o->expect && o->expect[0] && strstr(r->answer, o->expect) != NULL;
    }
    if (gen) memcpy(gen, out, sizeof(int32_t) * (size_t)n_out);
    if (n_gen) *n_gen = n_out;
    free(out); free(rc.amax);
    return 0;
}
