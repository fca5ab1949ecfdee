/* The explorer's session state and every user action (see controller.h). */
#include "controller.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/cuda_backend.h"
#include "../views/paint_cairo.h"
#include "cli_util.h"
#include "worker.h"

#define JOB_BIT(k) (1u << (k))
#define ALL_JOBS (JOB_BIT(HS_JOB_PROBE) | JOB_BIT(HS_JOB_HEADMAP) | JOB_BIT(HS_JOB_NIAH) | \
                  JOB_BIT(HS_JOB_PPL))
#define PROMPT_JOBS (JOB_BIT(HS_JOB_PROBE) | JOB_BIT(HS_JOB_HEADMAP))

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

int hs_ctl_job_progress(hs_controller *c, hs_job_kind k, unsigned version, double fraction) {
    hs_ctl_lock(c);
    int cancel = c->quit || c->jobs[k].want != version || c->jobs[k].failed == version ||
                 c->pending_load;
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

static int head_index(const hs_config *cfg, int layer, int mixer, int head) {
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

/* ---- families (hybrid ratio siblings) ---- */

static const char *json_str(const cJSON *o, const char *const *keys) {
    for (int i = 0; keys[i]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
        if (cJSON_IsString(v) && v->valuestring[0]) return v->valuestring;
    }
    return NULL;
}

static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return NULL; }
    long n = ftell(f);
    if (n < 0 || n > (64 << 20)) { fclose(f); return NULL; }
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    if (buf) { buf[n] = 0; if (len) *len = (size_t)n; }
    return buf;
}

static int same_dir(const char *a, const char *b) {
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a, ra) || !realpath(b, rb)) return 0;
    return !strcmp(ra, rb);
}

/* Ratio of a checkpoint from its config: position-biased heads : NoPE heads, reduced. */
static void ratio_from_config(const char *dir, char *out, size_t n) {
    char path[1200], err[HS_ERR_LEN];
    snprintf(path, sizeof path, "%s/config.json", dir);
    hs_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg || hs_config_load(cfg, path, err, sizeof err) != 0) {
        snprintf(out, n, "?");
        free(cfg);
        return;
    }
    int biased = 0, nope = 0;
    hs_config_total_heads(cfg, &biased, &nope);
    int a = biased, b = nope;
    while (b) { int t = a % b; a = b; b = t; }
    if (a > 0) snprintf(out, n, "%d:%d", biased / a, nope / a);
    else snprintf(out, n, "%d:%d", biased, nope);
    free(cfg);
}

/* families.json (written by the sample-model recipe) groups siblings that differ only in the
 * hybrid ratio:
 *   {"default": "NAME", "families": [{"name": ..., "efficient": "gla", "layout": "HH",
 *     "members": [{"name": "gla-nope-hh-3to1", "ratio": "3:1"}, ...]}]}
 * "families" may also be an object keyed by family name; a member may be a plain name string
 * and may spell its name "model", "dir" or "path"; a missing ratio is read from its config.
 * Names are directories relative to the file's folder. */
static void load_family(hs_controller *c) {
    c->n_siblings = 0;
    c->sibling = 0;
    char base[1100], path[1200];
    snprintf(base, sizeof base, "%s", c->s.model);
    size_t bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/') base[--bl] = 0;
    char *slash = strrchr(base, '/');
    if (slash) *slash = 0; else snprintf(base, sizeof base, ".");
    snprintf(path, sizeof path, "%s/families.json", base);
    size_t len = 0;
    char *text = read_text(path, &len);
    if (!text) return;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!root) return;
    const cJSON *fams = cJSON_GetObjectItemCaseSensitive(root, "families");
    static const char *const name_keys[] = { "name", "model", "dir", "path", NULL };
    static const char *const member_keys[] = { "members", "models", "siblings", NULL };
    const cJSON *fam;
    cJSON_ArrayForEach(fam, fams) {
        const cJSON *members = NULL;
        if (cJSON_IsArray(fam)) members = fam;
        for (int i = 0; !members && member_keys[i]; i++)
            members = cJSON_GetObjectItemCaseSensitive(fam, member_keys[i]);
        if (!cJSON_IsArray(members)) continue;
        hs_sibling sib[16];
        int n = 0, self = -1;
        const cJSON *mem;
        cJSON_ArrayForEach(mem, members) {
            if (n >= 16) break;
            const char *name = cJSON_IsString(mem) ? mem->valuestring : json_str(mem, name_keys);
            if (!name) continue;
            hs_sibling *s = &sib[n];
            snprintf(s->name, sizeof s->name, "%s", name);
            if (name[0] == '/') snprintf(s->dir, sizeof s->dir, "%s", name);
            else snprintf(s->dir, sizeof s->dir, "%.900s/%.100s", base, name);
            static const char *const ratio_keys[] = { "ratio", NULL };
            const char *ratio = cJSON_IsObject(mem) ? json_str(mem, ratio_keys) : NULL;
            if (ratio) snprintf(s->ratio, sizeof s->ratio, "%s", ratio);
            else ratio_from_config(s->dir, s->ratio, sizeof s->ratio);
            if (same_dir(s->dir, c->s.model)) self = n;
            n++;
        }
        if (self >= 0) {
            memcpy(c->siblings, sib, sizeof sib[0] * (size_t)n);
            c->n_siblings = n;
            c->sibling = self;
            break;
        }
    }
    cJSON_Delete(root);
}

