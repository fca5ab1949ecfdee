/* The controller's worker thread and the engine jobs it runs (worker.h). Every number comes
 * from the engine's analysis API; this file only sequences calls and hands results over. */
#include "worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../engine/analysis_api.h"
#include "../engine/assets.h"
#include "../engine/needle.h"
#include "../engine/ppl.h"
#include "device_forward.h"

#define JOB_BIT(k) (1u << (k))

/* Engine inputs that are loaded once per session. */
typedef struct {
    hs_assets assets;
    int assets_loaded;
    char assets_error[HS_ERR_LEN];
} worker_state;

static worker_state *state_of(hs_controller *c) {
    if (!c->worker) c->worker = calloc(1, sizeof(worker_state));
    return c->worker;
}

static const hs_assets *get_assets(hs_controller *c, char *err, size_t errlen) {
    worker_state *w = state_of(c);
    if (!w) { snprintf(err, errlen, "out of memory"); return NULL; }
    if (!w->assets_loaded && !w->assets_error[0]) {
        char dir[1024];
        if (hs_assets_find(dir, sizeof dir, NULL, w->assets_error, sizeof w->assets_error) == 0 &&
            hs_assets_load(&w->assets, dir, w->assets_error, sizeof w->assets_error) == 0)
            w->assets_loaded = 1;
    }
    if (!w->assets_loaded) { snprintf(err, errlen, "%s", w->assets_error); return NULL; }
    return &w->assets;
}

int hs_worker_min_length(hs_controller *c, hs_needle_task t, char *err, size_t errlen) {
    const hs_assets *a = get_assets(c, err, errlen);
    return a ? hs_needle_min_length(a, t) : -1;
}

/* ---- progress: every engine callback lands here ---- */

typedef struct {
    hs_controller *c;
    hs_job_kind kind;
    unsigned version;
    double lo, hi;             /* this phase's share of the job */
} job_ctx;

static int job_progress(void *ctx, double f) {
    job_ctx *j = ctx;
    double p = j->lo + (j->hi - j->lo) * (f < 0 ? 0 : f > 1 ? 1 : f);
    if (j->c->on_progress) j->c->on_progress(j->c->on_progress_ctx, j->c->job_text, p);
    return hs_ctl_job_progress(j->c, j->kind, j->version, p);
}

/* A progress hook that only answers "cancel?" (for forwards inside a larger job). */
static int still_wanted(void *ctx, double f) {
    (void)f;
    job_ctx *j = ctx;
    hs_ctl_lock(j->c);
    int cancel = hs_ctl_job_should_stop(j->c, j->kind, j->version);
    hs_ctl_unlock(j->c);
    return cancel;
}

/* ---- the probe prompt (needle sample for the current task, length, depth, seed) ---- */

static int make_sample(hs_needle_sample *smp, hs_controller *c, const hs_settings *s,
                       char *err, size_t errlen) {
    const hs_assets *a = get_assets(c, err, errlen);
    if (!a) return -1;
    return hs_needle_generate(smp, a, s->task, s->length, s->depth_pct, s->seed, err, errlen);
}

/* ---- job: probe + every head's small pooled map ---- */

typedef struct {
    const hs_settings *s;
    hs_pooled_map *maps;
    int n_maps;
    const hs_config *cfg;
    int failed;
    char err[HS_ERR_LEN];
} maps_ctx;

/* Capture hook: pools every head of the mixer that just ran. */
static void maps_capture(void *ctx, const hs_mixer_acts *a) {
    maps_ctx *m = ctx;
    if (m->failed) return;
    int base = hs_config_head_index(m->cfg, a->layer, a->mixer, 0);
    for (int h = 0; h < a->mc->num_heads && !m->failed; h++) {
        hs_head_view v;
        if (hs_head_view_init(&v, a, h) != 0) { m->failed = 1; snprintf(m->err, sizeof m->err, "out of memory"); return; }
        hs_map_opts o;
        memset(&o, 0, sizeof o);
        o.head.layer = a->layer; o.head.mixer = a->mixer; o.head.head = h;
        o.bins_t = o.bins_s = m->s->bins < a->T ? m->s->bins : a->T;
        o.agg = HS_POOL_MEAN;
        if (hs_map_opts_resolve(&o, a->T, m->err, sizeof m->err) != 0 ||
            hs_pooled_map_from_view(&m->maps[base + h], &v, &o, NULL, NULL, NULL, m->err, sizeof m->err) != 0)
            m->failed = 1;
        hs_head_view_free(&v);
    }
}

