/* Model families (families.json: sibling checkpoints that differ in the hybrid ratio), the
 * default sample model and MODEL arguments. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "controller_internal.h"

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
void hs_ctl_load_family(hs_controller *c) {
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

int hs_ctl_is_file(const char *p) { struct stat st; return stat(p, &st) == 0 && S_ISREG(st.st_mode); }

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
        if (!hs_ctl_is_file(path)) continue;
        size_t tl = 0;
        char *text = read_text(path, &tl);
        cJSON *root = text ? cJSON_ParseWithLength(text, tl) : NULL;
        free(text);
        const cJSON *def = root ? cJSON_GetObjectItemCaseSensitive(root, "default") : NULL;
        if (cJSON_IsString(def) && def->valuestring[0]) {
            char cand[PATH_MAX + 300];
            snprintf(cand, sizeof cand, "%.4000s/%.200s/config.json", roots[i], def->valuestring);
            if (hs_ctl_is_file(cand)) {
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

