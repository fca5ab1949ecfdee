/* The forward's analysis hooks on the GPU (forward_analysis.cuh). */
#include "forward_analysis.cuh"
#include "check.cuh"
#include "kernels/cuda/kernels.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAUNCH(call) CUDA_CHECK(call)

void cu_capture_free(capture_bufs *c) {
    free(c->q); free(c->k); free(c->v); free(c->gk); free(c->beta); free(c->la); free(c->out);
    free(c->row_scale);
    memset(c, 0, sizeof *c);
}

static int d2h(float *dst, const float *src, size_t n, char *err, size_t errlen) {
    CUDA_CHECK(cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost));
    return 0;
}

int cu_run_capture(hs_cuda_model *cm, capture_bufs *cb, int l, int j, int T, const cu_knobs *kn,
                       const hs_knobs_resolved *kr, const float *row_scale_host, int window,
                       const hs_forward_opts *opts, char *err, size_t errlen) {
    const hs_mixer_config *mc = &cm->cfg.layers[l].mixers[j];
    size_t H = (size_t)mc->num_heads, Hkv = (size_t)(mc->num_kv_heads > 0 ? mc->num_kv_heads : mc->num_heads);
    size_t t = (size_t)T, dk = (size_t)mc->head_k_dim, dv = (size_t)mc->head_v_dim;
    if (!cb->q) {
        size_t n = t * cm->width;
        cb->q = (float *)malloc(n * 4); cb->k = (float *)malloc(n * 4); cb->v = (float *)malloc(n * 4);
        cb->gk = (float *)malloc(n * 4); cb->out = (float *)malloc(n * 4);
        cb->beta = (float *)malloc(t * cm->hmax * 4); cb->la = (float *)malloc(t * cm->hmax * 4);
        if (!cb->q || !cb->k || !cb->v || !cb->gk || !cb->out || !cb->beta || !cb->la) {
            snprintf(err, errlen, "out of host memory for the capture buffers (T=%d)", T);
            return -1;
        }
    }
    const cu_workspace *ws = &cm->ws;
    if (d2h(cb->q, ws->q, t * H * dk, err, errlen) || d2h(cb->k, ws->k, t * Hkv * dk, err, errlen) ||
        d2h(cb->v, ws->v, t * Hkv * dv, err, errlen) || d2h(cb->out, ws->o, t * H * dv, err, errlen))
        return -1;
    hs_mixer_acts a;
    memset(&a, 0, sizeof a);
    a.layer = l; a.mixer = j; a.mc = mc; a.T = T;
    a.q = cb->q; a.k = cb->k; a.v = cb->v; a.out = cb->out; a.knobs = kr;
    if (mc->type == HS_GLA) {
        if (d2h(cb->gk, ws->gk, t * H * dk, err, errlen)) return -1;
        a.gk = cb->gk;
    } else if (mc->type == HS_GDN) {
        if (d2h(cb->beta, ws->beta, t * H, err, errlen) || d2h(cb->la, ws->la, t * H, err, errlen)) return -1;
        a.beta = cb->beta;
        a.log_alpha = cb->la;
    } else {
        a.row_scale = mc->type == HS_NOPE && kn->log_L0 > 0 ? row_scale_host : NULL;
        a.window = window;
    }
    opts->capture(opts->capture_ctx, &a);
    return 0;
}

static size_t pad256(size_t n) { return (n + 255) & ~(size_t)255; }

int cu_maps_open(stats_dev *sd, hs_cuda_model *cm, hs_map_req *maps, int n_maps, int T, char *err,
                     size_t errlen) {
    if (n_maps <= 0) return 0;
    const hs_config *c = &cm->cfg;
    size_t n_cells = 0, scratch = 0;
    for (int i = 0; i < n_maps; i++) {
        const hs_map_req *q = &maps[i];
        const hs_head_ref *h = &q->head;
        if (h->layer < 0 || h->layer >= c->num_layers || h->mixer < 0 || h->mixer >= c->layers[h->layer].n_mixers ||
            h->head < 0 || h->head >= c->layers[h->layer].mixers[h->mixer].num_heads) {
            snprintf(err, errlen, "pooled map: head %d.%d.%d does not exist", h->layer, h->mixer, h->head);
            return -1;
        }
        if (q->t0 < 0 || q->t0 >= q->t1 || q->t1 > T || q->s0 < 0 || q->s0 >= q->s1 || q->s1 > T || q->bins_t < 1 ||
            q->bins_s < 1 || q->bins_t > q->t1 - q->t0 || q->bins_s > q->s1 - q->s0 || q->rows_per_bin < 0 ||
            (q->agg != 0 && q->agg != 1) || !q->cells) {
            snprintf(err, errlen, "pooled map %d: unresolved geometry or no output", i);
            return -1;
        }
        n_cells += (size_t)q->bins_t * (size_t)q->bins_s;
        size_t sb = cu_pooled_map_scratch(T, q->bins_t, q->bins_s);
        if (sb > scratch) scratch = sb;
    }
    size_t off_s = pad256(n_cells * sizeof(float)), off_d = off_s + pad256(scratch);
    size_t bytes = off_d + cu_head_stats_gla_scratch(T, (int)cm->width);
    CUDA_CHECK(cudaMalloc(&sd->map_scratch, bytes));
    sd->cells = (float *)sd->map_scratch;
    sd->map_rows = (char *)sd->map_scratch + off_s;
    sd->map_dchunk = (double *)((char *)sd->map_scratch + off_d);
    sd->maps = maps;
    sd->n_maps = n_maps;
    return 0;
}