typedef struct { hs_probe_result *probe; hs_pooled_map *maps; int n_maps; } probe_out;

static int job_probe(probe_out *out, hs_controller *c, const hs_settings *s, const hs_model *m,
                     job_ctx *jc, char *err, size_t errlen) {
    hs_needle_sample smp;
    memset(&smp, 0, sizeof smp);
    if (make_sample(&smp, c, s, err, errlen) != 0) return -1;
    int n_probe = smp.probe_end - smp.probe_start;
    int *pos = malloc(sizeof(int) * (size_t)(n_probe > 0 ? n_probe : 1));
    hs_probe_result *r = calloc(1, sizeof *r);
    int n_maps = hs_config_head_count(&m->cfg);
    hs_pooled_map *maps = calloc((size_t)n_maps, sizeof *maps);
    int rc = -1;
    if (!pos || !r || !maps) { snprintf(err, errlen, "out of memory"); goto fail; }
    for (int i = 0; i < n_probe; i++) pos[i] = smp.probe_start + i;
    hs_probe_opts o;
    memset(&o, 0, sizeof o);
    o.tokens = smp.tokens;
    o.T = smp.length;
    o.probe_pos = pos;
    o.n_probe = n_probe;
    o.span_start = smp.span_start;
    o.span_end = smp.span_end;
    o.topk = s->topk;
    o.max_new = hs_needle_max_new(&smp);
    o.expect = smp.value;
    o.progress = job_progress;
    o.use_cuda = c->device_resolved == HS_DEVICE_CUDA;
    jc->lo = 0; jc->hi = 0.6;
    o.progress_ctx = jc;
    rc = hs_probe_run(r, m, &s->knobs, &o, NULL, NULL, err, errlen);
    if (rc != 0) goto fail;

    /* The small maps: one more forward that pools every head (on the GPU inside the CUDA
     * forward, on the CPU through the capture hook). */
    jc->lo = 0.6; jc->hi = 1.0;
    if (o.use_cuda) {
        hs_map_opts *mo = calloc((size_t)n_maps, sizeof *mo);
        if (!mo) { snprintf(err, errlen, "out of memory"); rc = -1; goto fail; }
        for (int l = 0, i = 0; l < m->cfg.num_layers; l++)
            for (int j = 0; j < m->cfg.layers[l].n_mixers; j++)
                for (int h = 0; h < m->cfg.layers[l].mixers[j].num_heads; h++, i++) {
                    mo[i].head.layer = l; mo[i].head.mixer = j; mo[i].head.head = h;
                    mo[i].bins_t = mo[i].bins_s = s->bins < smp.length ? s->bins : smp.length;
                    mo[i].agg = HS_POOL_MEAN;
                }
        rc = hs_pooled_maps_cuda(maps, m, &s->knobs, smp.tokens, smp.length, mo, n_maps, NULL, job_progress, jc,
                                 err, errlen);
        free(mo);
    } else {
        maps_ctx mc = { s, maps, n_maps, &m->cfg, 0, "" };
        hs_forward_opts fo;
        memset(&fo, 0, sizeof fo);
        fo.capture = maps_capture;
        fo.capture_ctx = &mc;
        fo.progress = job_progress;
        fo.progress_ctx = jc;
        rc = hs_forward(m, smp.tokens, smp.length, &s->knobs, &fo, err, errlen);
        if (rc == 0 && mc.failed) { snprintf(err, errlen, "pooled maps: %.400s", mc.err); rc = -1; }
    }
    if (rc != 0) goto fail;
    out->probe = r;
    out->maps = maps;
    out->n_maps = n_maps;
    free(pos);
    hs_needle_sample_free(&smp);
    return 0;
fail:
    if (r) { hs_probe_result_free(r); free(r); }
    if (maps) { for (int i = 0; i < n_maps; i++) hs_pooled_map_free(&maps[i]); free(maps); }
    free(pos);
    hs_needle_sample_free(&smp);
    return rc;
}

