/* The model: the one list of tensors a config requires (names and shapes of model-spec
 * section 3), the arena that holds them as fp32, and loading from a checkpoint directory. */
#include "model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

static hs_io_progress_fn progress_fn;
static void *progress_ctx;

void hs_model_set_progress(hs_io_progress_fn fn, void *ctx) {
    progress_fn = fn;
    progress_ctx = ctx;
}

void hs_model_get_progress(hs_io_progress_fn *fn, void **ctx) {
    *fn = progress_fn;
    *ctx = progress_ctx;
}

/* Each tensor starts on a 64-byte boundary inside the arena (SIMD loads, cache lines). */
#define ARENA_ALIGN_FLOATS 16

typedef struct {
    hs_tensor_spec *specs;
    int cap, n;
} spec_list;

static void add(spec_list *l, float **slot, int kind, int fan_in, int ndim, int64_t d0, int64_t d1,
                int64_t d2, const char *fmt, ...) {
    if (l->n < l->cap) {
        hs_tensor_spec *s = &l->specs[l->n];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->name, sizeof s->name, fmt, ap);
        va_end(ap);
        s->ndim = ndim;
        s->shape[0] = d0;
        s->shape[1] = d1;
        s->shape[2] = d2;
        s->shape[3] = 0;
        s->slot = slot;
        s->kind = kind;
        s->fan_in = fan_in;
    }
    l->n++;
}

static void add_mixer(spec_list *l, hs_mixer_weights *w, const hs_mixer_config *mc, int layer,
                      const char *M, int d) {
    int64_t H = mc->num_heads, Hkv = hs_mixer_is_softmax(mc->type) ? mc->num_kv_heads : mc->num_heads;
    int64_t dk = mc->head_k_dim, dv = mc->head_v_dim;
    const char *p = "model.layers";
    add(l, &w->q_proj, HS_TK_LINEAR, d, 2, H * dk, d, 0, "%s.%d.%s.q_proj.weight", p, layer, M);
    add(l, &w->k_proj, HS_TK_LINEAR, d, 2, Hkv * dk, d, 0, "%s.%d.%s.k_proj.weight", p, layer, M);
    add(l, &w->v_proj, HS_TK_LINEAR, d, 2, Hkv * dv, d, 0, "%s.%d.%s.v_proj.weight", p, layer, M);
    add(l, &w->o_proj, HS_TK_OUT_LINEAR, (int)(H * dv), 2, d, H * dv, 0, "%s.%d.%s.o_proj.weight", p,
        layer, M);
    if (mc->type == HS_GLA) {
        int64_t r = mc->gate_low_rank_dim;
        add(l, &w->gk_proj0, HS_TK_LINEAR, d, 2, r, d, 0, "%s.%d.%s.gk_proj.0.weight", p, layer, M);
        add(l, &w->gk_proj1, HS_TK_LINEAR, (int)r, 2, H * dk, r, 0, "%s.%d.%s.gk_proj.1.weight", p,
            layer, M);
        add(l, &w->gk_bias, HS_TK_GK_BIAS, 0, 1, H * dk, 0, 0, "%s.%d.%s.gk_proj.1.bias", p, layer, M);
        add(l, &w->g_proj, HS_TK_LINEAR, d, 2, H * dv, d, 0, "%s.%d.%s.g_proj.weight", p, layer, M);
        add(l, &w->g_norm, HS_TK_NORM, 0, 1, dv, 0, 0, "%s.%d.%s.g_norm_swish_gate.weight", p, layer, M);
    } else if (mc->type == HS_GDN) {
        add(l, &w->a_proj, HS_TK_LINEAR, d, 2, H, d, 0, "%s.%d.%s.a_proj.weight", p, layer, M);
        add(l, &w->b_proj, HS_TK_LINEAR, d, 2, H, d, 0, "%s.%d.%s.b_proj.weight", p, layer, M);
        add(l, &w->A_log, HS_TK_A_LOG, 0, 1, H, 0, 0, "%s.%d.%s.A_log", p, layer, M);
        add(l, &w->dt_bias, HS_TK_DT_BIAS, 0, 1, H, 0, 0, "%s.%d.%s.dt_bias", p, layer, M);
        add(l, &w->g_proj, HS_TK_LINEAR, d, 2, H * dv, d, 0, "%s.%d.%s.g_proj.weight", p, layer, M);
        add(l, &w->g_norm, HS_TK_NORM, 0, 1, dv, 0, 0, "%s.%d.%s.o_norm.weight", p, layer, M);
    }
    if ((mc->type == HS_GLA || mc->type == HS_GDN) && mc->use_short_conv) {
        int64_t K = mc->conv_size;
        add(l, &w->q_conv, HS_TK_CONV, (int)K, 3, H * dk, 1, K, "%s.%d.%s.q_conv1d.weight", p, layer, M);
        add(l, &w->k_conv, HS_TK_CONV, (int)K, 3, H * dk, 1, K, "%s.%d.%s.k_conv1d.weight", p, layer, M);
        add(l, &w->v_conv, HS_TK_CONV, (int)K, 3, H * dv, 1, K, "%s.%d.%s.v_conv1d.weight", p, layer, M);
    }
}

