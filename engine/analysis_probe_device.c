/* probe on the CUDA backend: the head statistics come from the forward itself
 * (hs_forward_opts.stats, computed on the GPU from the mixers' device tensors), and greedy
 * generation is one forward per generated token, each asking only for the argmax of its last
 * row (the retrieval score). Same results as the CPU path of hs_probe_run (analysis.c). */
#include "analysis_api.h"
#include "forward_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_probe_fill_cuda(hs_probe_result *r, const hs_model *m, const hs_knobs *k, int max_new,
                       int32_t *out, int *n_out, int *amax, hs_progress_fn progress, void *pctx,
                       char *err, size_t errlen) {
    const hs_config *c = &m->cfg;
    const int T = r->T, nh = r->n_heads, V = c->vocab_size;
    /* rows of the first forward: the probe rows, then T-1 for the first generated token */
    int n_rows = r->n_probe + 1;
    int *rows = malloc(sizeof(int) * (size_t)n_rows);
    double *ent = malloc(sizeof(double) * (size_t)nh * n_rows);
    int *hit = malloc(sizeof(int) * (size_t)nh * n_rows);
    int *am = malloc(sizeof(int) * (size_t)nh * n_rows);
    int32_t *seq = malloc(sizeof(int32_t) * (size_t)(T + (max_new > 0 ? max_new : 0)));
    float *logits = malloc(sizeof(float) * (size_t)V);
    int rc = 0;
    *n_out = 0;
    if (!rows || !ent || !hit || !am || !seq || !logits) {
        snprintf(err, errlen, "probe: out of memory");
        rc = -1;
        goto done;
    }
    memcpy(rows, r->probe_pos, sizeof(int) * (size_t)r->n_probe);
    rows[r->n_probe] = T - 1;
    memcpy(seq, r->tokens, sizeof(int32_t) * (size_t)T);
    for (int i = 0; i <= max_new; i++) {
        if (i > 0 && i >= max_new) break;
        hs_head_stats_req req = { rows, i == 0 ? n_rows : 1, r->span_start, r->span_end, r->topk, ent, hit, am };
        if (i > 0) rows[0] = T - 1 + i;
        hs_forward_opts fo;
        memset(&fo, 0, sizeof fo);
        fo.stats = &req;
        if (max_new > 0) { fo.logits = logits; fo.n_logit_rows = 1; }
        rc = hs_forward_on(HS_DEVICE_CUDA, m, seq, T + i, k, &fo, err, errlen);
        if (rc) goto done;
        int last = req.n_rows - 1;
        if (i == 0) {
            for (int h = 0; h < nh; h++) {
                double se = 0, sh = 0;
                for (int p = 0; p < r->n_probe; p++) { se += ent[(size_t)h * n_rows + p]; sh += hit[(size_t)h * n_rows + p]; }
                r->heads[h].entropy = se / r->n_probe;
                r->heads[h].hit_rate = sh / r->n_probe;
            }
        }
        if (max_new <= 0) break;
        for (int h = 0; h < nh; h++) amax[(size_t)h * max_new + i] = am[(size_t)h * req.n_rows + last];
        int best = 0;
        for (int v = 1; v < V; v++) if (logits[v] > logits[best]) best = v;
        if (best == c->eos_id) break;
        seq[T + i] = best;
        out[(*n_out)++] = best;
        if (progress && progress(pctx, (double)(i + 1) / (max_new + 1))) { rc = HS_CANCELLED; goto done; }
    }
done:
    free(rows); free(ent); free(hit); free(am); free(seq); free(logits);
    return rc;
}