/* ---- job: the selected head's large map over the zoom window ---- */

static int job_headmap(hs_pooled_map **out, hs_controller *c, const hs_settings *s,
                       const hs_model *m, job_ctx *jc, char *err, size_t errlen) {
    hs_head_ref ref;
    if (hs_ctl_head_ref(&m->cfg, s->sel_head, &ref) != 0) {
        snprintf(err, errlen, "no head %d in this model", s->sel_head);
        return -1;
    }
    hs_needle_sample smp;
    memset(&smp, 0, sizeof smp);
    if (make_sample(&smp, c, s, err, errlen) != 0) return -1;
    hs_pooled_map *map = calloc(1, sizeof *map);
    if (!map) { hs_needle_sample_free(&smp); snprintf(err, errlen, "out of memory"); return -1; }
    hs_map_opts o;
    memset(&o, 0, sizeof o);
    o.head = ref;
    if (s->zoom_t1 > 0) { o.t0 = s->zoom_t0; o.t1 = s->zoom_t1; o.s0 = s->zoom_s0; o.s1 = s->zoom_s1; }
    int span_t = (o.t1 ? o.t1 : smp.length) - o.t0, span_s = (o.s1 ? o.s1 : smp.length) - o.s0;
    o.bins_t = s->head_bins < span_t ? s->head_bins : span_t;
    o.bins_s = s->head_bins < span_s ? s->head_bins : span_s;
    o.agg = HS_POOL_MEAN;
    jc->lo = 0; jc->hi = 1;
    int rc = c->device_resolved == HS_DEVICE_CUDA
                 ? hs_pooled_maps_cuda(map, m, &s->knobs, smp.tokens, smp.length, &o, 1, NULL, job_progress, jc,
                                       err, errlen)
                 : hs_pooled_map_compute(map, m, &s->knobs, smp.tokens, smp.length, &o, NULL,
                                         job_progress, jc, err, errlen);
    hs_needle_sample_free(&smp);
    if (rc != 0) { hs_pooled_map_free(map); free(map); return rc; }
    *out = map;
    return 0;
}

/* ---- job: the needle sweep, shown live ---- */

/* Copies the grid of src (same shape) into dst, which the UI reads under the lock. */
static void niah_copy_counts(hs_niah_result *dst, const hs_niah_result *src) {
    int cells = src->n_tasks * src->n_lengths * src->n_depths;
    memcpy(dst->correct, src->correct, sizeof(int) * (size_t)cells);
    memcpy(dst->done, src->done, sizeof(int) * (size_t)cells);
    for (int i = 0; i < cells; i++) {
        dst->shown[i] = src->shown[i];
        dst->shown[i].tokens = NULL;
        dst->shown_outcome[i] = src->shown_outcome[i];
    }
}

typedef struct {
    job_ctx *jc;
    hs_niah_result *live;      /* the UI's copy (owned by the controller once installed) */
    int installed;
} niah_ctx;

static int niah_on_sample(void *ctx, const hs_niah_result *r, int task_i, int length_i,
                          int depth_i, int sample, const hs_needle_sample *s,
                          const hs_needle_outcome *o, double seconds) {
    (void)task_i; (void)length_i; (void)depth_i; (void)sample; (void)s; (void)o; (void)seconds;
    niah_ctx *n = ctx;
    hs_controller *c = n->jc->c;
    int cells = r->n_tasks * r->n_lengths * r->n_depths, done = 0;
    for (int i = 0; i < cells; i++) done += r->done[i];
    double f = (double)done / ((double)cells * r->samples);
    hs_ctl_lock(c);
    if (c->niah == n->live && c->jobs[HS_JOB_NIAH].want == n->jc->version) {
        niah_copy_counts(n->live, r);
        snprintf(c->job_text, sizeof c->job_text, "needle sweep %d/%d", done, cells * r->samples);
    }
    hs_ctl_unlock(c);
    return job_progress(n->jc, f);
}

