/* Inference-time knobs (model-spec section 6): resolution against a config, validation,
 * the one CLI parser every subcommand uses, and a one-line description. */
#include "knobs.h"
#include "flag_values.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char hs_knobs_help[] =
    "knobs (inference-time interventions, all off by default):\n"
    "  --log-scale[=L0]          NoPE heads scale scores by c_t = max(1, ln(t+1)/ln L0)\n"
    "                            (L0 defaults to the model's train_context)\n"
    "  --swla[=exact|overlap]    sliding-window linear attention on gla/gdn heads (default exact)\n"
    "  --swla-window W           SWLA window (default train_context)\n"
    "  --swla-stride S           overlap stride, 1 <= S <= W (default max(1, W/4))\n"
    "  --swa-window W            replaces the window of every swa mixer\n"
    "  --rope-window[=W]         rope heads attend only to the last W keys (default train_context)\n"
    "  --ablate L.M.H,...        zero head H of mixer M (0 first, 1 the HH nope) of layer L\n";

static int l0_of(const hs_config *c, int override) { return override > 0 ? override : c->train_context; }

void hs_knobs_resolve(hs_knobs_resolved *out, const hs_knobs *k, const hs_config *c) {
    memset(out, 0, sizeof *out);
    if (k->log_scale) out->log_L0 = (float)log((double)l0_of(c, k->log_scale_L0));
    out->swla = k->swla;
    if (k->swla != HS_SWLA_OFF) {
        out->swla_window = l0_of(c, k->swla_window);
        if (k->swla == HS_SWLA_OVERLAP) {
            int s = k->swla_stride > 0 ? k->swla_stride : out->swla_window / 4;
            out->swla_stride = s < 1 ? 1 : s;
        } else {
            out->swla_stride = out->swla_window;
        }
    }
    out->swa_window = k->swa_window;
    out->rope_window = k->rope_window == HS_KNOB_L0 ? c->train_context : k->rope_window;
}

int hs_knobs_validate(const hs_knobs *k, const hs_config *c, char *err, size_t errlen) {
    if (k->log_scale) {
        int l0 = l0_of(c, k->log_scale_L0);
        if (l0 < 2) {
            snprintf(err, errlen, "--log-scale: L0 must be at least 2 (got %d)", l0);
            return -1;
        }
    } else if (k->log_scale_L0) {
        snprintf(err, errlen, "--log-scale: L0 given without enabling log scaling");
        return -1;
    }
    if (k->swla == HS_SWLA_OFF) {
        if (k->swla_window) { snprintf(err, errlen, "--swla-window needs --swla"); return -1; }
        if (k->swla_stride) { snprintf(err, errlen, "--swla-stride needs --swla=overlap"); return -1; }
    } else {
        int w = l0_of(c, k->swla_window);
        if (k->swla_window < 0 || w < 1) {
            snprintf(err, errlen, "--swla-window: must be at least 1 (got %d)", k->swla_window ? k->swla_window : w);
            return -1;
        }
        if (k->swla == HS_SWLA_EXACT && k->swla_stride) {
            snprintf(err, errlen, "--swla-stride needs --swla=overlap");
            return -1;
        }
        if (k->swla == HS_SWLA_OVERLAP && (k->swla_stride < 0 || k->swla_stride > w)) {
            snprintf(err, errlen, "--swla-stride: must satisfy 1 <= S <= W=%d (got %d)", w, k->swla_stride);
            return -1;
        }
    }
    if (k->swa_window < 0) {
        snprintf(err, errlen, "--swa-window: must be at least 1 (got %d)", k->swa_window);
        return -1;
    }
    if (k->rope_window < 0 && k->rope_window != HS_KNOB_L0) {
        snprintf(err, errlen, "--rope-window: must be at least 1 (got %d)", k->rope_window);
        return -1;
    }
    if (k->rope_window == HS_KNOB_L0 && c->train_context < 1) {
        snprintf(err, errlen, "--rope-window: the model has no train_context to default to");
        return -1;
    }
    if (k->n_ablate < 0 || k->n_ablate > HS_MAX_ABLATE) {
        snprintf(err, errlen, "--ablate: at most %d heads", HS_MAX_ABLATE);
        return -1;
    }
    for (int i = 0; i < k->n_ablate; i++) {
        const hs_head_ref *r = &k->ablate[i];
        if (r->layer < 0 || r->layer >= c->num_layers) {
            snprintf(err, errlen, "--ablate %d.%d.%d: layer %d out of range (model has %d layers)",
                     r->layer, r->mixer, r->head, r->layer, c->num_layers);
            return -1;
        }
        const hs_layer_config *L = &c->layers[r->layer];
        if (r->mixer < 0 || r->mixer >= L->n_mixers) {
            snprintf(err, errlen, "--ablate %d.%d.%d: mixer %d out of range (layer %d has %d)",
                     r->layer, r->mixer, r->head, r->mixer, r->layer, L->n_mixers);
            return -1;
        }
        if (r->head < 0 || r->head >= L->mixers[r->mixer].num_heads) {
            snprintf(err, errlen, "--ablate %d.%d.%d: head %d out of range (mixer has %d heads)",
                     r->layer, r->mixer, r->head, r->head, L->mixers[r->mixer].num_heads);
            return -1;
        }
    }
    return 0;
}

