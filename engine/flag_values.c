/* Shared flag-value grammars (flag_values.h). Hand-written walks rather than strtod/sscanf:
 * those accept "nan", "inf", hex, exponents, signs and leading spaces, and sscanf's %d
 * overflows silently, all of which reached the engine through one flag or another. */
#include "flag_values.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

long long hs_value_count(const char *s) {
    if (!s) return -1;
    const char *p = s;
    long long whole = 0;
    int nd = 0;
    for (; is_digit(*p); p++, nd++) {
        if (whole > HS_VALUE_COUNT_MAX) return -1;   /* before it can overflow */
        whole = whole * 10 + (*p - '0');
    }
    if (!nd) return -1;
    /* the fraction as num / den; trailing zeros do not count against the nine digits kept */
    long long num = 0, den = 1;
    if (*p == '.') {
        const char *f = ++p;
        while (is_digit(*p)) p++;
        const char *e = p;
        if (e == f) return -1;
        while (e > f && e[-1] == '0') e--;
        if (e - f > 9) return -1;
        for (; f < e; f++) { num = num * 10 + (*f - '0'); den *= 10; }
    }
    long long mul = 1;
    switch (*p) {
    case 'k': case 'K': mul = 1LL << 10; p++; break;
    case 'm': case 'M': mul = 1LL << 20; p++; break;
    case 'g': case 'G': mul = 1LL << 30; p++; break;
    default: break;
    }
    if (*p) return -1;
    if (whole > HS_VALUE_COUNT_MAX / mul) return -1;
    /* num < 1e9 and mul <= 2^30: num * mul < 2^60 */
    if ((num * mul) % den) return -1;
    long long v = whole * mul + num * mul / den;
    return v <= HS_VALUE_COUNT_MAX ? v : -1;
}

int hs_value_head(hs_head_ref *out, const char *s) {
    if (!s) return -1;
    int v[3];
    const char *p = s;
    for (int k = 0; k < 3; k++) {
        int nd = 0;
        v[k] = 0;
        for (; is_digit(*p); p++)
            if (++nd > 6) return -1;
            else v[k] = v[k] * 10 + (*p - '0');
        if (!nd || *p != (k < 2 ? '.' : 0)) return -1;
        if (k < 2) p++;
    }
    out->layer = v[0]; out->mixer = v[1]; out->head = v[2];
    return 0;
}

int hs_value_zoom(int out[4], const char *s) {
    if (!s) return -1;
    static const char sep[4] = { ':', ',', ':', 0 };
    long long v[4];
    for (int i = 0; i < 4; i++) {
        const char *end = i < 3 ? strchr(s, sep[i]) : s + strlen(s);
        char buf[32];
        size_t len = end ? (size_t)(end - s) : sizeof buf;
        if (len >= sizeof buf) return -1;
        memcpy(buf, s, len);
        buf[len] = 0;
        if ((v[i] = hs_value_count(buf)) < 0 || v[i] > INT_MAX) return -1;
        s = end + (i < 3);
    }
    if (v[0] >= v[1] || v[2] >= v[3]) return -1;
    for (int i = 0; i < 4; i++) out[i] = (int)v[i];
    return 0;
}

/* Copies the list entry [p, end) into buf without the spaces around it ("0, 50" is a list a
 * shell user types); -1 if it is empty or does not fit. */
static int entry(char *buf, size_t n, const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t')) end--;
    size_t len = (size_t)(end - p);
    if (!len || len >= n) return -1;
    memcpy(buf, p, len);
    buf[len] = 0;
    return 0;
}

static int blank(const char *p, const char *end) {
    for (; p < end; p++) if (*p != ' ' && *p != '\t') return 0;
    return 1;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

int hs_value_counts(int *out, int cap, const char *s, long long lo, long long hi, const char *flag,
                    char *err, size_t errlen) {
    if (!s || !*s) FAIL("%s: empty list", flag);
    int n = 0;
    for (const char *p = s;;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        if (blank(p, end)) FAIL("%s: empty entry in '%.40s'", flag, s);
        char buf[32];
        long long v = entry(buf, sizeof buf, p, end) ? -1 : hs_value_count(buf);
        if (v < lo || v > hi)
            FAIL("%s: '%.*s' is not a count in [%lld, %lld] (4k = 4096)", flag, (int)(end - p > 40 ? 40 : end - p),
                 p, lo, hi);
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= out[i] == (int)v;
        if (!dup) {
            if (n == cap) FAIL("%s: at most %d values", flag, cap);
            out[n++] = (int)v;
        }
        if (!*end) break;
        p = end + 1;
    }
    return n;
}

double hs_value_percent(const char *s) {
    if (!s) return -1;
    const char *p = s;
    while (is_digit(*p)) p++;
    if (p == s) return -1;
    if (*p == '.') {
        const char *f = ++p;
        while (is_digit(*p)) p++;
        if (p == f) return -1;
    }
    if (*p || p - s > 24) return -1;
    double v = 0;
    if (sscanf(s, "%lf", &v) != 1 || !(v >= 0 && v <= 100)) return -1;
    return v;
}

static int add_depth(double *out, int cap, int *n, double v) {
    for (int i = 0; i < *n; i++) if (out[i] == v) return 0;
    if (*n == cap) return -1;
    out[(*n)++] = v;
    return 0;
}

int hs_value_depths(double *out, int cap, const char *s, const char *flag, char *err, size_t errlen) {
    if (!s || !*s) FAIL("%s: empty list", flag);
    int n = 0;
    char buf[32];
    const char *c1 = strchr(s, ':');
    if (c1) {
        const char *c2 = strchr(c1 + 1, ':');
        if (!c2 || strchr(c2 + 1, ':') || strchr(s, ','))
            FAIL("%s: '%.40s' is not FROM:TO:STEP", flag, s);
        double a = entry(buf, sizeof buf, s, c1) ? -1 : hs_value_percent(buf);
        double b = entry(buf, sizeof buf, c1 + 1, c2) ? -1 : hs_value_percent(buf);
        double step = entry(buf, sizeof buf, c2 + 1, c2 + 1 + strlen(c2 + 1)) ? -1 : hs_value_percent(buf);
        if (a < 0 || b < 0) FAIL("%s: '%.40s' needs FROM and TO in [0, 100]", flag, s);
        if (!(step > 0)) FAIL("%s: '%.40s' needs a STEP in (0, 100]", flag, s);
        if (b < a) FAIL("%s: '%.40s' ends before it starts", flag, s);
        for (int i = 0;; i++) {
            double v = a + i * step;
            if (v > b + 1e-9 * (1 + b)) break;
            if (add_depth(out, cap, &n, v > b ? b : v)) FAIL("%s: at most %d depths", flag, cap);
        }
        return n;
    }
    for (const char *p = s;;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        if (blank(p, end)) FAIL("%s: empty entry in '%.40s'", flag, s);
        double v = entry(buf, sizeof buf, p, end) ? -1 : hs_value_percent(buf);
        if (v < 0)
            FAIL("%s: '%.*s' is not a percentage in [0, 100]", flag, (int)(end - p > 40 ? 40 : end - p), p);
        if (add_depth(out, cap, &n, v)) FAIL("%s: at most %d depths", flag, cap);
        if (!*end) break;
        p = end + 1;
    }
    return n;
}
