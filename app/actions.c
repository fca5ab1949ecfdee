/* Everything the user can change in a session; each action takes the lock itself and bumps
 * the versions of the jobs it makes stale. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/cuda_backend.h"
#include "../views/paint_cairo.h"
#include "controller_internal.h"
#include "worker.h"

void hs_ctl_set_message(hs_controller *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->message, sizeof c->message, fmt, ap);
    va_end(ap);
}

void hs_ctl_set_view(hs_controller *c, hs_view_kind v) {
    if ((int)v < 0 || v >= HS_VIEW_COUNT) return;
    hs_ctl_lock(c);
    c->s.view = v;
    pthread_cond_signal(&c->wake);
    hs_ctl_unlock(c);
}

void hs_ctl_reset_zoom_locked(hs_controller *c) {
    c->s.zoom_t0 = c->s.zoom_t1 = c->s.zoom_s0 = c->s.zoom_s1 = 0;
}

void hs_ctl_select_head(hs_controller *c, int head) {
    hs_ctl_lock(c);
    int n = c->model ? hs_ctl_head_count(&c->model->cfg) : 0;
    if (head >= 0 && head < n && head != c->s.sel_head) {
        c->s.sel_head = head;
        hs_ctl_reset_zoom_locked(c);
        hs_ctl_bump(c, JOB_BIT(HS_JOB_HEADMAP));
    }
    hs_ctl_unlock(c);
}

/* Moves the selection through the layers x heads grid the heads view draws: left/right along
 * a layer's heads (all its mixers), up/down to the same column of the neighbouring layer. */
void hs_ctl_move_head(hs_controller *c, int dlayer, int dhead) {
    hs_ctl_lock(c);
    if (!c->model) { hs_ctl_unlock(c); return; }
    const hs_config *cfg = &c->model->cfg;
    hs_head_ref r;
    if (hs_ctl_head_ref(cfg, c->s.sel_head, &r) != 0) { hs_ctl_unlock(c); return; }
    int col = r.head;
    for (int m = 0; m < r.mixer; m++) col += cfg->layers[r.layer].mixers[m].num_heads;
    int layer = r.layer + dlayer;
    if (layer < 0) layer = 0;
    if (layer >= cfg->num_layers) layer = cfg->num_layers - 1;
    int width = 0;
    for (int m = 0; m < cfg->layers[layer].n_mixers; m++) width += cfg->layers[layer].mixers[m].num_heads;
    col += dhead;
    if (col < 0) col = 0;
    if (col >= width) col = width - 1;
    int mixer = 0;
    while (mixer < cfg->layers[layer].n_mixers - 1 && col >= cfg->layers[layer].mixers[mixer].num_heads) {
        col -= cfg->layers[layer].mixers[mixer].num_heads;
        mixer++;
    }
    int idx = hs_ctl_head_index(cfg, layer, mixer, col);
    hs_ctl_unlock(c);
    hs_ctl_select_head(c, idx);
}

void hs_ctl_select_cell(hs_controller *c, int task, int length, int depth) {
    hs_ctl_lock(c);
    int nt = c->s.n_sweep_tasks, nl = c->s.n_sweep_lengths, nd = c->s.n_sweep_depths;
    if (task >= 0 && task < nt && length >= 0 && length < nl && depth >= 0 && depth < nd) {
        c->s.sel_task = task; c->s.sel_length = length; c->s.sel_depth = depth;
    }
    hs_ctl_unlock(c);
}

void hs_ctl_move_cell(hs_controller *c, int dl, int dd, int dt) {
    hs_ctl_lock(c);
    int t = c->s.sel_task, l = c->s.sel_length, d = c->s.sel_depth;
    if (t < 0 || l < 0 || d < 0) { t = 0; l = 0; d = 0; }
    else { t += dt; l += dl; d += dd; }
    if (t < 0) t = c->s.n_sweep_tasks - 1;
    if (t >= c->s.n_sweep_tasks) t = 0;
    if (l < 0) l = 0;
    if (l >= c->s.n_sweep_lengths) l = c->s.n_sweep_lengths - 1;
    if (d < 0) d = 0;
    if (d >= c->s.n_sweep_depths) d = c->s.n_sweep_depths - 1;
    hs_ctl_unlock(c);
    hs_ctl_select_cell(c, t, l, d);
}