int hs_knobs_mixer_window(const hs_knobs_resolved *k, const hs_mixer_config *m) {
    switch (m->type) {
    case HS_SWA:  return k->swa_window > 0 ? k->swa_window : m->window;
    case HS_ROPE: return k->rope_window > 0 ? k->rope_window : 0;
    default:      return 0;
    }
}

float hs_knobs_log_scale(const hs_knobs_resolved *k, int t) {
    if (k->log_L0 <= 0) return 1.0f;
    double c = log((double)t + 1.0) / (double)k->log_L0;
    return c > 1.0 ? (float)c : 1.0f;
}

int hs_knobs_is_ablated(const hs_knobs *k, int layer, int mixer, int head) {
    for (int i = 0; i < k->n_ablate; i++)
        if (k->ablate[i].layer == layer && k->ablate[i].mixer == mixer && k->ablate[i].head == head)
            return 1;
    return 0;
}

/* ---- CLI parsing ---- */

/* Parses a positive int; 0 on success. */
static int parse_pos_int(const char *s, int *out) {
    if (!s || !*s) return -1;
    for (const char *p = s; *p; p++) if (*p < '0' || *p > '9') return -1;
    errno = 0;
    long v = strtol(s, NULL, 10);
    if (errno || v < 1 || v > INT_MAX) return -1;
    *out = (int)v;
    return 0;
}

