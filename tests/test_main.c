/* Test runner: runs every registered TEST (optionally filtered by a substring), prints one
 * line per test and a closing "N passed, N failed, N skipped" line. */
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TESTS 1024
static struct { const char *name, *file; hs_test_fn fn; } tests[MAX_TESTS];
static int n_tests;

void hs_test_register(const char *name, const char *file, hs_test_fn fn) {
    if (n_tests >= MAX_TESTS) { fprintf(stderr, "too many tests\n"); exit(2); }
    tests[n_tests].name = name; tests[n_tests].file = file; tests[n_tests].fn = fn;
    n_tests++;
}

double hs_test_rel_err(const float *a, const double *b, size_t n, double floor) {
    double md = 0, mb = floor;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (d != d) return d; /* a NaN anywhere fails every bound (a later d > NaN-check would drop it) */
        if (d > md) md = d;
        if (fabs(b[i]) > mb) mb = fabs(b[i]);
    }
    return md / mb;
}

double hs_test_rel_err_ff(const float *a, const float *b, size_t n, double floor) {
    double md = 0, mb = floor;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d != d) return d;
        if (d > md) md = d;
        if (fabs((double)b[i]) > mb) mb = fabs((double)b[i]);
    }
    return md / mb;
}

double hs_test_uniform(hs_test_rng *r) {
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(r->s >> 11) * (1.0 / 9007199254740992.0);
}

double hs_test_normal(hs_test_rng *r) {
    double u1 = hs_test_uniform(r), u2 = hs_test_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void hs_test_fill_normal(float *x, size_t n, double scale, hs_test_rng *r) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * hs_test_normal(r));
}

static char tmproot[256];
static int tmpcount;
static char tmpcur[300];

const char *hs_test_tmpdir(void) {
    if (!tmproot[0]) {
        snprintf(tmproot, sizeof tmproot, "/tmp/hs_tests.XXXXXX");
        if (!mkdtemp(tmproot)) { perror("mkdtemp"); exit(2); }
    }
    snprintf(tmpcur, sizeof tmpcur, "%s/%d", tmproot, tmpcount++);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", tmpcur);
    if (system(cmd) != 0) { fprintf(stderr, "cannot create %s\n", tmpcur); exit(2); }
    return tmpcur;
}

static void cleanup_tmp(void) {
    if (tmproot[0] && !getenv("HS_KEEP_TMP")) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmproot);
        if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", tmproot);
    }
}

int main(int argc, char **argv) {
    const char *filter = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0, skipped = 0;
    atexit(cleanup_tmp);
    for (int i = 0; i < n_tests; i++) {
        if (filter && filter[0] && !strstr(tests[i].name, filter)) continue;
        hs_test_ctx ctx = {0};
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        tests[i].fn(&ctx);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
        if (ctx.failed) { failed++; printf("FAIL %s (%.0f ms): %s\n", tests[i].name, ms, ctx.msg); }
        else if (ctx.skipped) { skipped++; printf("skip %s: %s\n", tests[i].name, ctx.msg); }
        else { passed++; printf("ok   %s (%.0f ms)\n", tests[i].name, ms); }
        fflush(stdout);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