void hs_ctl_set_length(hs_controller *c, int length) {
    hs_ctl_lock(c);
    int need = c->min_length[c->s.task] > HS_CTL_MIN_LENGTH ? c->min_length[c->s.task] : HS_CTL_MIN_LENGTH;
    if (length < need) {
        length = hs_ctl_pow2_at_least(need);
        if (length > c->s.length) length = c->s.length;
        if (length < need) length = need;
        hs_ctl_set_message(c, "%s prompts need at least %d tokens",
                           c->s.task == HS_SK1 ? "sk1" : c->s.task == HS_SK2 ? "sk2" : "sk3", need);
    }
    if (length > c->s.max_length) {
        length = c->s.max_length;
        hs_ctl_set_message(c, "length capped at %d tokens (memory)", length);
    }
    if (length != c->s.length) {
        c->s.length = length;
        hs_ctl_reset_zoom_locked(c);
        hs_ctl_bump(c, PROMPT_JOBS);
    }
    hs_ctl_unlock(c);
}

void hs_ctl_set_depth(hs_controller *c, int depth) {
    hs_ctl_lock(c);
    if (depth < 0) depth = 0;
    if (depth > 100) depth = 100;
    if (depth != c->s.depth_pct) { c->s.depth_pct = depth; hs_ctl_bump(c, PROMPT_JOBS); }
    hs_ctl_unlock(c);
}

void hs_ctl_set_topk(hs_controller *c, int topk) {
    hs_ctl_lock(c);
    if (topk < 1) topk = 1;
    if (topk > c->s.length) topk = c->s.length;
    if (topk != c->s.topk) { c->s.topk = topk; hs_ctl_bump(c, JOB_BIT(HS_JOB_PROBE)); }
    hs_ctl_unlock(c);
}

void hs_ctl_cycle_task(hs_controller *c) {
    hs_ctl_lock(c);
    c->s.task = (hs_needle_task)((c->s.task + 1) % HS_NEEDLE_TASKS);
    if (c->s.length < c->min_length[c->s.task]) {
        c->s.length = hs_ctl_pow2_at_least(c->min_length[c->s.task]);
        hs_ctl_reset_zoom_locked(c);
        hs_ctl_set_message(c, "length raised to %d: these prompts need at least %d tokens",
                           c->s.length, c->min_length[c->s.task]);
    }
    hs_ctl_bump(c, PROMPT_JOBS);
    hs_ctl_unlock(c);
}

/* Knob changes keep the previous probe as the tidal plot's ghost. Caller holds the lock. */
static void knobs_changed_locked(hs_controller *c, const hs_knobs *old) {
    if (c->probe) {
        hs_ctl_free_probe(&c->ghost);
        c->ghost = c->probe;
        c->probe = NULL;
        c->jobs[HS_JOB_PROBE].have = 0;
        hs_knobs_describe(c->ghost_label, sizeof c->ghost_label, old);
        /* The small maps stay up (drawn without statistics) until the new ones replace
         * them, so the heads view does not blank on every knob press. */
    }
    hs_ctl_bump(c, ALL_JOBS);
}

/* The model's train_context (what knobs default to). Caller holds the lock. */
static int l0_locked(const hs_controller *c) {
    return c->model && c->model->cfg.train_context > 0 ? c->model->cfg.train_context : 1024;
}

/* Log scaling and windows are no-ops on prompts no longer than their L0 / window: say so
 * when one is switched on there, or the user sees nothing move and cannot tell why. */
