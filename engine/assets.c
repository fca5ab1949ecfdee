/* Loading assets/: word lists and prose sentences. */
#include "assets.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_assets_dir(const char *dir) {
    char p[1200];
    struct stat st;
    if (snprintf(p, sizeof p, "%s/words/adjectives.txt", dir) >= (int)sizeof p) return 0;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int hs_assets_find(char *out, size_t n, const char *hint, char *err, size_t errlen) {
    if (hint && *hint) {
        if (!is_assets_dir(hint)) {
            snprintf(err, errlen, "%s: not an assets directory (no words/adjectives.txt)", hint);
            return -1;
        }
        snprintf(out, n, "%s", hint);
        return 0;
    }
    const char *env = getenv("HYBRIDSCOPE_ASSETS");
    if (env && *env) {
        if (!is_assets_dir(env)) {
            snprintf(err, errlen, "HYBRIDSCOPE_ASSETS=%s: not an assets directory "
                     "(no words/adjectives.txt)", env);
            return -1;
        }
        snprintf(out, n, "%s", env);
        return 0;
    }
    char exe[1024];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            char cand[1200];
            if (snprintf(cand, sizeof cand, "%s/../assets", exe) < (int)sizeof cand &&
                is_assets_dir(cand)) { snprintf(out, n, "%s", cand); return 0; }
            if (snprintf(cand, sizeof cand, "%s/assets", exe) < (int)sizeof cand &&
                is_assets_dir(cand)) { snprintf(out, n, "%s", cand); return 0; }
        }
    }
    if (is_assets_dir("assets")) { snprintf(out, n, "assets"); return 0; }
    snprintf(err, errlen, "assets directory not found (looked at $HYBRIDSCOPE_ASSETS, "
             "next to the executable and ./assets; pass --assets DIR)");
    return -1;
}

static char *read_file(const char *path, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return NULL; }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        cap *= 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb) { free(buf); buf = NULL; }
        else buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) { snprintf(err, errlen, "%s: out of memory", path); return NULL; }
    if (bad) { free(buf); snprintf(err, errlen, "%s: read error", path); return NULL; }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* A growable array of text pieces. */
typedef struct { char **s; int *len; unsigned char *par; int n, cap; } piece_list;

static int piece_push(piece_list *p, char *s, int len, int par) {
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 1024;
        char **s2 = realloc(p->s, (size_t)cap * sizeof *s2);
        if (!s2) return -1;
        p->s = s2;
        int *l2 = realloc(p->len, (size_t)cap * sizeof *l2);
        if (!l2) return -1;
        p->len = l2;
        unsigned char *p2 = realloc(p->par, (size_t)cap);
        if (!p2) return -1;
        p->par = p2;
        p->cap = cap;
    }
    p->s[p->n] = s; p->len[p->n] = len; p->par[p->n] = (unsigned char)par; p->n++;
    return 0;
}

/* Splits text (modified in place) into its non-empty lines; marks a line that follows an
 * empty line (or starts the text) as a new paragraph. */
