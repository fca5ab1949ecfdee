/* The shared flag-value grammars (engine/flag_values.h): counts against values built from their
 * parts in integer arithmetic on random inputs, every out-of-grammar character rejected, and
 * the list parsers' ranges, repeats, limits and messages. */
#include <stdint.h>
#include <stdlib.h>

#include "../engine/flag_values.h"
#include "../engine/rng.h"
#include "test.h"

/* Writes a random count in the grammar and returns its value, or -1 when its fraction does not
 * make a whole number (the parser must then reject it too). Independent of the parser: the
 * value is (whole * 10^f + frac) * mul / 10^f checked for divisibility in integers. */
static long long random_count(hs_rng *r, char *out, size_t n) {
    long long whole = (long long)hs_rng_below(r, 5) == 0 ? (long long)hs_rng_below(r, 10)
                                                          : (long long)hs_rng_below(r, 5000000);
    int f = (int)hs_rng_below(r, 4);            /* fraction digits, 0 = none */
    long long frac = 0, p10 = 1;
    for (int i = 0; i < f; i++) { frac = frac * 10 + (long long)hs_rng_below(r, 10); p10 *= 10; }
    static const char suf[] = { 0, 'k', 'K', 'm', 'M', 'g', 'G' };
    char s = suf[hs_rng_below(r, sizeof suf)];
    long long mul = s == 'k' || s == 'K' ? 1024 : s == 'm' || s == 'M' ? 1 << 20 : s ? 1 << 30 : 1;
    int len = snprintf(out, n, "%lld", whole);
    if (f) len += snprintf(out + len, n - (size_t)len, ".%0*lld", f, frac);
    if (s) { out[len++] = s; out[len] = 0; }
    long long num = (whole * p10 + frac) * mul;
    if (num % p10) return -1;
    long long v = num / p10;
    return v <= HS_VALUE_COUNT_MAX ? v : -1;
}

TEST(flag_values_count_random) {
    hs_rng r = { 20261206 };
    char s[64];
    int whole_ok = 0;
    for (int it = 0; it < 20000; it++) {
        long long want = random_count(&r, s, sizeof s);
        long long got = hs_value_count(s);
        CHECK(got == want, "'%s': got %lld, want %lld", s, got, want);
        whole_ok += want >= 0;
        /* one character from outside the grammar, anywhere, makes it invalid */
        static const char bad[] = " +-eExX,:;/_abNn\t";
        size_t len = strlen(s), at = hs_rng_below(&r, len + 1);
        char t[80];
        memcpy(t, s, at);
        t[at] = bad[hs_rng_below(&r, sizeof bad - 1)];
        memcpy(t + at + 1, s + at, len - at + 1);
        CHECK(hs_value_count(t) == -1, "'%s' was accepted as %lld", t, hs_value_count(t));
    }
    CHECK(whole_ok > 2500, "only %d of the random counts were whole", whole_ok);
    static const char *const rejected[] = { "", "nan", "inf", "-1", "+5", " 5", "5 ", "1e3", "0x10", "1.", ".5",
                                            "1.5", "4kk", "k", "1..5", "99999999999999999999",
                                            "1099511627777", "1.0000000001k" };
    for (size_t i = 0; i < sizeof rejected / sizeof rejected[0]; i++)
        CHECK(hs_value_count(rejected[i]) == -1, "'%s' was accepted", rejected[i]);
    CHECK(hs_value_count("1099511627776") == HS_VALUE_COUNT_MAX && hs_value_count("1024g") == HS_VALUE_COUNT_MAX &&
          hs_value_count("0") == 0 && hs_value_count("1.5k") == 1536 && hs_value_count("4.000000000000k") == 4096 &&
          hs_value_count("0.0009765625k") == -1 && hs_value_count("0.5m") == 524288, "edge counts");
}