static void hint_inert_knobs_locked(hs_controller *c, const hs_knobs *old) {
    const hs_knobs *k = &c->s.knobs;
    if (!c->model) return;
    int L0 = l0_locked(c);
    int T = c->s.length;
    const char *what = NULL;
    int reach = 0;
    if (k->log_scale && !old->log_scale) {
        reach = k->log_scale_L0 ? k->log_scale_L0 : L0;
        what = "log scaling";
    } else if (k->swla == HS_SWLA_EXACT && old->swla != HS_SWLA_EXACT) {
        reach = k->swla_window ? k->swla_window : L0;
        what = "SWLA";
    } else if (k->rope_window && !old->rope_window) {
        reach = k->rope_window == HS_KNOB_L0 ? L0 : k->rope_window;
        what = "the RoPE window";
    }
    if (what && T <= reach)
        hs_ctl_set_message(c, "%s changes nothing on prompts of %d <= %d tokens: press > for longer ones",
                           what, T, reach);
}

void hs_ctl_set_knobs(hs_controller *c, const hs_knobs *k) {
    hs_ctl_lock(c);
    char err[HS_ERR_LEN];
    if (c->model && hs_knobs_validate(k, &c->model->cfg, err, sizeof err) != 0) {
        hs_ctl_set_message(c, "%s", err);
    } else if (memcmp(k, &c->s.knobs, sizeof *k) != 0) {
        hs_knobs old = c->s.knobs;
        c->s.knobs = *k;
        knobs_changed_locked(c, &old);
        hint_inert_knobs_locked(c, &old);
    }
    hs_ctl_unlock(c);
}

static hs_knobs current_knobs(hs_controller *c) {
    hs_ctl_lock(c);
    hs_knobs k = c->s.knobs;
    hs_ctl_unlock(c);
    return k;
}

static int l0_of(hs_controller *c) {
    hs_ctl_lock(c);
    int L0 = l0_locked(c);
    hs_ctl_unlock(c);
    return L0;
}

void hs_ctl_cycle_swla(hs_controller *c) {
    hs_knobs k = current_knobs(c);
    k.swla = (hs_swla_mode)((k.swla + 1) % 3);
    if (k.swla == HS_SWLA_OFF) k.swla_window = 0;   /* the window belongs to SWLA */
    if (k.swla != HS_SWLA_OVERLAP) k.swla_stride = 0;
    hs_ctl_set_knobs(c, &k);
}

void hs_ctl_scale_swla_window(hs_controller *c, int up) {
    hs_knobs k = current_knobs(c);
    int w = k.swla_window ? k.swla_window : l0_of(c);
    w = up ? w * 2 : w / 2;
    if (w < 16) w = 16;
    if (w > (1 << 20)) w = 1 << 20;
    k.swla_window = w;
    if (k.swla_stride > w) k.swla_stride = 0;
    if (k.swla == HS_SWLA_OFF) k.swla = HS_SWLA_EXACT;
    hs_ctl_set_knobs(c, &k);
}

void hs_ctl_toggle_log_scale(hs_controller *c) {
    hs_knobs k = current_knobs(c);
    k.log_scale = !k.log_scale;
    if (!k.log_scale) k.log_scale_L0 = 0;   /* L0 belongs to log scaling */
    hs_ctl_set_knobs(c, &k);
}

/* The smallest swa window of the model (what the knob replaces). */
static int model_swa_window(hs_controller *c) {
    int w = 0;
    hs_ctl_lock(c);
    if (c->model)
        for (int l = 0; l < c->model->cfg.num_layers; l++)
            for (int m = 0; m < c->model->cfg.layers[l].n_mixers; m++) {
                const hs_mixer_config *mc = &c->model->cfg.layers[l].mixers[m];
                if (mc->type == HS_SWA && (w == 0 || mc->window < w)) w = mc->window;
            }
    hs_ctl_unlock(c);
    return w;
}

void hs_ctl_scale_swa_window(hs_controller *c, int up) {
    int base = model_swa_window(c);
    if (!base) {
        hs_ctl_lock(c);
        hs_ctl_set_message(c, "this model has no SWA mixer (swa window has no effect)");
        hs_ctl_unlock(c);
        return;
    }
    hs_knobs k = current_knobs(c);
    int w = k.swa_window ? k.swa_window : base;
    w = up ? w * 2 : w / 2;
    if (w < 4) w = 4;
    if (w > (1 << 20)) w = 1 << 20;
    k.swa_window = (w == base) ? 0 : w;
    hs_ctl_set_knobs(c, &k);
}