static int split_lines(piece_list *out, char *text, size_t n) {
    int par = 1;
    char *p = text, *end = text + n;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *e = nl ? nl : end;
        *e = 0;
        if (e > p && e[-1] == '\r') *--e = 0;
        if (e > p) {
            if (piece_push(out, p, (int)(e - p), par)) return -1;
            par = 0;
        } else {
            par = 1;
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* All loaded file buffers are chained here so free can release them. */
typedef struct chunk { struct chunk *next; char data[]; } chunk;

static char *load_chunk(hs_assets *a, const char *path, size_t *len, char *err, size_t errlen) {
    char *text = read_file(path, len, err, errlen);
    if (!text) return NULL;
    chunk *c = malloc(sizeof *c + *len + 1);
    if (!c) { free(text); snprintf(err, errlen, "%s: out of memory", path); return NULL; }
    memcpy(c->data, text, *len + 1);
    free(text);
    c->next = (chunk *)a->store;
    a->store = (char *)c;
    return c->data;
}

static int load_words(hs_assets *a, const char *name, char ***words, int *count, int *maxlen,
                      char *err, size_t errlen) {
    char path[1200];
    size_t len;
    if (snprintf(path, sizeof path, "%s/words/%s", a->dir, name) >= (int)sizeof path) {
        snprintf(err, errlen, "assets path too long");
        return -1;
    }
    char *text = load_chunk(a, path, &len, err, errlen);
    if (!text) return -1;
    piece_list pl = {0};
    if (split_lines(&pl, text, len)) { snprintf(err, errlen, "%s: out of memory", path); goto fail; }
    if (pl.n == 0) { snprintf(err, errlen, "%s: no words", path); goto fail; }
    *maxlen = 0;
    for (int i = 0; i < pl.n; i++) {
        for (const char *c = pl.s[i]; *c; c++)
            if (*c < 'a' || *c > 'z') {
                snprintf(err, errlen, "%s: line %d: '%s' is not a lowercase word", path, i + 1,
                         pl.s[i]);
                goto fail;
            }
        if (pl.len[i] > *maxlen) *maxlen = pl.len[i];
    }
    *words = pl.s;
    *count = pl.n;
    free(pl.len);
    free(pl.par);
    return 0;
fail:
    free(pl.s); free(pl.len); free(pl.par);
    return -1;
}

int hs_assets_load(hs_assets *a, const char *dir, char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    snprintf(a->dir, sizeof a->dir, "%s", dir);
    if (load_words(a, "adjectives.txt", &a->adjectives, &a->n_adjectives,
                   &a->max_adjective_len, err, errlen) ||
        load_words(a, "nouns.txt", &a->nouns, &a->n_nouns, &a->max_noun_len, err, errlen))
        goto fail;

    char pdir[1200];
    if (snprintf(pdir, sizeof pdir, "%s/prose", dir) >= (int)sizeof pdir) {
        snprintf(err, errlen, "assets path too long");
        goto fail;
    }
    DIR *d = opendir(pdir);
    if (!d) { snprintf(err, errlen, "%s: %s", pdir, strerror(errno)); goto fail; }
    char **names = NULL;
    int n_names = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".txt")) continue;
        if (n_names == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) break;
            names = nn;
        }
        names[n_names] = strdup(e->d_name);
        if (!names[n_names]) break;
        n_names++;
    }
    closedir(d);
    if (n_names > 1) qsort(names, (size_t)n_names, sizeof *names, cmp_str);
    piece_list pl = {0};
    int rc = 0;
    for (int i = 0; i < n_names && !rc; i++) {
        char path[1400];
        size_t len;
        char *text = NULL;
        if (snprintf(path, sizeof path, "%s/%s", pdir, names[i]) < (int)sizeof path)
            text = load_chunk(a, path, &len, err, errlen);
        else
            snprintf(err, errlen, "assets path too long");
        int first = pl.n;
        if (!text) rc = -1;
        else if (split_lines(&pl, text, len)) { snprintf(err, errlen, "%s: out of memory", path); rc = -1; }
        else if (pl.n > first) pl.par[first] = 1;
    }
    for (int i = 0; i < n_names; i++) free(names[i]);
    free(names);
    if (!rc && pl.n == 0) { snprintf(err, errlen, "%s: no prose (*.txt with sentences)", pdir); rc = -1; }
    a->sentences = pl.s; a->sentence_len = pl.len; a->new_paragraph = pl.par; a->n_sentences = pl.n;
    if (rc) goto fail;
    return 0;
fail:
    hs_assets_free(a);
    return -1;
}

void hs_assets_free(hs_assets *a) {
    chunk *c = (chunk *)a->store;
    while (c) { chunk *n = c->next; free(c); c = n; }
    free(a->adjectives); free(a->nouns);
    free(a->sentences); free(a->sentence_len); free(a->new_paragraph);
    memset(a, 0, sizeof *a);
}

char *hs_assets_prose_stream(const hs_assets *a, size_t *len) {
    size_t n = 0;
    for (int i = 0; i < a->n_sentences; i++) n += (size_t)a->sentence_len[i] + 1;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    size_t k = 0;
    for (int i = 0; i < a->n_sentences; i++) {
        if (i > 0) s[k++] = a->new_paragraph[i] ? '\n' : ' ';
        memcpy(s + k, a->sentences[i], (size_t)a->sentence_len[i]);
        k += (size_t)a->sentence_len[i];
    }
    s[k] = 0;
    *len = k;
    return s;
}

size_t hs_assets_heldout_start(size_t len) {
    return (size_t)((double)len * 0.9);   /* Python's int(len * 0.9): the same double product */
}
