/* Parsers of the values that several commands' flags share: token counts, length lists,
 * depth lists and head references. One grammar each, so `niah --depths 0:100:25` and the
 * explorer's `--depths 0:100:25` mean the same thing and reject the same input. */
#ifndef HS_FLAG_VALUES_H
#define HS_FLAG_VALUES_H

#include <stddef.h>

#include "knobs.h"

/* Largest count hs_value_count accepts (2^40): far above any length, and exact in a double. */
#define HS_VALUE_COUNT_MAX (1LL << 40)
/* Largest layer, mixer or head index in an L.M.H reference. */
#define HS_VALUE_HEAD_MAX 999999

/* A non-negative count: digits, an optional fraction (at most nine digits before its trailing
 * zeros), an optional binary suffix k/m/g (x1024, x1024^2, x1024^3): "4096", "4k", "1.5k"
 * (1536), "2M". The value must be a whole number at most HS_VALUE_COUNT_MAX; no sign, spaces,
 * exponent, hex, inf or nan.
 * Returns the count, or -1. */
long long hs_value_count(const char *s);

/* A head reference "L.M.H": three non-negative integers of at most six digits each, nothing
 * else. Returns 0, or -1 (out untouched). */
int hs_value_head(hs_head_ref *out, const char *s);

/* A window "t0:t1,s0:s1" of counts (hs_value_count, each at most INT_MAX) with t0 < t1 and
 * s0 < s1. Returns 0 with out = {t0, t1, s0, s1}, or -1 (out untouched). */
int hs_value_zoom(int out[4], const char *s);

/* A comma-separated list of counts (hs_value_count) each within [lo, hi] (hi <= INT_MAX), at most cap of
 * them after dropping repeats (the first occurrence keeps its place); spaces around an entry
 * are allowed, an empty entry is not. Returns how many (>= 1),
 * or -1 with a one-line message naming flag in err. */
int hs_value_counts(int *out, int cap, const char *s, long long lo, long long hi, const char *flag,
                    char *err, size_t errlen);

/* A percentage: digits with an optional fraction ("50", "12.5"), within [0, 100].
 * Returns it, or -1. */
double hs_value_percent(const char *s);

/* Depths in percent: "A:B:STEP" (A, A+STEP, ... up to B inclusive; B itself when the steps
 * land within rounding of it) or a comma-separated list, every value finite within [0, 100],
 * at most cap after dropping repeats. Returns how many (>= 1), or -1 with a message in err. */
int hs_value_depths(double *out, int cap, const char *s, const char *flag, char *err, size_t errlen);

#endif
