/* The explorer's session: state, defaults, lifecycle, job bookkeeping and what the views are
 * handed (see controller.h). User actions live in actions.c and keys.c, families.json in
 * family.c, the engine jobs in worker.c. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/analysis_api.h"
#include "../engine/cuda_backend.h"
#include "controller_internal.h"
#include "worker.h"

void hs_ctl_lock(hs_controller *c) { pthread_mutex_lock(&c->mu); }
void hs_ctl_unlock(hs_controller *c) { pthread_mutex_unlock(&c->mu); }

unsigned hs_ctl_view_jobs(hs_view_kind v) {
    switch (v) {
    case HS_VIEW_HEADS: return JOB_BIT(HS_JOB_PROBE);
    case HS_VIEW_HEAD: return JOB_BIT(HS_JOB_PROBE) | JOB_BIT(HS_JOB_HEADMAP);
    case HS_VIEW_TIDAL: return JOB_BIT(HS_JOB_PROBE);
    case HS_VIEW_NEEDLE: return JOB_BIT(HS_JOB_NIAH);
    case HS_VIEW_PPL: return JOB_BIT(HS_JOB_PPL);
    default: return 0;
    }
}

int hs_ctl_pending(const hs_controller *c) {
    if (c->pending_load) return 1;
    unsigned need = hs_ctl_view_jobs(c->s.view);
    for (int k = 0; k < HS_JOB_KINDS; k++)
        if ((need & JOB_BIT(k)) && c->jobs[k].have != c->jobs[k].want &&
            c->jobs[k].failed != c->jobs[k].want)
            return 1;
    return 0;
}

/* Caller holds the lock. */
void hs_ctl_bump(hs_controller *c, unsigned mask) {
    for (int k = 0; k < HS_JOB_KINDS; k++)
        if (mask & JOB_BIT(k)) { c->jobs[k].want++; c->jobs[k].error[0] = 0; }
    pthread_cond_signal(&c->wake);
}

/* Caller holds the lock. A job stops when its settings changed, when it was cancelled, when a
 * new model is coming, or when the user moved to a view that waits for another job (the
 * view on screen comes first; the stopped job runs again when its view needs it). */
int hs_ctl_job_should_stop(const hs_controller *c, hs_job_kind k, unsigned version) {
    if (c->quit || c->jobs[k].want != version || c->jobs[k].failed == version || c->pending_load)
        return 1;
    unsigned need = hs_ctl_view_jobs(c->s.view);
    if (!c->thread_started || (need & JOB_BIT(k))) return 0;
    return hs_ctl_pending(c);
}

int hs_ctl_job_progress(hs_controller *c, hs_job_kind k, unsigned version, double fraction) {
    hs_ctl_lock(c);
    int cancel = hs_ctl_job_should_stop(c, k, version);
    if (!cancel && c->busy && c->cur_job == k) c->progress = fraction;
    hs_ctl_unlock(c);
    return cancel;
}

/* ---- heads ---- */

int hs_ctl_head_count(const hs_config *cfg) {
    int n = 0;
    for (int l = 0; l < cfg->num_layers; l++)
        for (int m = 0; m < cfg->layers[l].n_mixers; m++) n += cfg->layers[l].mixers[m].num_heads;
    return n;
}

int hs_ctl_head_ref(const hs_config *cfg, int index, hs_head_ref *out) {
    int n = 0;
    for (int l = 0; l < cfg->num_layers; l++)
        for (int m = 0; m < cfg->layers[l].n_mixers; m++) {
            int h = cfg->layers[l].mixers[m].num_heads;
            if (index < n + h) { out->layer = l; out->mixer = m; out->head = index - n; return 0; }
            n += h;
        }
    return -1;
}

int hs_ctl_head_index(const hs_config *cfg, int layer, int mixer, int head) {
    int n = 0;
    for (int l = 0; l < cfg->num_layers; l++)
        for (int m = 0; m < cfg->layers[l].n_mixers; m++) {
            int h = cfg->layers[l].mixers[m].num_heads;
            if (l == layer && m == mixer) return n + (head < h ? head : h - 1);
            n += h;
        }
    return 0;
}

/* ---- defaults ---- */

/* Longest context worth offering: activations are O(T*d); keep them within half of the
 * memory available now. */
static int memory_max_length(const hs_config *cfg) {
    long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    double avail = pages > 0 && psize > 0 ? (double)pages * (double)psize : 4e9;
    double per_token = 4.0 * (24.0 * cfg->hidden_size + 4.0 * cfg->intermediate_size);
    for (int l = 0; l < cfg->num_layers; l++) per_token += (double)hs_layer_cache_bytes(cfg, l, 1);
    double cap = avail / 2 / (per_token > 1 ? per_token : 1);
    int n = HS_CTL_MIN_LENGTH;
    while ((double)n * 2 <= cap && n < (1 << 20)) n *= 2;
    return n;
}