static int job_niah(hs_niah_result **out, hs_controller *c, const hs_settings *s,
                    const hs_model *m, job_ctx *jc, char *err, size_t errlen) {
    const hs_assets *a = get_assets(c, err, errlen);
    if (!a) return -1;
    hs_niah_result *r = calloc(1, sizeof *r), *live = calloc(1, sizeof *live);
    if (!r || !live) { free(r); free(live); snprintf(err, errlen, "out of memory"); return -1; }
    if (hs_niah_result_init(r, s->sweep_tasks, s->n_sweep_tasks, s->sweep_lengths,
                            s->n_sweep_lengths, s->sweep_depths, s->n_sweep_depths,
                            s->sweep_samples, err, errlen) != 0 ||
        hs_niah_result_init(live, s->sweep_tasks, s->n_sweep_tasks, s->sweep_lengths,
                            s->n_sweep_lengths, s->sweep_depths, s->n_sweep_depths,
                            s->sweep_samples, err, errlen) != 0) {
        hs_niah_result_free(r); free(r);
        hs_niah_result_free(live); free(live);
        return -1;
    }
    /* The empty grid goes up at once and fills in as samples finish. */
    niah_ctx nc = { jc, live, 0 };
    hs_ctl_lock(c);
    if (c->jobs[HS_JOB_NIAH].want == jc->version) {
        if (c->niah) { hs_niah_result_free(c->niah); free(c->niah); }
        c->niah = live;
        nc.installed = 1;
    }
    hs_ctl_unlock(c);
    if (!nc.installed) { hs_niah_result_free(live); free(live); nc.live = NULL; }
    hs_forward_opts fo;
    memset(&fo, 0, sizeof fo);
    fo.progress = still_wanted;   /* a long sample stops mid-forward when the sweep is stale */
    fo.progress_ctx = jc;
    jc->lo = 0; jc->hi = 1;
    /* On CUDA the sweep's generation (prefill and decoder steps) runs on the device. */
    hs_device_forward df;
    memset(&df, 0, sizeof df);
    int on_cuda = c->device_resolved == HS_DEVICE_CUDA;
    int rc = HS_CANCELLED;
    if (nc.installed && on_cuda && hs_device_forward_open(&df, HS_DEVICE_CUDA, m, &s->knobs, err, errlen) != 0)
        rc = -1;
    else if (nc.installed)
        rc = hs_niah_sweep(r, m, &s->knobs, a, s->seed, &fo, NULL, on_cuda ? hs_device_forward_generate : NULL,
                           on_cuda ? &df : NULL, niah_on_sample, &nc, err, errlen);
    if (on_cuda) hs_device_forward_close(&df);
    if (rc != 0) { hs_niah_result_free(r); free(r); return rc; }
    *out = r;
    return 0;
}

/* ---- job: perplexity by position ---- */

#define PPL_DOCS 3
#define PPL_BUCKETS 24

static int ppl_on_doc(void *ctx, int done, int total) {
    job_ctx *jc = ctx;
    return job_progress(jc, total > 0 ? (double)done / total : 1.0);
}