TEST(flag_values_head_and_percent) {
    hs_head_ref h = { -1, -1, -1 };
    CHECK(hs_value_head(&h, "3.0.12") == 0 && h.layer == 3 && h.mixer == 0 && h.head == 12, "3.0.12");
    CHECK(hs_value_head(&h, "999999.0.0") == 0 && h.layer == HS_VALUE_HEAD_MAX, "six digits");
    static const char *const bad[] = { "", "3", "3.0", "3.0.", ".0.1", "3.0.1.", "3.0.1.2", "3..1", "-3.0.1",
                                       "3.0.+1", "3.0.1 ", " 3.0.1", "1000000.0.0", "3,0,1", "3.0.1x",
                                       "99999999999.0.0" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        h.layer = h.mixer = h.head = -5;
        CHECK(hs_value_head(&h, bad[i]) == -1 && h.layer == -5, "'%s' was accepted", bad[i]);
    }
    CHECK(hs_value_percent("0") == 0 && hs_value_percent("100") == 100 && hs_value_percent("12.5") == 12.5 &&
          hs_value_percent("100.0") == 100, "percentages");
    static const char *const badp[] = { "", "nan", "inf", "-0", "100.01", "1e1", "12.", ".5", "5%", "0x1", " 5" };
    for (size_t i = 0; i < sizeof badp / sizeof badp[0]; i++)
        CHECK(hs_value_percent(badp[i]) == -1, "'%s' was accepted as a percentage", badp[i]);
}

TEST(flag_values_zoom) {
    int z[4] = { -1, -1, -1, -1 };
    CHECK(hs_value_zoom(z, "10:20,0:4k") == 0 && z[0] == 10 && z[1] == 20 && z[2] == 0 && z[3] == 4096, "10:20,0:4k");
    static const char *const bad[] = { "", "0:2,0", "0:2", "5:1,0:2", "0:2,3:3", "0:2,0:3:4", "0,2:0:3", "-1:2,0:3",
                                       "0:99999999999,0:5", "0:2g,0:5", "0:2, 0:5", "0:nan,0:5", "0:2,0:5x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        z[0] = -7;
        CHECK(hs_value_zoom(z, bad[i]) == -1 && z[0] == -7, "'%s' was accepted", bad[i]);
    }
}

TEST(flag_values_lists) {
    int c[4];
    char err[200];
    CHECK(hs_value_counts(c, 4, "1k,2k,1024,4096", 2, 1 << 24, "--lengths", err, sizeof err) == 3 &&
          c[0] == 1024 && c[1] == 2048 && c[2] == 4096, "repeats dropped, order kept");
    static const char *const bad[] = { "", "1k,", ",1k", "1k,,2k", "1k, ,2k", "1 k", "1", "1k,nan", "1k,32M", "1k,2k,3k,4k,5k",
                                       "000000000000000000000000000000001k" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int n = hs_value_counts(c, 4, bad[i], 2, 1 << 24, "--lengths", err, sizeof err);
        CHECK(n == -1 && !strncmp(err, "--lengths: ", 11) && !strchr(err, '\n'), "'%s': n=%d err='%s'", bad[i], n,
              err);
    }
    double d[12];
    CHECK(hs_value_depths(d, 12, "0:100:25", "--depths", err, sizeof err) == 5 && d[0] == 0 && d[4] == 100, "0:100:25");
    CHECK(hs_value_depths(d, 12, "0:100:30", "--depths", err, sizeof err) == 4 && d[3] == 90, "0:100:30 stops at 90");
    CHECK(hs_value_depths(d, 12, "0:1:0.1", "--depths", err, sizeof err) == 11 && d[10] == 1, "rounding lands on 1");
    CHECK(hs_value_depths(d, 12, "50,0,50,12.5", "--depths", err, sizeof err) == 3 && d[0] == 50 && d[2] == 12.5,
          "list with a repeat");
    CHECK(hs_value_depths(d, 12, "0, 50 ,\t100", "--depths", err, sizeof err) == 3 && d[1] == 50 && d[2] == 100,
          "spaces around entries");
    CHECK(hs_value_counts(c, 4, " 1k , 2k", 2, 1 << 24, "--lengths", err, sizeof err) == 2 && c[1] == 2048,
          "spaces around counts");
    static const char *const badd[] = { "", "0:nan:5", "nan", "0:100:0", "10:5:1", "0:100", "0:100:25:5",
                                        "0:100:25,50", "0,101", "0,,5", "inf", "0:100:1", "-5", "5,",
                                        "0:100:0.0000001" };
    for (size_t i = 0; i < sizeof badd / sizeof badd[0]; i++) {
        err[0] = 0;
        int n = hs_value_depths(d, 12, badd[i], "--depths", err, sizeof err);
        CHECK(n == -1 && !strncmp(err, "--depths: ", 10) && !strchr(err, '\n'), "'%s': n=%d err='%s'", badd[i], n,
              err);
    }
}
