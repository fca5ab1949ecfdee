/* Needle prompts (assets/NEEDLE.md is the definition this file implements), scoring and the
 * NIAH sweep. */
#include "needle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

#define MAX_VALUE_TRIES 100

static const char *const noise_sentences[] = {
    "The grass is green.", "The sky is blue.", "The sun is yellow.", "Here we go.",
    "There and back again.",
};
#define N_NOISE 5

const char *hs_needle_task_name(hs_needle_task t) {
    switch (t) {
    case HS_SK1: return "sk1";
    case HS_SK2: return "sk2";
    case HS_SK3: return "sk3";
    default: return "?";
    }
}

int hs_needle_task_parse(const char *s) {
    for (int t = 0; t < HS_NEEDLE_TASKS; t++)
        if (!strcmp(s, hs_needle_task_name((hs_needle_task)t))) return t;
    return -1;
}

/* The fixed texts of section 3, with "number" or "uuid" filled in. */
static const char *kind_word(hs_needle_task t) { return t == HS_SK3 ? "uuid" : "number"; }

static int prefix_text(char *out, size_t n, hs_needle_task t) {
    return snprintf(out, n, "A special magic %s is hidden within the following text. Make sure "
                    "to memorize it. I will quiz you about the %s afterwards.\n",
                    kind_word(t), kind_word(t));
}

static int suffix_text(char *out, size_t n, hs_needle_task t, const char *key) {
    return snprintf(out, n, "\nWhat is the special magic %s for %s mentioned in the provided "
                    "text? The special magic %s for %s mentioned in the provided text is",
                    kind_word(t), key, kind_word(t), key);
}

static int needle_text(char *out, size_t n, hs_needle_task t, const char *key, const char *value) {
    return snprintf(out, n, "One of the special magic %ss for %s is: %s.", kind_word(t), key,
                    value);
}

static int value_len(hs_needle_task t) { return t == HS_SK3 ? 36 : 7; }

int hs_needle_min_length(const hs_assets *a, hs_needle_task task) {
    char key[64], value[64];
    int kl = a->max_adjective_len + 1 + a->max_noun_len;
    if (kl > 62) kl = 62;
    memset(key, 'x', (size_t)kl); key[kl] = 0;
    memset(value, '0', (size_t)value_len(task)); value[value_len(task)] = 0;
    return 1 + prefix_text(NULL, 0, task) + suffix_text(NULL, 0, task, key) +
           needle_text(NULL, 0, task, key, value);
}

/* The sentence source of section 3: the noise cycle or the prose from a start index. */
typedef struct {
    const hs_assets *a;
    hs_needle_task task;
    long idx;
} sentence_source;

static const char *next_sentence(sentence_source *src, int *len) {
    const char *s;
    if (src->task == HS_SK1) {
        s = noise_sentences[src->idx % N_NOISE];
        *len = (int)strlen(s);
    } else {
        long i = src->idx % src->a->n_sentences;
        s = src->a->sentences[i];
        *len = src->a->sentence_len[i];
    }
    src->idx++;
    return s;
}

typedef struct { const char *s; int len; } piece;