/* From off, either key turns the window on at L0; below 64 tokens it switches off. */
void hs_ctl_scale_rope_window(hs_controller *c, int up) {
    hs_knobs k = current_knobs(c);
    if (!k.rope_window) k.rope_window = l0_of(c);
    else k.rope_window = up ? k.rope_window * 2 : k.rope_window / 2;
    if (k.rope_window < 64) k.rope_window = 0;
    if (k.rope_window > (1 << 20)) k.rope_window = 1 << 20;
    hs_ctl_set_knobs(c, &k);
}

/* Log scaling's L0 (switches log scaling on). */
void hs_ctl_scale_log_L0(hs_controller *c, int up) {
    hs_knobs k = current_knobs(c);
    int L0 = k.log_scale_L0 ? k.log_scale_L0 : l0_of(c);
    L0 = up ? L0 * 2 : L0 / 2;
    if (L0 < 16) L0 = 16;
    if (L0 > (1 << 20)) L0 = 1 << 20;
    k.log_scale = 1;
    k.log_scale_L0 = L0 == l0_of(c) ? 0 : L0;
    hs_ctl_set_knobs(c, &k);
}

void hs_ctl_toggle_ablate_selected(hs_controller *c) {
    hs_ctl_lock(c);
    hs_head_ref r;
    int ok = c->model && hs_ctl_head_ref(&c->model->cfg, c->s.sel_head, &r) == 0;
    hs_ctl_unlock(c);
    if (!ok) return;
    hs_knobs k = current_knobs(c);
    int found = -1;
    for (int i = 0; i < k.n_ablate; i++)
        if (k.ablate[i].layer == r.layer && k.ablate[i].mixer == r.mixer && k.ablate[i].head == r.head)
            found = i;
    if (found >= 0) {
        k.ablate[found] = k.ablate[--k.n_ablate];
    } else if (k.n_ablate < HS_MAX_ABLATE) {
        k.ablate[k.n_ablate++] = r;
    }
    hs_ctl_set_knobs(c, &k);
}

/* Caller holds the lock. Queues (worker) the model at dir; keeps every other setting. */
static void request_model_locked(hs_controller *c, const char *dir) {
    snprintf(c->pending_model, sizeof c->pending_model, "%s", dir);
    c->pending_load = 1;
    hs_ctl_bump(c, ALL_JOBS);   /* cancels the job in flight */
}

int hs_ctl_switch_model(hs_controller *c, const char *dir, char *err, size_t errlen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (!hs_ctl_is_file(path)) {
        snprintf(err, errlen, "%s: not a model directory (no config.json)", dir);
        return -1;
    }
    hs_ctl_lock(c);
    request_model_locked(c, dir);
    int threaded = c->thread_started;
    hs_ctl_unlock(c);
    if (!threaded) {
        c->pending_load = 0;
        return hs_worker_load_model(c, dir, err, errlen);
    }
    return 0;
}

int hs_ctl_cycle_ratio(hs_controller *c) {
    hs_ctl_lock(c);
    if (c->n_siblings < 2) {
        hs_ctl_set_message(c, "no sibling checkpoints with another hybrid ratio "
                              "(families.json lists none for %s)", c->s.model_name);
        hs_ctl_unlock(c);
        return -1;
    }
    int next = (c->sibling + 1) % c->n_siblings;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", c->siblings[next].dir);
    hs_ctl_unlock(c);
    char err[HS_ERR_LEN];
    if (hs_ctl_switch_model(c, dir, err, sizeof err) != 0) {
        hs_ctl_lock(c);
        hs_ctl_set_message(c, "%s", err);
        hs_ctl_unlock(c);
        return -1;
    }
    hs_ctl_lock(c);
    c->sibling = next;
    hs_ctl_set_message(c, "ratio %s: %s", c->siblings[next].ratio, c->siblings[next].name);
    hs_ctl_unlock(c);
    return 0;
}