static int job_ppl(hs_ppl_result **out, hs_controller *c, const hs_settings *s, const hs_model *m,
                   job_ctx *jc, char *err, size_t errlen) {
    const hs_assets *a = get_assets(c, err, errlen);
    if (!a) return -1;
    size_t len = 0;
    char *stream = hs_assets_prose_stream(a, &len);
    if (!stream) { snprintf(err, errlen, "out of memory"); return -1; }
    /* the held-out prose (the sample models never trained on it: their perplexity on the rest
     * is memory, not modelling); the whole stream only where a document is longer than it */
    int32_t *docs = NULL;
    const size_t h = hs_assets_heldout_start(len);
    const char *corpus = "held-out prose";
    int n_docs = hs_ppl_documents(&docs, stream + h, len - h, s->ppl_length, PPL_DOCS, m->cfg.bos_id, err, errlen);
    if (n_docs < 0) {
        corpus = "all prose (longer than the held-out part)";
        n_docs = hs_ppl_documents(&docs, stream, len, s->ppl_length, PPL_DOCS, m->cfg.bos_id, err, errlen);
    }
    free(stream);
    if (n_docs < 0) return -1;
    hs_ppl_result *r = calloc(1, sizeof *r);
    int rc = -1;
    if (!r) snprintf(err, errlen, "out of memory");
    else rc = hs_ppl_result_init(r, s->ppl_length, PPL_BUCKETS, HS_PPL_LOG, err, errlen);
    if (rc == 0) snprintf(r->corpus, sizeof r->corpus, "%s", corpus);
    if (rc == 0) {
        hs_forward_opts base;
        memset(&base, 0, sizeof base);
        jc->lo = 0; jc->hi = 1;
        hs_device_forward df;
        memset(&df, 0, sizeof df);
        int on_cuda = c->device_resolved == HS_DEVICE_CUDA;
        if (on_cuda) rc = hs_device_forward_open(&df, HS_DEVICE_CUDA, m, &s->knobs, err, errlen);
        if (rc == 0)
            rc = hs_ppl_run(r, m, &s->knobs, docs, n_docs, &base, on_cuda ? hs_device_forward_run : NULL,
                            on_cuda ? &df : NULL, ppl_on_doc, jc, err, errlen);
        if (on_cuda) hs_device_forward_close(&df);
    }
    free(docs);
    if (rc != 0) {
        if (r) { hs_ppl_result_free(r); free(r); }
        return rc;
    }
    hs_knobs_describe(r->label, sizeof r->label, &s->knobs);
    *out = r;
    return 0;
}

/* ---- running one job ---- */

typedef struct {
    probe_out probe;
    hs_pooled_map *head_map;
    hs_niah_result *niah;
    hs_ppl_result *ppl;
} job_result;

static void free_result(hs_job_kind k, job_result *r) {
    if (k == HS_JOB_PROBE) {
        if (r->probe.probe) { hs_probe_result_free(r->probe.probe); free(r->probe.probe); }
        for (int i = 0; i < r->probe.n_maps; i++) hs_pooled_map_free(&r->probe.maps[i]);
        free(r->probe.maps);
    } else if (k == HS_JOB_HEADMAP && r->head_map) {
        hs_pooled_map_free(r->head_map); free(r->head_map);
    } else if (k == HS_JOB_NIAH && r->niah) {
        hs_niah_result_free(r->niah); free(r->niah);
    } else if (k == HS_JOB_PPL && r->ppl) {
        hs_ppl_result_free(r->ppl); free(r->ppl);
    }
    memset(r, 0, sizeof *r);
}

/* Caller holds the lock; installs r for job k (r is then owned by the controller). */
static void install(hs_controller *c, hs_job_kind k, job_result *r) {
    if (k == HS_JOB_PROBE) {
        if (c->probe) { hs_probe_result_free(c->probe); free(c->probe); }
        if (c->maps) { for (int i = 0; i < c->n_maps; i++) hs_pooled_map_free(&c->maps[i]); free(c->maps); }
        c->probe = r->probe.probe;
        c->maps = r->probe.maps;
        c->n_maps = r->probe.n_maps;
    } else if (k == HS_JOB_HEADMAP) {
        if (c->head_map) { hs_pooled_map_free(c->head_map); free(c->head_map); }
        c->head_map = r->head_map;
    } else if (k == HS_JOB_NIAH) {
        if (c->niah) { hs_niah_result_free(c->niah); free(c->niah); }
        c->niah = r->niah;
    } else if (k == HS_JOB_PPL) {
        if (c->ppl) { hs_ppl_result_free(c->ppl); free(c->ppl); }
        c->ppl = r->ppl;
    }
    memset(r, 0, sizeof *r);
}

static void describe_job(char *out, size_t n, hs_job_kind k, const hs_settings *s,
                         const hs_config *cfg, int on_cuda) {
    hs_head_ref r = { 0, 0, 0 };
    const char *where = on_cuda ? " (cuda)" : "";
    switch (k) {
    case HS_JOB_PROBE:
        snprintf(out, n, "probe %s L=%d%s", hs_needle_task_name(s->task), s->length, where);
        break;
    case HS_JOB_HEADMAP:
        hs_ctl_head_ref(cfg, s->sel_head, &r);
        snprintf(out, n, "map of head %d.%d.%d%s", r.layer, r.mixer, r.head, where);
        break;
    case HS_JOB_NIAH: snprintf(out, n, "needle sweep%s", where); break;
    case HS_JOB_PPL: snprintf(out, n, "perplexity L=%d%s", s->ppl_length, where); break;
    default: out[0] = 0;
    }
}