static int all_digits(const char *s) {
    if (!s || !*s) return 0;
    for (; *s; s++) if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* Matches "--name" or "--name=value". Returns 1 and sets *val (NULL when no '='). */
static int match_flag(const char *arg, const char *name, const char **val) {
    size_t n = strlen(name);
    if (strncmp(arg, name, n)) return 0;
    if (arg[n] == 0) { *val = NULL; return 1; }
    if (arg[n] == '=') { *val = arg + n + 1; return 1; }
    return 0;
}

/* A flag whose value is required: "--f V" or "--f=V". */
static int required_int(const char *flag, const char *val, int argc, char **argv, int *i,
                        int *out, char *err, size_t errlen) {
    if (!val) {
        if (*i + 1 >= argc) { snprintf(err, errlen, "%s: missing value", flag); return -1; }
        val = argv[++*i];
    }
    if (parse_pos_int(val, out)) {
        snprintf(err, errlen, "%s: expected a positive integer, got '%s'", flag, val);
        return -1;
    }
    return 0;
}

/* An optional numeric value: "--f", "--f=V", or "--f V" when V is all digits. */
static int optional_int(const char *flag, const char *val, int argc, char **argv, int *i,
                        int *out, int *given, char *err, size_t errlen) {
    *given = 0;
    if (!val && *i + 1 < argc && all_digits(argv[*i + 1])) val = argv[++*i];
    if (!val) return 0;
    if (parse_pos_int(val, out)) {
        snprintf(err, errlen, "%s: expected a positive integer, got '%s'", flag, val);
        return -1;
    }
    *given = 1;
    return 0;
}

static int parse_ablate(hs_knobs *k, const char *list, char *err, size_t errlen) {
    const char *p = list;
    if (!*p) { snprintf(err, errlen, "--ablate: empty list (expected L.M.H,...)"); return -1; }
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char item[64];
        if (n == 0 || n >= sizeof item) {
            snprintf(err, errlen, "--ablate: bad entry in '%s' (expected L.M.H,...)", list);
            return -1;
        }
        memcpy(item, p, n);
        item[n] = 0;
        hs_head_ref h;
        if (hs_value_head(&h, item)) {
            snprintf(err, errlen, "--ablate: bad entry '%.*s' (expected L.M.H, e.g. 3.0.1)", (int)n, p);
            return -1;
        }
        const int v[3] = { h.layer, h.mixer, h.head };
        if (!hs_knobs_is_ablated(k, v[0], v[1], v[2])) {
            if (k->n_ablate >= HS_MAX_ABLATE) {
                snprintf(err, errlen, "--ablate: at most %d heads", HS_MAX_ABLATE);
                return -1;
            }
            k->ablate[k->n_ablate].layer = v[0];
            k->ablate[k->n_ablate].mixer = v[1];
            k->ablate[k->n_ablate].head = v[2];
            k->n_ablate++;
        }
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

int hs_knobs_parse_arg(hs_knobs *k, int argc, char **argv, int *i, char *err, size_t errlen) {
    const char *a = argv[*i], *val;
    int v, given;
    if (match_flag(a, "--log-scale", &val)) {
        if (optional_int("--log-scale", val, argc, argv, i, &v, &given, err, errlen)) return -1;
        k->log_scale = 1;
        k->log_scale_L0 = given ? v : 0;
        if (given && v < 2) { snprintf(err, errlen, "--log-scale: L0 must be at least 2 (got %d)", v); return -1; }
        *i += 1;
        return 1;
    }
    if (match_flag(a, "--swla", &val)) {
        if (!val && *i + 1 < argc && (!strcmp(argv[*i + 1], "exact") || !strcmp(argv[*i + 1], "overlap")))
            val = argv[++*i];
        if (!val || !strcmp(val, "exact")) k->swla = HS_SWLA_EXACT;
        else if (!strcmp(val, "overlap")) k->swla = HS_SWLA_OVERLAP;
        else { snprintf(err, errlen, "--swla: expected exact or overlap, got '%s'", val); return -1; }
        *i += 1;
        return 1;
    }
    if (match_flag(a, "--swla-window", &val)) {
        if (required_int("--swla-window", val, argc, argv, i, &k->swla_window, err, errlen)) return -1;
        *i += 1;
        return 1;
    }
    if (match_flag(a, "--swla-stride", &val)) {
        if (required_int("--swla-stride", val, argc, argv, i, &k->swla_stride, err, errlen)) return -1;
        *i += 1;
        return 1;
    }
    if (match_flag(a, "--swa-window", &val)) {
        if (required_int("--swa-window", val, argc, argv, i, &k->swa_window, err, errlen)) return -1;
        *i += 1;
        return 1;
    }
    if (match_flag(a, "--rope-window", &val)) {
        if (optional_int("--rope-window", val, argc, argv, i, &v, &given, err, errlen)) return -1;
        k->rope_window = given ? v : HS_KNOB_L0;
        *i += 1;
        return 1;
    }
    if (match_flag(a, "--ablate", &val)) {
        if (!val) {
            if (*i + 1 >= argc) { snprintf(err, errlen, "--ablate: missing value (expected L.M.H,...)"); return -1; }
            val = argv[++*i];
        }
        if (parse_ablate(k, val, err, errlen)) return -1;
        *i += 1;
        return 1;
    }
    return 0;
}

/* Appends with a separating space; keeps the string terminated when it runs out of room. */
static void append(char *out, size_t n, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *out, size_t n, size_t *len, const char *fmt, ...) {
    if (*len + 1 >= n) return;
    if (*len) out[(*len)++] = ' ';
    out[*len] = 0;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + *len, n - *len, fmt, ap);
    va_end(ap);
    if (w > 0) *len += (size_t)w < n - *len ? (size_t)w : n - *len - 1;
}

void hs_knobs_describe(char *out, size_t n, const hs_knobs *k) {
    size_t len = 0;
    if (!n) return;
    out[0] = 0;
    if (k->log_scale) {
        if (k->log_scale_L0) append(out, n, &len, "log(L0=%d)", k->log_scale_L0);
        else append(out, n, &len, "log(L0=train)");
    }
    if (k->swla != HS_SWLA_OFF) {
        char w[32], s[32];
        if (k->swla_window) snprintf(w, sizeof w, "%d", k->swla_window); else snprintf(w, sizeof w, "L0");
        if (k->swla == HS_SWLA_EXACT) append(out, n, &len, "swla=exact W=%s", w);
        else {
            if (k->swla_stride) snprintf(s, sizeof s, "%d", k->swla_stride); else snprintf(s, sizeof s, "W/4");
            append(out, n, &len, "swla=overlap W=%s S=%s", w, s);
        }
    }
    if (k->swa_window) append(out, n, &len, "swa_window=%d", k->swa_window);
    if (k->rope_window == HS_KNOB_L0) append(out, n, &len, "rope_window=L0");
    else if (k->rope_window > 0) append(out, n, &len, "rope_window=%d", k->rope_window);
    if (k->n_ablate) {
        append(out, n, &len, "ablate=");
        for (int i = 0; i < k->n_ablate && len + 1 < n; i++) {
            int w = snprintf(out + len, n - len, "%s%d.%d.%d", i ? "," : "", k->ablate[i].layer,
                             k->ablate[i].mixer, k->ablate[i].head);
            if (w > 0) len += (size_t)w < n - len ? (size_t)w : n - len - 1;
        }
    }
    if (!len) snprintf(out, n, "off");
}