int cu_run_maps(hs_cuda_model *cm, stats_dev *sd, int l, int j, int T, const cu_knobs *kn, int window,
                    char *err, size_t errlen) {
    const hs_mixer_config *mc = &cm->cfg.layers[l].mixers[j];
    cu_workspace *ws = &cm->ws;
    const int H = mc->num_heads, dk = mc->head_k_dim;
    int prepped = 0;
    size_t at = 0;
    for (int i = 0; i < sd->n_maps; i++) {
        const hs_map_req *q = &sd->maps[i];
        float *cells = sd->cells + at;
        at += (size_t)q->bins_t * (size_t)q->bins_s;
        if (q->head.layer != l || q->head.mixer != j) continue;
        cu_map_geom g = { q->t0, q->t1, q->s0, q->s1, q->bins_t, q->bins_s, q->rows_per_bin,
                          q->agg == 1 ? CU_MAP_MAX : CU_MAP_MEAN };
        cu_map_head hd;
        memset(&hd, 0, sizeof hd);
        hd.h = q->head.head;
        hd.H = H;
        hd.Hkv = mc->num_kv_heads > 0 ? mc->num_kv_heads : H;
        hd.dk = dk;
        hd.q = ws->q;
        hd.k = ws->k;
        hd.swla = kn->swla;
        hd.W = kn->swla_window;
        hd.S = kn->swla_stride > 0 ? kn->swla_stride : 1;
        if (mc->type == HS_GLA) {
            if (!prepped) {
                /* ws->tmp held the projections before the conv; free until the next mixer */
                LAUNCH(cu_head_stats_gla_prep(ws->tmp, sd->map_dchunk, ws->k, ws->gk, T, H * dk, cm->st));
                prepped = 1;
            }
            hd.kind = CU_MAP_GLA;
            hd.gk = ws->gk;
            hd.ktil = ws->tmp;
            hd.dchunk = sd->map_dchunk;
        } else if (mc->type == HS_GDN) {
            hd.kind = CU_MAP_GDN;
            hd.beta = ws->beta;
            hd.log_alpha = ws->la;
        } else {
            hd.kind = CU_MAP_SOFTMAX;
            hd.row_scale = mc->type == HS_NOPE && kn->log_L0 > 0 ? ws->row_scale : NULL;
            hd.window = window;
            hd.swla = CU_SWLA_OFF;
        }
        LAUNCH(cu_pooled_map(cells, sd->map_rows, g, hd, T, cm->st));
    }
    return 0;
}