void hs_ctl_cycle_device(hs_controller *c) {
    hs_ctl_lock(c);
    int want = c->s.device == HS_DEVICE_AUTO ? HS_DEVICE_CPU
             : c->s.device == HS_DEVICE_CPU ? HS_DEVICE_CUDA : HS_DEVICE_AUTO;
    char err[HS_ERR_LEN];
    int got = hs_device_resolve(want, err, sizeof err);
    if (got < 0) {
        /* "no CUDA device": say so, and move on to auto (which is the CPU here). */
        hs_ctl_set_message(c, "%s", err);
        want = HS_DEVICE_AUTO;
        got = hs_device_resolve(want, err, sizeof err);
    } else {
        c->message[0] = 0;
    }
    if (got >= 0) {
        int changed = got != c->device_resolved;
        c->s.device = want;
        c->device_resolved = got;
        if (changed) hs_ctl_bump(c, ALL_JOBS);
    }
    hs_ctl_unlock(c);
}

void hs_ctl_set_zoom(hs_controller *c, int t0, int t1, int s0, int s1) {
    hs_ctl_lock(c);
    int T = c->s.length;
    if (t0 < 0) t0 = 0;
    if (s0 < 0) s0 = 0;
    if (t1 > T) t1 = T;
    if (s1 > T) s1 = T;
    if (t1 - t0 < 4 || s1 - s0 < 4 || (t0 == 0 && s0 == 0 && t1 == T && s1 == T)) {
        if (t1 - t0 >= 4 && s1 - s0 >= 4) t0 = t1 = s0 = s1 = 0;   /* whole sequence */
        else { hs_ctl_unlock(c); return; }                           /* too small: keep */
    }
    if (t0 != c->s.zoom_t0 || t1 != c->s.zoom_t1 || s0 != c->s.zoom_s0 || s1 != c->s.zoom_s1) {
        c->s.zoom_t0 = t0; c->s.zoom_t1 = t1; c->s.zoom_s0 = s0; c->s.zoom_s1 = s1;
        hs_ctl_bump(c, JOB_BIT(HS_JOB_HEADMAP));
    }
    hs_ctl_unlock(c);
}

void hs_ctl_zoom_window(hs_controller *c, double *t0, double *t1, double *s0, double *s1) {
    hs_ctl_lock(c);
    if (c->s.zoom_t1 > 0) {
        *t0 = c->s.zoom_t0; *t1 = c->s.zoom_t1; *s0 = c->s.zoom_s0; *s1 = c->s.zoom_s1;
    } else {
        *t0 = 0; *t1 = c->s.length; *s0 = 0; *s1 = c->s.length;
    }
    hs_ctl_unlock(c);
}

/* factor > 1 zooms in around token (t, s). */
void hs_ctl_zoom_at(hs_controller *c, double factor, double t, double s) {
    double t0, t1, s0, s1;
    hs_ctl_zoom_window(c, &t0, &t1, &s0, &s1);
    double wt = (t1 - t0) / factor, ws = (s1 - s0) / factor;
    if (wt < 8) wt = 8;
    if (ws < 8) ws = 8;
    double ft = (t - t0) / (t1 - t0), fs = (s - s0) / (s1 - s0);
    double nt0 = t - ft * wt, ns0 = s - fs * ws;
    hs_ctl_lock(c);
    double T = c->s.length;
    hs_ctl_unlock(c);
    if (wt > T) wt = T;
    if (ws > T) ws = T;
    if (nt0 < 0) nt0 = 0;
    if (ns0 < 0) ns0 = 0;
    if (nt0 + wt > T) nt0 = T - wt;
    if (ns0 + ws > T) ns0 = T - ws;
    hs_ctl_set_zoom(c, (int)(nt0 + 0.5), (int)(nt0 + wt + 0.5), (int)(ns0 + 0.5), (int)(ns0 + ws + 0.5));
}