int hs_model_tensor_specs(hs_model *m, hs_tensor_spec *specs, int cap) {
    const hs_config *c = &m->cfg;
    spec_list l = { specs, specs ? cap : 0, 0 };
    int d = c->hidden_size;
    int64_t V = c->vocab_size, F = c->intermediate_size;
    add(&l, &m->embed, HS_TK_EMBED, d, 2, V, d, 0, "model.embeddings.weight");
    for (int i = 0; i < c->num_layers; i++) {
        hs_layer_weights *lw = &m->layers[i];
        add(&l, &lw->attn_norm, HS_TK_NORM, 0, 1, d, 0, 0, "model.layers.%d.attn_norm.weight", i);
        for (int k = 0; k < c->layers[i].n_mixers; k++)
            add_mixer(&l, &lw->mix[k], &c->layers[i].mixers[k], i, k == 0 ? "attn" : "nope_attn", d);
        add(&l, &lw->mlp_norm, HS_TK_NORM, 0, 1, d, 0, 0, "model.layers.%d.mlp_norm.weight", i);
        add(&l, &lw->gate_proj, HS_TK_LINEAR, d, 2, F, d, 0, "model.layers.%d.mlp.gate_proj.weight", i);
        add(&l, &lw->up_proj, HS_TK_LINEAR, d, 2, F, d, 0, "model.layers.%d.mlp.up_proj.weight", i);
        add(&l, &lw->down_proj, HS_TK_OUT_LINEAR, (int)F, 2, d, F, 0,
            "model.layers.%d.mlp.down_proj.weight", i);
    }
    add(&l, &m->norm, HS_TK_NORM, 0, 1, d, 0, 0, "model.norm.weight");
    if (!c->tie_word_embeddings)
        add(&l, &m->lm_head, HS_TK_LINEAR, d, 2, V, d, 0, "lm_head.weight");
    return l.n;
}

static int64_t spec_numel(const hs_tensor_spec *s) {
    int64_t n = 1;
    for (int k = 0; k < s->ndim; k++) n *= s->shape[k];
    return n;
}

static hs_tensor_spec *specs_for(hs_model *m, int *n) {
    *n = hs_model_tensor_specs(m, NULL, 0);
    hs_tensor_spec *s = malloc((size_t)*n * sizeof *s);
    if (s) hs_model_tensor_specs(m, s, *n);
    return s;
}

/* The arena: every tensor at a 64-byte aligned offset. zero_all = 0 leaves the tensors
 * uninitialised (the loader overwrites each one; skipping a pass over GBs of memory) but
 * still zeroes the padding between them, so the arena's bytes are always defined. */
static int alloc_arena(hs_model *m, int zero_all, char *err, size_t errlen) {
    int n;
    hs_tensor_spec *s = specs_for(m, &n);
    if (!s) { snprintf(err, errlen, "out of memory"); return -1; }
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        total += (size_t)spec_numel(&s[i]);
        total = (total + ARENA_ALIGN_FLOATS - 1) / ARENA_ALIGN_FLOATS * ARENA_ALIGN_FLOATS;
    }
    size_t bytes = (total ? total : ARENA_ALIGN_FLOATS) * sizeof(float);
    float *arena = aligned_alloc(64, bytes);
    if (!arena) {
        free(s);
        snprintf(err, errlen, "cannot allocate %.1f MB for the weights", (double)bytes / 1e6);
        return -1;
    }
    if (zero_all) memset(arena, 0, bytes);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        *s[i].slot = arena + off;
        off += (size_t)spec_numel(&s[i]);
        size_t next = (off + ARENA_ALIGN_FLOATS - 1) / ARENA_ALIGN_FLOATS * ARENA_ALIGN_FLOATS;
        if (!zero_all) memset(arena + off, 0, (next - off) * sizeof(float));
        off = next;
    }
    if (m->cfg.tie_word_embeddings) m->lm_head = m->embed;
    m->arena = arena;
    m->arena_floats = total;
    free(s);
    return 0;
}

int hs_model_alloc(hs_model *m, char *err, size_t errlen) { return alloc_arena(m, 1, err, errlen); }

void hs_model_free(hs_model *m) {
    free(m->arena);
    hs_config cfg = m->cfg;
    memset(m, 0, sizeof *m);
    m->cfg = cfg;
}

/* ---- loading -------------------------------------------------------------------------- */

static void shape_str(char *out, size_t n, int ndim, const int64_t *shape) {
    size_t p = (size_t)snprintf(out, n, "[");
    for (int k = 0; k < ndim && p < n; k++)
        p += (size_t)snprintf(out + p, n - p, "%s%lld", k ? ", " : "", (long long)shape[k]);
    if (p < n) snprintf(out + p, n - p, "]");
}

