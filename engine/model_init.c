/* Random initialisation (deterministic from a seed) and saving a model as a checkpoint. */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safetensors.h"

/* Each tensor draws from its own stream (seed x name) in blocks of BLOCK values, each block
 * seeded from its index: the result does not depend on thread count or on other tensors. */
#define BLOCK 4096

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) {           /* (0, 1): safe for log */
    return ((double)(splitmix64(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static uint64_t name_hash(const char *s) {       /* FNV-1a */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
    return h;
}

/* Normal values for blocks [b0, b1) of a tensor of n values. */
static void fill_normal_blocks(float *x, size_t n, size_t b0, size_t b1, double std, uint64_t stream) {
#pragma omp parallel for schedule(static) if (b1 - b0 > 4)
    for (size_t b = b0; b < b1; b++) {
        uint64_t s = stream ^ (b * 0xd1b54a32d192ed03ULL);
        splitmix64(&s);
        size_t end = (b + 1) * BLOCK < n ? (b + 1) * BLOCK : n;
        for (size_t i = b * BLOCK; i < end; i += 2) {
            double r = sqrt(-2.0 * log(uniform01(&s))), a = 6.283185307179586 * uniform01(&s);
            x[i] = (float)(std * r * cos(a));
            if (i + 1 < end) x[i + 1] = (float)(std * r * sin(a));
        }
    }
}

typedef struct {
    hs_io_progress_fn fn;
    void *ctx;
    size_t done, total;
} progress;

/* Fills in slices so that the progress report moves inside big tensors (embeddings). */
static void fill_normal(float *x, size_t n, double std, uint64_t stream, progress *p) {
    const size_t slice = 1024;   /* blocks per progress report */
    size_t nb = (n + BLOCK - 1) / BLOCK;
    for (size_t b = 0; b < nb; b += slice) {
        size_t e = b + slice < nb ? b + slice : nb;
        fill_normal_blocks(x, n, b, e, std, stream);
        if (p->fn && p->total) p->fn(p->ctx, (double)(p->done + e * BLOCK) / (double)p->total);
    }
}

static void fill_uniform(float *x, size_t n, double lo, double hi, uint64_t stream) {
    uint64_t s = stream;
    for (size_t i = 0; i < n; i++) x[i] = (float)(lo + (hi - lo) * uniform01(&s));
}

/* The gla mixer that owns a gk bias slot (for its gate_logit_normalizer). */
static const hs_mixer_config *owner_mixer(const hs_model *m, float *const *slot) {
    for (int i = 0; i < m->cfg.num_layers; i++)
        for (int k = 0; k < m->cfg.layers[i].n_mixers; k++)
            if (slot == &m->layers[i].mix[k].gk_bias) return &m->cfg.layers[i].mixers[k];
    return NULL;
}

void hs_model_init_random(hs_model *m, uint64_t seed) {
    progress pr = { NULL, NULL, 0, m->arena_floats };
    hs_model_get_progress(&pr.fn, &pr.ctx);
    int n = hs_model_tensor_specs(m, NULL, 0);
    hs_tensor_spec *specs = malloc((size_t)n * sizeof *specs);
    if (!specs) return;
    hs_model_tensor_specs(m, specs, n);
    double depth = sqrt(2.0 * (m->cfg.num_layers > 0 ? m->cfg.num_layers : 1));
    uint64_t sm = seed;
    uint64_t base = splitmix64(&sm);
    for (int i = 0; i < n; i++) {
        const hs_tensor_spec *sp = &specs[i];
        float *x = *sp->slot;
        size_t ne = 1;
        for (int k = 0; k < sp->ndim; k++) ne *= (size_t)sp->shape[k];
        uint64_t s = base ^ name_hash(sp->name);
        splitmix64(&s);
        switch (sp->kind) {
        case HS_TK_LINEAR: fill_normal(x, ne, 1.0 / sqrt(sp->fan_in), s, &pr); break;
        case HS_TK_OUT_LINEAR: fill_normal(x, ne, 1.0 / sqrt(sp->fan_in) / depth, s, &pr); break;
        case HS_TK_EMBED: fill_normal(x, ne, 1.0 / sqrt(sp->fan_in), s, &pr); break;
        case HS_TK_NORM:
            for (size_t j = 0; j < ne; j++) x[j] = 1.0f;
            break;
        case HS_TK_GK_BIAS: {
            /* Per-step decay a = exp(logsigmoid(b) / normalizer) with -ln a log-uniform in
             * [5e-4, 0.1]: memories from ~10 to ~2000 tokens, every decay strictly below 1. */
            const hs_mixer_config *mc = owner_mixer(m, sp->slot);
            double norm = mc ? mc->gate_logit_normalizer : 16.0;
            for (size_t j = 0; j < ne; j++) {
                double nla = exp(log(5e-4) + (log(0.1) - log(5e-4)) * uniform01(&s));
                x[j] = (float)(-log(expm1(norm * nla)));
            }
            break;
        }
        case HS_TK_A_LOG:  /* A in [1, 16] as in fla */
            for (size_t j = 0; j < ne; j++) x[j] = (float)log(1.0 + 15.0 * uniform01(&s));
            break;
        case HS_TK_DT_BIAS: /* softplus(dt_bias) = dt, dt log-uniform in [1e-3, 1e-1] */
            for (size_t j = 0; j < ne; j++) {
                double dt = exp(log(1e-3) + (log(1e-1) - log(1e-3)) * uniform01(&s));
                x[j] = (float)(dt + log(-expm1(-dt)));
            }
            break;
        case HS_TK_CONV: {
            double b = 1.0 / sqrt(sp->fan_in);
            fill_uniform(x, ne, -b, b, s);
            break;
        }
        }
        pr.done += ne;
    }
    free(specs);
}

/* ---- saving --------------------------------------------------------------------------- */

static int mkdir_p(const char *dir, char *err, size_t errlen) {
    char p[1024];
    snprintf(p, sizeof p, "%s", dir);
    for (char *c = p + 1; *c; c++) {
        if (*c != '/') continue;
        *c = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create directory: %s", p, strerror(errno));
            return -1;
        }
        *c = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create directory: %s", p, strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a directory", p);
        return -1;
    }
    return 0;
}

static int write_text(const char *path, const char *text, char *err, size_t errlen) {
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        return -1;
    }
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n || fputc('\n', f) == EOF;
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int hs_model_save(const hs_model *m, const char *dir, int bf16, const char *extra_json, char *err,
                  size_t errlen) {
    if (mkdir_p(dir, err, errlen) < 0) return -1;
    char *json = hs_config_to_json(&m->cfg, extra_json);
    if (!json) {
        snprintf(err, errlen, "%s: cannot serialise config.json (bad extra JSON?)", dir);
        return -1;
    }
    /* The spec list takes a non-const model only to hand out slot addresses. */
    hs_model *mm = (hs_model *)m;
    int n = hs_model_tensor_specs(mm, NULL, 0);
    hs_tensor_spec *specs = malloc((size_t)n * sizeof *specs);
    hs_st_out_tensor *out = malloc((size_t)n * sizeof *out);
    int rc = -1;
    if (!specs || !out) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    hs_model_tensor_specs(mm, specs, n);
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].name = specs[i].name;
        out[i].ndim = specs[i].ndim;
        for (int k = 0; k < specs[i].ndim; k++) out[i].shape[k] = specs[i].shape[k];
        out[i].data = *specs[i].slot;
    }
    char path[1100];
    /* Weights first, config last: a directory with a config.json has its weights. */
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    hs_io_progress_fn progress;
    void *pctx;
    hs_model_get_progress(&progress, &pctx);
    if (hs_st_write_progress(path, out, n, bf16 ? HS_DT_BF16 : HS_DT_F32, progress, pctx, err,
                             errlen) < 0)
        goto done;
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (write_text(path, json, err, errlen) < 0) goto done;
    rc = 0;
done:
    free(json);
    free(specs);
    free(out);
    return rc;
}