void hs_settings_defaults(hs_settings *s, const hs_config *cfg) {
    int L0 = cfg->train_context > 0 ? cfg->train_context : 1024;
    if (!s->max_length) s->max_length = memory_max_length(cfg);
    if (!s->length) s->length = L0 < HS_CTL_MIN_LENGTH ? HS_CTL_MIN_LENGTH : L0;
    if (s->length > s->max_length) s->length = s->max_length;
    if (!s->depth_given) { s->depth_pct = 50; s->depth_given = 1; }
    if (!s->seed) s->seed = 1;
    if (!s->bins) s->bins = 32;
    if (!s->head_bins) s->head_bins = 256;
    if (!s->n_sweep_tasks) {
        s->n_sweep_tasks = HS_NEEDLE_TASKS;
        for (int t = 0; t < HS_NEEDLE_TASKS; t++) s->sweep_tasks[t] = (hs_needle_task)t;
    }
    if (!s->n_sweep_lengths) {
        for (int f = 1; f <= 4 && s->n_sweep_lengths < HS_CTL_MAX_SWEEP; f *= 2) {
            int len = L0 * f;
            if (len < HS_CTL_MIN_LENGTH) len = HS_CTL_MIN_LENGTH;
            if (len > s->max_length) break;
            if (s->n_sweep_lengths && s->sweep_lengths[s->n_sweep_lengths - 1] >= len) continue;
            s->sweep_lengths[s->n_sweep_lengths++] = len;
        }
        if (!s->n_sweep_lengths) s->sweep_lengths[s->n_sweep_lengths++] = HS_CTL_MIN_LENGTH;
    }
    if (!s->n_sweep_depths) {
        for (int d = 0; d <= 100; d += 25) s->sweep_depths[s->n_sweep_depths++] = d;
    }
    if (!s->sweep_samples) s->sweep_samples = 1;
    if (!s->ppl_length) {
        s->ppl_length = 4 * L0;
        if (s->ppl_length > s->max_length) s->ppl_length = s->max_length;
        if (s->ppl_length < HS_CTL_MIN_LENGTH) s->ppl_length = HS_CTL_MIN_LENGTH;
    }
    if (!s->sel_task && !s->sel_length && !s->sel_depth) s->sel_task = s->sel_length = s->sel_depth = -1;
    int nh = hs_ctl_head_count(cfg);
    if (s->sel_head < 0 || s->sel_head >= nh) s->sel_head = 0;
}

/* ---- needle prompt lengths ---- */

int hs_ctl_pow2_at_least(int n) {
    int p = HS_CTL_MIN_LENGTH;
    while (p < n && p < (1 << 30)) p *= 2;
    return p;
}

/* Needle prompts have a minimum length (the question and the needle must fit). Lengths the
 * user gave that are too short are bad input; defaults are raised to the next power of two. */
static int fit_lengths(hs_controller *c, int length_given, int lengths_given, char *err, size_t errlen) {
    for (int t = 0; t < HS_NEEDLE_TASKS; t++) {
        int m = hs_worker_min_length(c, (hs_needle_task)t, err, errlen);
        if (m < 0) return -1;
        c->min_length[t] = m < HS_CTL_MIN_LENGTH ? HS_CTL_MIN_LENGTH : m;
    }
    static const char *names[] = { "sk1", "sk2", "sk3" };
    hs_settings *s = &c->s;
    int need = c->min_length[s->task];
    if (s->length < need) {
        if (length_given) {
            snprintf(err, errlen, "--length %d is too short for %s: its prompts need at least %d tokens",
                     s->length, names[s->task], need);
            return -1;
        }
        s->length = hs_ctl_pow2_at_least(need);
    }
    int sweep_need = 0;
    for (int i = 0; i < s->n_sweep_tasks; i++)
        if (c->min_length[s->sweep_tasks[i]] > sweep_need) sweep_need = c->min_length[s->sweep_tasks[i]];
    int kept = 0;
    for (int i = 0; i < s->n_sweep_lengths; i++) {
        if (s->sweep_lengths[i] >= sweep_need) { s->sweep_lengths[kept++] = s->sweep_lengths[i]; continue; }
        if (lengths_given) {
            snprintf(err, errlen, "--lengths: %d is too short for the needle tasks (at least %d tokens)",
                     s->sweep_lengths[i], sweep_need);
            return -1;
        }
    }
    s->n_sweep_lengths = kept;
    if (!kept) {   /* defaults all too short: start at the first power of two that fits */
        int L = hs_ctl_pow2_at_least(sweep_need);
        for (int f = 0; f < 3 && L <= s->max_length; f++, L *= 2) s->sweep_lengths[s->n_sweep_lengths++] = L;
        if (!s->n_sweep_lengths) s->sweep_lengths[s->n_sweep_lengths++] = hs_ctl_pow2_at_least(sweep_need);
    }
    return 0;
}