static int exists_file(const char *p) { struct stat st; return stat(p, &st) == 0 && S_ISREG(st.st_mode); }

/* Folders that may hold sample models: $HS_SAMPLE_MODELS, $HS_ROOT/sample-models, the
 * repository's sample-models/
 * beside the program (build/../sample-models), and ./sample-models. */
static int sample_roots(char roots[4][PATH_MAX]) {
    int nr = 0;
    const char *env = getenv("HS_SAMPLE_MODELS");
    if (env && env[0]) snprintf(roots[nr++], PATH_MAX, "%s", env);
    env = getenv("HS_ROOT");
    if (env && env[0]) snprintf(roots[nr++], PATH_MAX, "%.3800s/sample-models", env);
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        char *s = strrchr(exe, '/');
        if (s) *s = 0;
        snprintf(roots[nr++], PATH_MAX, "%.3800s/../sample-models", exe);
    }
    snprintf(roots[nr++], PATH_MAX, "sample-models");
    return nr;
}

int hs_ctl_default_model(char *dir, size_t n, char *err, size_t errlen) {
    char roots[4][PATH_MAX];
    int nr = sample_roots(roots);
    for (int i = 0; i < nr; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%.4000s/families.json", roots[i]);
        if (!exists_file(path)) continue;
        size_t tl = 0;
        char *text = read_text(path, &tl);
        cJSON *root = text ? cJSON_ParseWithLength(text, tl) : NULL;
        free(text);
        const cJSON *def = root ? cJSON_GetObjectItemCaseSensitive(root, "default") : NULL;
        if (cJSON_IsString(def) && def->valuestring[0]) {
            char cand[PATH_MAX + 300];
            snprintf(cand, sizeof cand, "%.4000s/%.200s/config.json", roots[i], def->valuestring);
            if (exists_file(cand)) {
                snprintf(dir, n, "%s/%s", roots[i], def->valuestring);
                cJSON_Delete(root);
                return 0;
            }
        }
        cJSON_Delete(root);
    }
    snprintf(err, errlen, "no model given and no default sample model found "
             "(sample-models/families.json): pass MODEL (a checkpoint directory) or create one "
             "with 'hybridscope init DIR'");
    return -1;
}

int hs_ctl_resolve_model(char *dir, size_t n, const char *arg, char *err, size_t errlen) {
    if (!arg) return hs_ctl_default_model(dir, n, err, errlen);
    return hs_cli_resolve_model(dir, n, arg, err, errlen);
}

/* ---- needle prompt lengths ---- */

static int pow2_at_least(int n) {
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
        s->length = pow2_at_least(need);
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
        int L = pow2_at_least(sweep_need);
        for (int f = 0; f < 3 && L <= s->max_length; f++, L *= 2) s->sweep_lengths[s->n_sweep_lengths++] = L;
        if (!s->n_sweep_lengths) s->sweep_lengths[s->n_sweep_lengths++] = pow2_at_least(sweep_need);
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
        c->s.sel_head = head_index(cfg, r.layer, r.mixer, r.head);
    }
    if (c->s.zoom_t1 > c->s.length || c->s.zoom_s1 > c->s.length) {
        snprintf(err, errlen, "--zoom: window ends past the prompt length %d", c->s.length);
        return -1;
    }
    if (!c->s.model_name[0]) basename_of(c->s.model_name, sizeof c->s.model_name, c->s.model);
    load_family(c);
    for (int k = 0; k < HS_JOB_KINDS; k++) c->jobs[k].want = 1;
    return 0;
}

int hs_ctl_start(hs_controller *c, char *err, size_t errlen) {
    return hs_worker_start(c, err, errlen);
}

static void free_probe(hs_probe_result **p) {
    if (*p) { hs_probe_result_free(*p); free(*p); *p = NULL; }
}
static void free_map(hs_pooled_map **p) {
    if (*p) { hs_pooled_map_free(*p); free(*p); *p = NULL; }
}