/* Matches the archive against the config's tensor list: every required tensor present with
 * its shape; tensors nothing uses are warned about. Fills found[i] for each spec. */
static int match_tensors(const hs_st_archive *ar, const hs_tensor_spec *s, int n,
                         hs_st_tensor **found, const char *dir, char *err, size_t errlen) {
    for (int i = 0; i < ar->n_tensors; i++) ar->tensors[i].used = 0;
    for (int i = 0; i < n; i++) {
        hs_st_tensor *t = hs_st_find(ar, s[i].name);
        char want[96], got[160];
        shape_str(want, sizeof want, s[i].ndim, s[i].shape);
        if (!t) {
            if (ar->n_files == 1)
                snprintf(err, errlen, "%s: missing tensor '%s' %s that config.json requires",
                         ar->file_paths[0], s[i].name, want);
            else
                snprintf(err, errlen, "%s/model.safetensors.index.json: missing tensor '%s' %s that config.json requires",
                         dir, s[i].name, want);
            return -1;
        }
        int same = t->ndim == s[i].ndim;
        for (int k = 0; same && k < t->ndim; k++) same = t->shape[k] == s[i].shape[k];
        if (!same) {
            shape_str(got, sizeof got, t->ndim, t->shape);
            snprintf(err, errlen, "%s: tensor '%s' has shape %s but config.json requires %s",
                     ar->file_paths[t->file_index], s[i].name, got, want);
            return -1;
        }
        t->used = 1;
        found[i] = t;
    }
    int unused = 0;
    for (int i = 0; i < ar->n_tensors; i++) {
        const hs_st_tensor *t = &ar->tensors[i];
        if (t->used) continue;
        if (unused < 8)
            fprintf(stderr, "%s: warning: tensor '%s' is not used by config.json (ignored)\n",
                    ar->file_paths[t->file_index], t->name);
        unused++;
    }
    if (unused > 8)
        fprintf(stderr, "%s: warning: %d more unused tensors (ignored)\n", dir, unused - 8);
    return 0;
}

static int open_checked(hs_model *m, const char *dir, hs_st_archive *ar, hs_tensor_spec **specs,
                        int *n, hs_st_tensor ***found, char *err, size_t errlen) {
    char path[1100];
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (hs_config_load(&m->cfg, path, err, errlen) < 0) return -1;
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    memset(ar, 0, sizeof *ar);
    if (hs_st_open_dir(ar, dir, err, errlen) < 0) return -1;
    *specs = specs_for(m, n);
    *found = calloc((size_t)*n + 1, sizeof **found);
    if (!*specs || !*found) {
        snprintf(err, errlen, "out of memory");
    } else if (match_tensors(ar, *specs, *n, *found, dir, err, errlen) == 0) {
        return 0;
    }
    free(*specs);
    free(*found);
    hs_st_close(ar);
    return -1;
}

int hs_model_check(const char *dir, hs_config *cfg_out, char *err, size_t errlen) {
    hs_model *m = calloc(1, sizeof *m);
    if (!m) { snprintf(err, errlen, "out of memory"); return -1; }
    hs_st_archive ar;
    hs_tensor_spec *specs;
    hs_st_tensor **found;
    int n;
    int rc = open_checked(m, dir, &ar, &specs, &n, &found, err, errlen);
    if (rc == 0) {
        if (cfg_out) *cfg_out = m->cfg;
        free(specs);
        free(found);
        hs_st_close(&ar);
    }
    free(m);
    return rc;
}

int hs_model_load(hs_model *m, const char *dir, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    hs_st_archive ar;
    hs_tensor_spec *specs;
    hs_st_tensor **found;
    int n;
    if (open_checked(m, dir, &ar, &specs, &n, &found, err, errlen) < 0) return -1;
    /* alloc_arena walks the spec list again; the slots it fills are the ones in specs. */
    int rc = alloc_arena(m, 0, err, errlen);
    if (rc == 0)
        for (int i = 0; i < n; i++) {
            if (progress_fn) progress_fn(progress_ctx, (double)i / n);
            hs_st_to_f32(*specs[i].slot, found[i]);
        }
    free(specs);
    free(found);
    hs_st_close(&ar);
    return rc;
}

long long hs_layer_cache_bytes(const hs_config *c, int layer, long long T) {
    if (layer < 0 || layer >= c->num_layers) return 0;
    long long bytes = 0;
    for (int k = 0; k < c->layers[layer].n_mixers; k++) {
        const hs_mixer_config *m = &c->layers[layer].mixers[k];
        long long H = m->num_heads, dk = m->head_k_dim, dv = m->head_v_dim;
        if (hs_mixer_is_softmax(m->type)) {
            long long keys = m->type == HS_SWA && m->window < T ? m->window : T;
            bytes += 4 * keys * m->num_kv_heads * (dk + dv);
        } else {
            bytes += 4 * H * dk * dv;
            if (m->use_short_conv) bytes += 4 * (long long)(m->conv_size - 1) * H * (2 * dk + dv);
        }
    }
    return bytes;
}