static int count_occurrences(const char *text, const char *needle) {
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static void draw_value(char *value, size_t n, hs_needle_task task, hs_rng *r) {
    if (task == HS_SK3) {
        uint64_t a = hs_rng_next(r), b = hs_rng_next(r);
        char h[33];
        snprintf(h, sizeof h, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
        snprintf(value, n, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
    } else {
        snprintf(value, n, "%llu", 1000000ULL + (unsigned long long)hs_rng_below(r, 9000000));
    }
}

/* Section 4: fills the filler pieces for budget F; returns the count, -1 on no memory. */
static int fill_pieces(piece **out, sentence_source *src, int F, int *joined) {
    int n = 0, cap = 64, J = 0;
    piece *p = malloc((size_t)cap * sizeof *p);
    if (!p) return -1;
    while (F > 0) {
        int len;
        const char *s = next_sentence(src, &len);
        int need = n ? J + 1 + len : len;
        if (need <= F) {
            if (n == cap) {
                cap *= 2;
                piece *q = realloc(p, (size_t)cap * sizeof *q);
                if (!q) { free(p); return -1; }
                p = q;
            }
            p[n].s = s; p[n].len = len; n++;
            J = need;
            continue;
        }
        /* The first sentence that does not fit: cut it at a space. */
        if (F - J > 0) {
            int avail = n ? F - J - 1 : F - J, cut = 0;
            for (int i = 1; i < len && i <= avail; i++)
                if (s[i] == ' ') cut = i;
            if (cut > 0) {
                if (n == cap) {
                    piece *q = realloc(p, (size_t)(cap + 1) * sizeof *q);
                    if (!q) { free(p); return -1; }
                    p = q;
                }
                p[n].s = s; p[n].len = cut; n++;
                J += (n > 1 ? 1 : 0) + cut;
            }
        }
        break;
    }
    *out = p;
    *joined = J;
    return n;
}

int hs_needle_generate(hs_needle_sample *out, const hs_assets *a, hs_needle_task task,
                       int length, double depth, uint64_t seed, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if ((int)task < 0 || task >= HS_NEEDLE_TASKS) {
        snprintf(err, errlen, "needle task %d: unknown", (int)task);
        return -1;
    }
    if (!(depth >= 0.0 && depth <= 100.0)) {
        snprintf(err, errlen, "needle depth %g: must be a percentage in [0, 100]", depth);
        return -1;
    }
    if (task != HS_SK1 && a->n_sentences == 0) {
        snprintf(err, errlen, "%s: no prose loaded", hs_needle_task_name(task));
        return -1;
    }
    int min_len = hs_needle_min_length(a, task);
    if (length < min_len) {
        snprintf(err, errlen, "length %d is too small for %s: its prompts need at least %d "
                 "tokens", length, hs_needle_task_name(task), min_len);
        return -1;
    }

    hs_rng r;
    r.state = hs_rng_mix(seed);
    r.state = hs_rng_mix(r.state ^ (uint64_t)(task + 1));
    r.state = hs_rng_mix(r.state ^ (uint64_t)length);
    r.state = hs_rng_mix(r.state ^ (uint64_t)floor(depth * 1000.0 + 0.5));

    const char *adj = a->adjectives[hs_rng_below(&r, (uint64_t)a->n_adjectives)];
    const char *noun = a->nouns[hs_rng_below(&r, (uint64_t)a->n_nouns)];
    char key[64], value[64];
    snprintf(key, sizeof key, "%s-%s", adj, noun);
    draw_value(value, sizeof value, task, &r);
    long start = task == HS_SK1 ? 0 : (long)hs_rng_below(&r, (uint64_t)a->n_sentences);

    char prefix[256], suffix[512], needle[256];
    int lp = prefix_text(prefix, sizeof prefix, task);
    int ls = suffix_text(suffix, sizeof suffix, task, key);
    int h = length - 1 - lp - ls;
    char *text = malloc((size_t)length);
    int32_t *tokens = malloc((size_t)length * sizeof *tokens);
    if (!text || !tokens) {
        free(text); free(tokens);
        snprintf(err, errlen, "needle: out of memory for %d tokens", length);
        return -1;
    }
    for (int attempt = 0; attempt < MAX_VALUE_TRIES; attempt++) {
        if (attempt) draw_value(value, sizeof value, task, &r);
        int ln = needle_text(needle, sizeof needle, task, key, value);
        sentence_source src = {a, task, start};
        piece *pieces = NULL;
        int J = 0;
        int n = fill_pieces(&pieces, &src, h - ln - 1, &J);
        if (n < 0) {
            free(text); free(tokens);
            snprintf(err, errlen, "needle: out of memory");
            return -1;
        }
        /* Needle at the boundary nearest depth% of the filler; ties to the earlier one. */
        double target = depth / 100.0 * (double)J;
        int best = 0, b = 0;
        double best_d = fabs(0.0 - target);
        for (int i = 1; i <= n; i++) {
            b += pieces[i - 1].len + (i > 1 ? 1 : 0);
            double d = fabs((double)b - target);
            if (d < best_d) { best_d = d; best = i; }
        }
        int k = 0;
        memcpy(text + k, prefix, (size_t)lp); k += lp;
        int hay0 = k, needle_off = 0;
        for (int i = 0; i <= n; i++) {
            if (i == best) {
                if (k > hay0) text[k++] = ' ';
                needle_off = k;
                memcpy(text + k, needle, (size_t)ln); k += ln;
            }
            if (i < n) {
                if (k > hay0) text[k++] = ' ';
                memcpy(text + k, pieces[i].s, (size_t)pieces[i].len); k += pieces[i].len;
            }
        }
        free(pieces);
        while (k < hay0 + h) text[k++] = ' ';
        memcpy(text + k, suffix, (size_t)ls); k += ls;
        text[k] = 0;     /* k == length - 1: the byte after the prompt */
        if (count_occurrences(text, value) != 1) continue;

        out->task = task;
        out->length = length;
        out->depth = depth;
        out->seed = seed;
        snprintf(out->key, sizeof out->key, "%s", key);
        snprintf(out->value, sizeof out->value, "%s", value);
        tokens[0] = 256;
        for (int i = 0; i < k; i++) tokens[i + 1] = (unsigned char)text[i];
        out->tokens = tokens;
        out->needle_start = 1 + needle_off;
        out->needle_end = out->needle_start + ln;
        out->span_start = out->needle_start + (int)(strstr(needle, value) - needle);
        out->span_end = out->span_start + (int)strlen(value);
        out->probe_start = 1 + hay0 + h + 1;
        out->probe_end = length;
        free(text);
        return 0;
    }
    free(text); free(tokens);
    snprintf(err, errlen, "%s L=%d depth=%g seed=%llu: no value occurring exactly once after "
             "%d draws", hs_needle_task_name(task), length, depth, (unsigned long long)seed,
             MAX_VALUE_TRIES);
    return -1;
}

void hs_needle_sample_free(hs_needle_sample *s) {
    free(s->tokens);
    s->tokens = NULL;
}

char *hs_needle_prompt_text(const hs_needle_sample *s) {
    char *t = malloc((size_t)s->length);
    if (!t) return NULL;
    int k = 0;
    for (int i = 0; i < s->length; i++)
        if (s->tokens[i] >= 0 && s->tokens[i] < 256) t[k++] = (char)s->tokens[i];
    t[k] = 0;
    return t;
}

int hs_needle_max_new(const hs_needle_sample *s) { return (int)strlen(s->value) + 8; }

int hs_needle_score(const char *value, const int32_t *gen, int n) {
    char buf[512];
    int k = 0;
    for (int i = 0; i < n && k < (int)sizeof buf - 1; i++)
        if (gen[i] >= 0 && gen[i] < 256) buf[k++] = (char)gen[i];
    buf[k] = 0;
    /* Generated bytes may include NUL: search with memmem so they do not end the text. */
    size_t vl = strlen(value);
    return vl > 0 && memmem(buf, (size_t)k, value, vl) != NULL;
}

void hs_needle_render(char *out, size_t n, const int32_t *gen, int n_gen) {
    size_t k = 0;
    for (int i = 0; i < n_gen && k + 1 < n; i++) {
        if (gen[i] < 0 || gen[i] >= 256) continue;
        out[k++] = gen[i] >= 0x20 && gen[i] <= 0x7e ? (char)gen[i] : '.';
    }
    if (n) out[k] = 0;
}