/* ---- lifecycle ---- */

static void basename_of(char *out, size_t n, const char *dir) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s", dir);
    size_t l = strlen(tmp);
    while (l > 1 && tmp[l - 1] == '/') tmp[--l] = 0;
    const char *s = strrchr(tmp, '/');
    snprintf(out, n, "%.120s", s ? s + 1 : tmp);
}

int hs_ctl_init(hs_controller *c, const hs_settings *s, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->wake, NULL);
    c->s = *s;
    if (c->s.device < 0) c->s.device = HS_DEVICE_AUTO;
    int dev = hs_device_resolve(c->s.device, err, errlen);
    if (dev < 0) return -1;
    c->device_resolved = dev;
    if (hs_worker_load_model(c, c->s.model, err, errlen) != 0) return -1;
    int length_given = s->length > 0, lengths_given = s->n_sweep_lengths > 0;
    hs_settings_defaults(&c->s, &c->model->cfg);
    if (fit_lengths(c, length_given, lengths_given, err, errlen) != 0) return -1;
    char kerr[HS_ERR_LEN];
    if (hs_knobs_validate(&c->s.knobs, &c->model->cfg, kerr, sizeof kerr) != 0) {
        snprintf(err, errlen, "%s", kerr);
        return -1;
    }
    if (c->s.head_given) {
        const hs_config *cfg = &c->model->cfg;
        hs_head_ref r = c->s.head_ref;
        if (r.layer >= cfg->num_layers || r.mixer >= cfg->layers[r.layer].n_mixers ||
            r.head >= cfg->layers[r.layer].mixers[r.mixer].num_heads) {
            snprintf(err, errlen, "--head %d.%d.%d: no such head in %s", r.layer, r.mixer, r.head,
                     c->s.model);
            return -1;
        }
        c->s.sel_head = hs_ctl_head_index(cfg, r.layer, r.mixer, r.head);
    }
    if (c->s.zoom_t1 > c->s.length || c->s.zoom_s1 > c->s.length) {
        snprintf(err, errlen, "--zoom: window ends past the prompt length %d", c->s.length);
        return -1;
    }
    if (!c->s.model_name[0]) basename_of(c->s.model_name, sizeof c->s.model_name, c->s.model);
    hs_ctl_load_family(c);
    for (int k = 0; k < HS_JOB_KINDS; k++) c->jobs[k].want = 1;
    return 0;
}

int hs_ctl_start(hs_controller *c, char *err, size_t errlen) {
    return hs_worker_start(c, err, errlen);
}

void hs_ctl_free_probe(hs_probe_result **p) {
    if (*p) { hs_probe_result_free(*p); free(*p); *p = NULL; }
}
static void free_map(hs_pooled_map **p) {
    if (*p) { hs_pooled_map_free(*p); free(*p); *p = NULL; }
}

void hs_ctl_free(hs_controller *c) {
    hs_worker_stop(c);
    hs_ctl_free_probe(&c->probe);
    hs_ctl_free_probe(&c->ghost);
    if (c->maps) {
        for (int i = 0; i < c->n_maps; i++) hs_pooled_map_free(&c->maps[i]);
        free(c->maps);
        c->maps = NULL;
    }
    free_map(&c->head_map);
    if (c->niah) { hs_niah_result_free(c->niah); free(c->niah); c->niah = NULL; }
    if (c->ppl) { hs_ppl_result_free(c->ppl); free(c->ppl); c->ppl = NULL; }
    for (int i = 0; i < c->n_pins; i++) hs_ppl_result_free(&c->pins[i]);
    c->n_pins = 0;
    if (c->model) { hs_model_free(c->model); free(c->model); c->model = NULL; }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->wake);
}