int cu_maps_close(stats_dev *sd, int ok, char *err, size_t errlen) {
    if (!sd->map_scratch) return 0;
    int rc = 0;
    size_t at = 0;
    for (int i = 0; ok && i < sd->n_maps; i++) {
        size_t n = (size_t)sd->maps[i].bins_t * (size_t)sd->maps[i].bins_s;
        cudaError_t e = cudaMemcpy(sd->maps[i].cells, sd->cells + at, n * sizeof(float), cudaMemcpyDeviceToHost);
        at += n;
        if (e != cudaSuccess) {
            snprintf(err, errlen, "CUDA error at %s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e));
            rc = -1;
            break;
        }
    }
    cudaFree(sd->map_scratch);
    sd->map_scratch = NULL;
    return rc;
}

int cu_stats_open(stats_dev *sd, hs_cuda_model *cm, hs_head_stats_req *req, int T, char *err, size_t errlen) {
    memset(sd, 0, sizeof sd[0]);
    if (!req) return 0;
    if (req->n_rows < 1 || !req->rows || !req->entropy || !req->hit || !req->argmax || req->topk < 1) {
        snprintf(err, errlen, "head statistics: no rows, no outputs or topk < 1");
        return -1;
    }
    for (int r = 0; r < req->n_rows; r++)
        if (req->rows[r] < 0 || req->rows[r] >= T) {
            snprintf(err, errlen, "head statistics: row %d is outside [0, %d)", req->rows[r], T);
            return -1;
        }
    size_t n = (size_t)cm->total_heads * (size_t)req->n_rows;
    size_t off_rows = 0, off_ent = pad256((size_t)req->n_rows * sizeof(int));
    size_t off_hit = off_ent + pad256(n * sizeof(double));
    size_t off_am = off_hit + pad256(n * sizeof(int));
    size_t off_dc = off_am + pad256(n * sizeof(int));
    size_t bytes = off_dc + cu_head_stats_gla_scratch(T, (int)cm->width);
    CUDA_CHECK(cudaMalloc(&sd->block, bytes));
    char *b = (char *)sd->block;
    sd->req = req;
    sd->rows = (int *)(b + off_rows);
    sd->out.entropy = (double *)(b + off_ent);
    sd->out.hit = (int *)(b + off_hit);
    sd->out.argmax = (int *)(b + off_am);
    sd->dchunk = (double *)(b + off_dc);
    CUDA_CHECK(cudaMemcpy(sd->rows, req->rows, (size_t)req->n_rows * sizeof(int), cudaMemcpyHostToDevice));
    return 0;
}

int cu_stats_close(stats_dev *sd, hs_cuda_model *cm, int ok, char *err, size_t errlen) {
    if (!sd->block) return 0;
    int rc = 0;
    if (ok) {
        size_t n = (size_t)cm->total_heads * (size_t)sd->req->n_rows;
        cudaError_t e = cudaMemcpy(sd->req->entropy, sd->out.entropy, n * sizeof(double), cudaMemcpyDeviceToHost);
        if (e == cudaSuccess) e = cudaMemcpy(sd->req->hit, sd->out.hit, n * sizeof(int), cudaMemcpyDeviceToHost);
        if (e == cudaSuccess) e = cudaMemcpy(sd->req->argmax, sd->out.argmax, n * sizeof(int), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            snprintf(err, errlen, "CUDA error at %s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e));
            rc = -1;
        }
    }
    cudaFree(sd->block);
    sd->block = NULL;
    return rc;
}

/* The statistics of every head of mixer (l, j), right after it ran (its q, k, gates are
 * still in the workspace). */
int cu_run_stats(hs_cuda_model *cm, stats_dev *sd, int l, int j, int T, const cu_knobs *kn, int window,
                     char *err, size_t errlen) {
    const hs_mixer_config *mc = &cm->cfg.layers[l].mixers[j];
    const hs_head_stats_req *rq = sd->req;
    cu_workspace *ws = &cm->ws;
    const int H = mc->num_heads, dk = mc->head_k_dim;
    const int Hkv = mc->num_kv_heads > 0 ? mc->num_kv_heads : H;
    cu_head_stats_out o = sd->out;
    size_t off = (size_t)sd->head_base * (size_t)rq->n_rows;
    o.entropy += off; o.hit += off; o.argmax += off;
    const int span0 = rq->span_start, span1 = rq->span_end > rq->span_start ? rq->span_end : rq->span_start;
    const int W = kn->swla_window, S = kn->swla_stride > 0 ? kn->swla_stride : 1;
    if (mc->type == HS_GLA) {
        /* ws->tmp held the projections before the conv; free again until the next mixer */
        LAUNCH(cu_head_stats_gla_prep(ws->tmp, sd->dchunk, ws->k, ws->gk, T, H * dk, cm->st));
        LAUNCH(cu_head_stats_gla(o, ws->q, ws->k, ws->gk, ws->tmp, sd->dchunk, H, dk, kn->swla, W, S, sd->rows,
                                 rq->n_rows, span0, span1, rq->topk, cm->st));
    } else if (mc->type == HS_GDN) {
        LAUNCH(cu_head_stats_gdn(o, ws->q, ws->k, ws->beta, ws->la, H, dk, kn->swla, W, S, sd->rows, rq->n_rows,
                                 span0, span1, rq->topk, cm->st));
    } else {
        const float *rs = mc->type == HS_NOPE && kn->log_L0 > 0 ? ws->row_scale : NULL;
        LAUNCH(cu_head_stats_softmax(o, ws->q, ws->k, rs, H, Hkv, dk, window, sd->rows, rq->n_rows, span0, span1,
                                     rq->topk, cm->st));
    }
    sd->head_base += H;
    return 0;
}