/* Caller holds the lock; it is released while the engine runs. Returns 0, HS_CANCELLED, or
 * -1 (message in the job slot and in err). */
static int run_job_locked(hs_controller *c, hs_job_kind k, char *err, size_t errlen) {
    unsigned version = c->jobs[k].want;
    hs_settings s = c->s;
    const hs_model *m = c->model;
    c->jobs[k].running = version;
    c->busy = 1;
    c->cur_job = k;
    c->progress = 0;
    describe_job(c->job_text, sizeof c->job_text, k, &s, &m->cfg, c->device_resolved == HS_DEVICE_CUDA);
    hs_ctl_unlock(c);

    job_ctx jc = { c, k, version, 0, 1 };
    job_result r;
    memset(&r, 0, sizeof r);
    char e[HS_ERR_LEN] = "";
    int rc;
    switch (k) {
    case HS_JOB_PROBE: rc = job_probe(&r.probe, c, &s, m, &jc, e, sizeof e); break;
    case HS_JOB_HEADMAP: rc = job_headmap(&r.head_map, c, &s, m, &jc, e, sizeof e); break;
    case HS_JOB_NIAH: rc = job_niah(&r.niah, c, &s, m, &jc, e, sizeof e); break;
    case HS_JOB_PPL: rc = job_ppl(&r.ppl, c, &s, m, &jc, e, sizeof e); break;
    default: rc = -1; snprintf(e, sizeof e, "unknown job");
    }

    hs_ctl_lock(c);
    c->busy = 0;
    c->jobs[k].running = 0;
    c->job_text[0] = 0;
    int current = c->jobs[k].want == version && !c->pending_load;
    if (rc == 0 && current) {
        install(c, k, &r);
        c->jobs[k].have = version;
    } else {
        free_result(k, &r);
        if (rc == 0) rc = HS_CANCELLED;            /* finished, but for older settings */
        if (rc < 0 && current) {
            c->jobs[k].failed = version;
            snprintf(c->jobs[k].error, sizeof c->jobs[k].error, "%s", e);
        }
    }
    if (rc < 0) snprintf(err, errlen, "%s", e);
    return rc;
}

int hs_worker_run_sync(hs_controller *c, hs_job_kind k, char *err, size_t errlen) {
    hs_ctl_lock(c);
    int rc = run_job_locked(c, k, err, errlen);
    hs_ctl_unlock(c);
    if (rc == HS_CANCELLED) { snprintf(err, errlen, "cancelled"); return -1; }
    return rc;
}

/* ---- model loading (init and the ratio switch) ---- */