void hs_ctl_free(hs_controller *c) {
    hs_worker_stop(c);
    free_probe(&c->probe);
    free_probe(&c->ghost);
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
    in->topk = c->probe ? c->probe->topk : c->s.topk;
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

static const char *job_name(hs_job_kind k) {
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
        snprintf(c->job_line, sizeof c->job_line, "%s", c->job_text[0] ? c->job_text : job_name(c->cur_job));
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

/* ---- actions ---- */

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

static void reset_zoom_locked(hs_controller *c) {
    c->s.zoom_t0 = c->s.zoom_t1 = c->s.zoom_s0 = c->s.zoom_s1 = 0;
}

void hs_ctl_select_head(hs_controller *c, int head) {
    hs_ctl_lock(c);
    int n = c->model ? hs_ctl_head_count(&c->model->cfg) : 0;
    if (head >= 0 && head < n && head != c->s.sel_head) {
        c->s.sel_head = head;
        reset_zoom_locked(c);
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
    int idx = head_index(cfg, layer, mixer, col);
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

static void move_cell(hs_controller *c, int dl, int dd, int dt) {
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
        length = pow2_at_least(need);
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
        reset_zoom_locked(c);
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
        c->s.length = pow2_at_least(c->min_length[c->s.task]);
        reset_zoom_locked(c);
        hs_ctl_set_message(c, "length raised to %d: these prompts need at least %d tokens",
                           c->s.length, c->min_length[c->s.task]);
    }
    hs_ctl_bump(c, PROMPT_JOBS);
    hs_ctl_unlock(c);
}

/* Knob changes keep the previous probe as the tidal plot's ghost. Caller holds the lock. */
static void knobs_changed_locked(hs_controller *c, const hs_knobs *old) {
    if (c->probe) {
        free_probe(&c->ghost);
        c->ghost = c->probe;
        c->probe = NULL;
        c->jobs[HS_JOB_PROBE].have = 0;
        hs_knobs_describe(c->ghost_label, sizeof c->ghost_label, old);
        if (c->maps) {   /* the small maps belong to the moved probe */
            for (int i = 0; i < c->n_maps; i++) hs_pooled_map_free(&c->maps[i]);
            free(c->maps);
            c->maps = NULL;
            c->n_maps = 0;
        }
    }
    hs_ctl_bump(c, ALL_JOBS);
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
    int L0 = c->model && c->model->cfg.train_context > 0 ? c->model->cfg.train_context : 1024;
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

void hs_ctl_reset_knobs(hs_controller *c) {
    hs_knobs k;
    memset(&k, 0, sizeof k);
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
    if (!exists_file(path)) {
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

static void zoom_window(hs_controller *c, double *t0, double *t1, double *s0, double *s1) {
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
    zoom_window(c, &t0, &t1, &s0, &s1);
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
    zoom_window(c, &t0, &t1, &s0, &s1);
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

/* ---- keys ---- */

/* Esc: stops the job in flight; it stays stopped (not restarted automatically) until Enter. */
void hs_ctl_cancel(hs_controller *c) {
    hs_ctl_lock(c);
    if (c->busy) {
        hs_job_slot *j = &c->jobs[c->cur_job];
        j->failed = j->want;
        snprintf(j->error, sizeof j->error, "%s cancelled (Enter runs it again)", job_name(c->cur_job));
        hs_ctl_set_message(c, "%s", j->error);
    }
    hs_ctl_unlock(c);
}

/* Enter: runs the current view's jobs that were cancelled or failed. */
void hs_ctl_run_view(hs_controller *c) {
    hs_ctl_lock(c);
    unsigned need = hs_ctl_view_jobs(c->s.view), again = 0;
    for (int k = 0; k < HS_JOB_KINDS; k++)
        if ((need & JOB_BIT(k)) && c->jobs[k].failed == c->jobs[k].want && c->jobs[k].have != c->jobs[k].want)
            again |= JOB_BIT(k);
    if (again) hs_ctl_bump(c, again);
    else if (need) hs_ctl_set_message(c, hs_ctl_pending(c) ? "running" : "up to date");
    hs_ctl_unlock(c);
}

/* The key map is views/chrome.c's hs_key_map (the help overlay lists it); this is its
 * implementation. */
int hs_ctl_key(hs_controller *c, int key) {
    hs_ctl_lock(c);
    hs_view_kind view = c->s.view;
    int help = c->help;
    int length = c->s.length, depth = c->s.depth_pct;
    int topk = c->probe ? c->probe->topk : (c->s.topk ? c->s.topk : 64);
    int zoomed = c->s.zoom_t1 > 0;
    c->message[0] = 0;
    hs_ctl_unlock(c);
    if (help && key != 'q') {   /* any key closes the help overlay */
        hs_ctl_lock(c);
        c->help = 0;
        hs_ctl_unlock(c);
        return HS_ACT_REDRAW;
    }
    int head_view = view == HS_VIEW_HEAD;
    int needle_view = view == HS_VIEW_NEEDLE;
    double t0, t1, s0, s1;
    zoom_window(c, &t0, &t1, &s0, &s1);
    switch (key) {
    case 'q': return HS_ACT_QUIT;
    case '?': case HS_KEY_F1:
        hs_ctl_lock(c); c->help = 1; hs_ctl_unlock(c);
        break;
    case 's': return HS_ACT_SAVE;
    case '1': case '2': case '3': case '4': case '5': case '6':
        hs_ctl_set_view(c, (hs_view_kind)(key - '1'));
        break;
    case HS_KEY_TAB: hs_ctl_set_view(c, (hs_view_kind)((view + 1) % HS_VIEW_COUNT)); break;
    case HS_KEY_BTAB: hs_ctl_set_view(c, (hs_view_kind)((view + HS_VIEW_COUNT - 1) % HS_VIEW_COUNT)); break;
    /* arrows: the needle cell, the head; in a zoomed head view they pan */
    case HS_KEY_LEFT:
        if (needle_view) move_cell(c, -1, 0, 0);
        else if (head_view && zoomed) hs_ctl_pan(c, 0, -0.25 * (s1 - s0));
        else hs_ctl_move_head(c, 0, -1);
        break;
    case HS_KEY_RIGHT:
        if (needle_view) move_cell(c, 1, 0, 0);
        else if (head_view && zoomed) hs_ctl_pan(c, 0, 0.25 * (s1 - s0));
        else hs_ctl_move_head(c, 0, 1);
        break;
    case HS_KEY_UP:
        if (needle_view) move_cell(c, 0, -1, 0);
        else if (head_view && zoomed) hs_ctl_pan(c, -0.25 * (t1 - t0), 0);
        else hs_ctl_move_head(c, -1, 0);
        break;
    case HS_KEY_DOWN:
        if (needle_view) move_cell(c, 0, 1, 0);
        else if (head_view && zoomed) hs_ctl_pan(c, 0.25 * (t1 - t0), 0);
        else hs_ctl_move_head(c, 1, 0);
        break;
    case HS_KEY_PGUP: if (needle_view) move_cell(c, 0, 0, -1); else hs_ctl_move_head(c, -1, 0); break;
    case HS_KEY_PGDN: if (needle_view) move_cell(c, 0, 0, 1); else hs_ctl_move_head(c, 1, 0); break;
    case HS_KEY_ENTER: hs_ctl_run_view(c); break;
    case HS_KEY_ESC: hs_ctl_cancel(c); break;
    /* knobs */
    case 'w': hs_ctl_cycle_swla(c); break;
    case ']': hs_ctl_scale_swla_window(c, 1); break;
    case '[': hs_ctl_scale_swla_window(c, 0); break;
    case 'g': hs_ctl_toggle_log_scale(c); break;
    case '}': hs_ctl_scale_log_L0(c, 1); break;
    case '{': hs_ctl_scale_log_L0(c, 0); break;
    case 'A': hs_ctl_scale_swa_window(c, 1); break;
    case 'a': hs_ctl_scale_swa_window(c, 0); break;
    case 'R': hs_ctl_scale_rope_window(c, 1); break;
    case 'r': hs_ctl_scale_rope_window(c, 0); break;
    case 'm': hs_ctl_cycle_ratio(c); break;
    case 'x': hs_ctl_toggle_ablate_selected(c); break;
    case 'c': hs_ctl_cycle_device(c); break;
    /* the probe prompt */
    case '>': hs_ctl_set_length(c, length * 2); break;
    case '<': hs_ctl_set_length(c, length / 2); break;
    case 't': hs_ctl_cycle_task(c); break;
    case 'D': hs_ctl_set_depth(c, depth + 10); break;
    case 'd': hs_ctl_set_depth(c, depth - 10); break;
    case 'K': hs_ctl_set_topk(c, topk * 2); break;
    case 'k': hs_ctl_set_topk(c, topk / 2); break;
    /* head view zoom */
    case '+': case '=': hs_ctl_zoom_at(c, 2.0, (t0 + t1) / 2, (s0 + s1) / 2); break;
    case '-': hs_ctl_zoom_at(c, 0.5, (t0 + t1) / 2, (s0 + s1) / 2); break;
    case '0':
        hs_ctl_lock(c);
        if (c->s.zoom_t1 > 0) { reset_zoom_locked(c); hs_ctl_bump(c, JOB_BIT(HS_JOB_HEADMAP)); }
        hs_ctl_unlock(c);
        break;
    /* presentation */
    case 'l': hs_ctl_toggle_log_color(c); break;
    case 'p': hs_ctl_pin_ppl(c); break;
    case 'P': hs_ctl_clear_pins(c); break;
    case 'T': hs_ctl_toggle_theme(c); break;
    default: return HS_ACT_NONE;
    }
    return HS_ACT_REDRAW;
}