void hs_ctl_pan(hs_controller *c, double dt, double ds) {
    double t0, t1, s0, s1;
    hs_ctl_zoom_window(c, &t0, &t1, &s0, &s1);
    hs_ctl_lock(c);
    double T = c->s.length;
    hs_ctl_unlock(c);
    if (t0 + dt < 0) dt = -t0;
    if (t1 + dt > T) dt = T - t1;
    if (s0 + ds < 0) ds = -s0;
    if (s1 + ds > T) ds = T - s1;
    hs_ctl_set_zoom(c, (int)(t0 + dt + 0.5), (int)(t1 + dt + 0.5), (int)(s0 + ds + 0.5), (int)(s1 + ds + 0.5));
}

static int copy_ppl(hs_ppl_result *dst, const hs_ppl_result *src) {
    *dst = *src;
    size_t n = (size_t)src->n_buckets;
    dst->bucket_start = malloc(n * sizeof(int) + 1);
    dst->bucket_end = malloc(n * sizeof(int) + 1);
    dst->ppl = malloc(n * sizeof(double) + 1);
    if (!dst->bucket_start || !dst->bucket_end || !dst->ppl) {
        free(dst->bucket_start); free(dst->bucket_end); free(dst->ppl);
        memset(dst, 0, sizeof *dst);
        return -1;
    }
    memcpy(dst->bucket_start, src->bucket_start, n * sizeof(int));
    memcpy(dst->bucket_end, src->bucket_end, n * sizeof(int));
    memcpy(dst->ppl, src->ppl, n * sizeof(double));
    return 0;
}

void hs_ctl_pin_ppl(hs_controller *c) {
    hs_ctl_lock(c);
    if (!c->ppl || c->jobs[HS_JOB_PPL].have != c->jobs[HS_JOB_PPL].want) {
        hs_ctl_set_message(c, "nothing to pin yet: the perplexity curve is still computing");
    } else if (c->n_pins >= HS_CTL_MAX_PINS - 1) {
        hs_ctl_set_message(c, "at most %d pinned curves (shift-P clears them)", HS_CTL_MAX_PINS - 1);
    } else if (copy_ppl(&c->pins[c->n_pins], c->ppl) == 0) {
        c->n_pins++;
        hs_ctl_set_message(c, "pinned: %s", c->ppl->label);
    }
    hs_ctl_unlock(c);
}

void hs_ctl_clear_pins(hs_controller *c) {
    hs_ctl_lock(c);
    for (int i = 0; i < c->n_pins; i++) hs_ppl_result_free(&c->pins[i]);
    c->n_pins = 0;
    hs_ctl_unlock(c);
}

void hs_ctl_toggle_log_color(hs_controller *c) {
    hs_ctl_lock(c);
    c->s.log_color = !c->s.log_color;
    hs_ctl_unlock(c);
}

void hs_ctl_toggle_theme(hs_controller *c) {
    hs_ctl_lock(c);
    c->s.dark = !c->s.dark;
    hs_ctl_unlock(c);
}

/* ---- saving ---- */

int hs_ctl_save_view(hs_controller *c, const char *path, int width, int height, double scale) {
    char auto_path[512];
    hs_ctl_lock(c);
    if (!path) {
        for (int i = 1; i < 10000; i++) {
            snprintf(auto_path, sizeof auto_path, "hybridscope-%s-%s-%d.png",
                     hs_view_name(c->s.view), c->s.model_name, i);
            if (access(auto_path, F_OK) != 0) break;
        }
        path = auto_path;
    }
    hs_view_input in;
    hs_ctl_view_input(c, &in);
    char err[HS_ERR_LEN];
    int rc = hs_export_view(path, width, height, scale, c->s.dark, c->s.view, &in, err, sizeof err);
    if (rc == 0) hs_ctl_set_message(c, "saved %s", path);
    else hs_ctl_set_message(c, "%s", err);
    hs_ctl_unlock(c);
    return rc;
}