int hs_worker_load_model(hs_controller *c, const char *dir, char *err, size_t errlen) {
    hs_model *m = calloc(1, sizeof *m);
    if (!m) { snprintf(err, errlen, "out of memory"); return -1; }
    if (hs_model_load(m, dir, err, errlen) != 0) { free(m); return -1; }
    hs_ctl_lock(c);
    hs_model *old = c->model;
    c->model = m;
    c->model_version++;
    if (dir != c->s.model) snprintf(c->s.model, sizeof c->s.model, "%s", dir);
    /* The new checkpoint may have other heads: keep the selection in range and drop ablation
     * targets it lacks. */
    int nh = hs_config_head_count(&m->cfg);
    if (c->s.sel_head >= nh) c->s.sel_head = nh - 1;
    char kerr[HS_ERR_LEN];
    if (old && hs_knobs_validate(&c->s.knobs, &m->cfg, kerr, sizeof kerr) != 0) {
        int kept = 0;
        for (int i = 0; i < c->s.knobs.n_ablate; i++) {
            hs_head_ref r = c->s.knobs.ablate[i];
            if (r.layer < m->cfg.num_layers && r.mixer < m->cfg.layers[r.layer].n_mixers &&
                r.head < m->cfg.layers[r.layer].mixers[r.mixer].num_heads)
                c->s.knobs.ablate[kept++] = r;
        }
        c->s.knobs.n_ablate = kept;
    }
    if (old) {
        const char *slash = strrchr(dir, '/');
        snprintf(c->s.model_name, sizeof c->s.model_name, "%s", slash && slash[1] ? slash + 1 : dir);
        /* results of the previous checkpoint do not fit this one (pinned curves stay) */
        if (c->probe) { hs_probe_result_free(c->probe); free(c->probe); c->probe = NULL; }
        if (c->ghost) { hs_probe_result_free(c->ghost); free(c->ghost); c->ghost = NULL; }
        if (c->maps) { for (int i = 0; i < c->n_maps; i++) hs_pooled_map_free(&c->maps[i]); free(c->maps); c->maps = NULL; c->n_maps = 0; }
        if (c->head_map) { hs_pooled_map_free(c->head_map); free(c->head_map); c->head_map = NULL; }
        if (c->niah) { hs_niah_result_free(c->niah); free(c->niah); c->niah = NULL; }
        if (c->ppl) { hs_ppl_result_free(c->ppl); free(c->ppl); c->ppl = NULL; }
        for (int k = 0; k < HS_JOB_KINDS; k++) c->jobs[k].have = 0;
        hs_ctl_bump(c, JOB_BIT(HS_JOB_PROBE) | JOB_BIT(HS_JOB_HEADMAP) | JOB_BIT(HS_JOB_NIAH) | JOB_BIT(HS_JOB_PPL));
    }
    hs_ctl_unlock(c);
    if (old) { hs_model_free(old); free(old); }
    return 0;
}

/* ---- the thread ---- */

/* The next job: what the current view needs, then the probe (three views share it). */
static int pick_job(hs_controller *c) {
    unsigned need = hs_ctl_view_jobs(c->s.view) | JOB_BIT(HS_JOB_PROBE);
    for (int k = 0; k < HS_JOB_KINDS; k++) {
        if (!(need & JOB_BIT(k))) continue;
        if (c->jobs[k].have != c->jobs[k].want && c->jobs[k].failed != c->jobs[k].want) {
            /* the view's own jobs first */
            if (hs_ctl_view_jobs(c->s.view) & JOB_BIT(k)) return k;
        }
    }
    int k = HS_JOB_PROBE;
    if (c->jobs[k].have != c->jobs[k].want && c->jobs[k].failed != c->jobs[k].want) return k;
    return -1;
}

static void *thread_main(void *arg) {
    hs_controller *c = arg;
    hs_ctl_lock(c);
    while (!c->quit) {
        if (c->pending_load) {
            char dir[1024], err[HS_ERR_LEN];
            snprintf(dir, sizeof dir, "%s", c->pending_model);
            hs_ctl_unlock(c);
            int rc = hs_worker_load_model(c, dir, err, sizeof err);
            hs_ctl_lock(c);
            if (!strcmp(dir, c->pending_model)) c->pending_load = 0;
            if (rc != 0) hs_ctl_set_message(c, "%s", err);
            continue;
        }
        int k = pick_job(c);
        if (k < 0) { pthread_cond_wait(&c->wake, &c->mu); continue; }
        char err[HS_ERR_LEN];
        run_job_locked(c, (hs_job_kind)k, err, sizeof err);
    }
    hs_ctl_unlock(c);
    return NULL;
}

int hs_worker_start(hs_controller *c, char *err, size_t errlen) {
    if (c->thread_started) return 0;
    c->quit = 0;
    if (pthread_create(&c->thread, NULL, thread_main, c) != 0) {
        snprintf(err, errlen, "cannot start the worker thread");
        return -1;
    }
    c->thread_started = 1;
    return 0;
}

void hs_worker_stop(hs_controller *c) {
    if (c->thread_started) {
        hs_ctl_lock(c);
        c->quit = 1;
        pthread_cond_broadcast(&c->wake);
        hs_ctl_unlock(c);
        pthread_join(c->thread, NULL);
        c->thread_started = 0;
    }
    worker_state *w = c->worker;
    if (w) {
        if (w->assets_loaded) hs_assets_free(&w->assets);
        free(w);
        c->worker = NULL;
    }
}