int hs_ctl_compute_sync(hs_controller *c, hs_view_kind v, char *err, size_t errlen) {
    if (c->pending_load) {
        c->pending_load = 0;
        if (hs_worker_load_model(c, c->pending_model, err, errlen) != 0) return -1;
    }
    unsigned need = hs_ctl_view_jobs(v);
    for (int k = 0; k < HS_JOB_KINDS; k++) {
        if (!(need & JOB_BIT(k)) || c->jobs[k].have == c->jobs[k].want) continue;
        if (hs_worker_run_sync(c, (hs_job_kind)k, err, errlen) != 0) return -1;
    }
    return 0;
}

/* ---- inputs for drawing ---- */

void hs_ctl_view_input(hs_controller *c, hs_view_input *in) {
    memset(in, 0, sizeof *in);
    in->cfg = c->model ? &c->model->cfg : NULL;
    in->model_name = c->s.model_name;
    in->knobs = &c->s.knobs;
    in->length = c->s.length;
    in->depth_pct = c->s.depth_pct;
    in->topk = c->probe ? c->probe->topk : c->s.topk ? c->s.topk : hs_topk_default(c->s.length);
    in->task = c->s.task;
    /* Shown only when they belong to the current settings' model (a stale result of the same
     * model stays visible until the new one replaces it: the view keeps its shape). */
    in->probe = c->probe;
    in->maps = c->maps;
    in->n_maps = c->n_maps;
    in->sel_head = c->s.sel_head;
    in->ghost = c->ghost;
    in->ghost_label = c->ghost ? c->ghost_label : NULL;
    in->head_map = c->head_map;
    in->log_color = c->s.log_color;
    in->niah = c->niah;
    in->sel_task = c->s.sel_task;
    in->sel_length = c->s.sel_length;
    in->sel_depth = c->s.sel_depth;
    /* Perplexity: pinned curves first, then the live one. The pins array is followed by the
     * live curve copy slot so the view gets one contiguous array. */
    in->ppl = NULL;
    in->n_ppl = 0;
    if (c->n_pins || c->ppl) {
        if (c->ppl) {
            c->pins[c->n_pins] = *c->ppl;   /* shallow copy into the spare slot */
            in->n_ppl = c->n_pins + 1;
        } else {
            in->n_ppl = c->n_pins;
        }
        in->ppl = c->pins;
    }
    in->max_length = c->s.max_length;
}

const char *hs_ctl_job_name(hs_job_kind k) {
    switch (k) {
    case HS_JOB_PROBE: return "probe";
    case HS_JOB_HEADMAP: return "head map";
    case HS_JOB_NIAH: return "needle sweep";
    case HS_JOB_PPL: return "perplexity";
    default: return "job";
    }
}

void hs_ctl_chrome_input(hs_controller *c, hs_chrome_input *in) {
    memset(in, 0, sizeof *in);
    hs_knobs_describe(c->knobs_text, sizeof c->knobs_text, &c->s.knobs);
    size_t kl = strlen(c->knobs_text);
    snprintf(c->knobs_text + kl, sizeof c->knobs_text - kl, "  %s L=%d d=%d%%",
             c->s.task == HS_SK1 ? "sk1" : c->s.task == HS_SK2 ? "sk2" : "sk3", c->s.length,
             c->s.depth_pct);
    kl = strlen(c->knobs_text);
    if (c->n_siblings > 1)
        snprintf(c->knobs_text + kl, sizeof c->knobs_text - kl, " ratio=%s",
                 c->siblings[c->sibling].ratio);
    if (c->s.device == HS_DEVICE_AUTO)
        snprintf(c->device_text, sizeof c->device_text, "auto:%s",
                 hs_device_name(c->device_resolved));
    else
        snprintf(c->device_text, sizeof c->device_text, "%s", hs_device_name(c->device_resolved));
    in->model_name = c->s.model_name;
    in->device = c->device_text;
    in->knobs = c->knobs_text;
    in->progress = -1;
    if (c->pending_load) {
        snprintf(c->job_line, sizeof c->job_line, "loading %.140s", c->pending_model);
        in->job = c->job_line;
    } else if (c->busy) {
        snprintf(c->job_line, sizeof c->job_line, "%s", c->job_text[0] ? c->job_text : hs_ctl_job_name(c->cur_job));
        in->job = c->job_line;
        in->progress = c->progress;
    } else if (hs_ctl_pending(c)) {
        snprintf(c->job_line, sizeof c->job_line, "queued");
        in->job = c->job_line;
    }
    in->message = c->message[0] ? c->message : NULL;
    if (!in->message) {
        unsigned need = hs_ctl_view_jobs(c->s.view);
        for (int k = 0; k < HS_JOB_KINDS; k++)
            if ((need & JOB_BIT(k)) && c->jobs[k].error[0]) { in->message = c->jobs[k].error; break; }
    }
    in->view = c->s.view;
}

