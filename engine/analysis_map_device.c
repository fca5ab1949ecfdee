/* Pooled maps on the CUDA backend: the maps come from the forward itself
 * (hs_forward_opts.maps, pooled on the GPU from the mixers' device tensors by
 * kernels/cuda/pooled_map.cu), so many heads cost one forward. Same geometry, rules and
 * results as hs_pooled_map_compute (analysis_map.c), which stays the CPU path. */
#include "analysis_api.h"
#include "forward_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_pooled_maps_cuda(hs_pooled_map *out, const hs_model *m, const hs_knobs *k, const int32_t *tokens,
                        int T, hs_map_opts *opts, int n, long long *rows_used, hs_progress_fn progress,
                        void *progress_ctx, char *err, size_t errlen) {
    const hs_config *c = &m->cfg;
    memset(out, 0, sizeof *out * (size_t)n);
    if (n < 1) { snprintf(err, errlen, "map: no heads asked for"); return -1; }
    hs_map_req *req = calloc((size_t)n, sizeof *req);
    if (!req) { snprintf(err, errlen, "map: out of memory"); return -1; }
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        hs_map_opts *o = &opts[i];
        const hs_head_ref *h = &o->head;
        if (h->layer < 0 || h->layer >= c->num_layers || h->mixer < 0 || h->mixer >= c->layers[h->layer].n_mixers ||
            h->head < 0 || h->head >= c->layers[h->layer].mixers[h->mixer].num_heads) {
            snprintf(err, errlen, "--head: %d.%d.%d does not exist in this model", h->layer, h->mixer, h->head);
            rc = -1;
            break;
        }
        const hs_mixer_config *mc = &c->layers[h->layer].mixers[h->mixer];
        /* the gdn row sweep keeps a head's state in registers: 256 channels at most */
        if (mc->head_k_dim > (mc->type == HS_GDN ? 256 : HS_ANALYSIS_MAX_DK)) {
            snprintf(err, errlen, "map: head_k_dim %d of head %d.%d.%d is above what the GPU map supports",
                     mc->head_k_dim, h->layer, h->mixer, h->head);
            rc = -1;
            break;
        }
        if (hs_map_opts_resolve(o, T, err, errlen)) { rc = -1; break; }
        out[i].cells = malloc(sizeof(float) * (size_t)o->bins_t * (size_t)o->bins_s);
        if (!out[i].cells) { snprintf(err, errlen, "map: out of memory"); rc = -1; break; }
        req[i].head = *h;
        req[i].t0 = o->t0; req[i].t1 = o->t1; req[i].s0 = o->s0; req[i].s1 = o->s1;
        req[i].bins_t = o->bins_t; req[i].bins_s = o->bins_s;
        req[i].rows_per_bin = hs_map_rows_per_bin(o);
        req[i].agg = o->agg == HS_POOL_MAX;
        req[i].cells = out[i].cells;
    }
    if (!rc) {
        hs_forward_opts fo;
        memset(&fo, 0, sizeof fo);
        fo.maps = req;
        fo.n_maps = n;
        fo.progress = progress;
        fo.progress_ctx = progress_ctx;
        rc = hs_forward_on(HS_DEVICE_CUDA, m, tokens, T, k, &fo, err, errlen);
    }
    free(req);
    if (rc) {
        for (int i = 0; i < n; i++) hs_pooled_map_free(&out[i]);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        const hs_map_opts *o = &opts[i];
        out[i].head = o->head;
        out[i].type = c->layers[o->head.layer].mixers[o->head.mixer].type;
        out[i].T = T;
        out[i].t0 = o->t0; out[i].t1 = o->t1; out[i].s0 = o->s0; out[i].s1 = o->s1;
        out[i].bins_t = o->bins_t; out[i].bins_s = o->bins_s;
        out[i].agg = o->agg;
        if (rows_used) rows_used[i] = hs_map_rows_used(o);
    }
    return 0;
}
