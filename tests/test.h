/* Minimal test harness. Each TEST registers itself at load time; tests/test_main.c runs
 * them. Inside a test: CHECK(cond, fmt, ...) records a failure and returns; SKIP(fmt, ...)
 * marks the test skipped with a reason. */
#ifndef HS_TEST_H
#define HS_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct hs_test_ctx {
    int failed, skipped;
    char msg[512];
} hs_test_ctx;

typedef void (*hs_test_fn)(hs_test_ctx *);
void hs_test_register(const char *name, const char *file, hs_test_fn fn);

#define TEST(name)                                                                  \
    static void test_##name(hs_test_ctx *ctx__);                                    \
    __attribute__((constructor)) static void register_##name(void) {                \
        hs_test_register(#name, __FILE__, test_##name);                             \
    }                                                                               \
    static void test_##name(hs_test_ctx *ctx__)

#define CHECK(cond, ...)                                                            \
    do {                                                                            \
        if (!(cond)) {                                                              \
            int n__ = snprintf(ctx__->msg, sizeof ctx__->msg, "%s:%d: ", __FILE__, __LINE__); \
            snprintf(ctx__->msg + n__, sizeof ctx__->msg - (size_t)n__, __VA_ARGS__); \
            ctx__->failed = 1;                                                      \
            return;                                                                 \
        }                                                                           \
    } while (0)

#define SKIP(...)                                                                   \
    do {                                                                            \
        snprintf(ctx__->msg, sizeof ctx__->msg, __VA_ARGS__);                       \
        ctx__->skipped = 1;                                                         \
        return;                                                                     \
    } while (0)

/* Relative error of a against reference b: max|a-b| / max(max|b|, floor). */
double hs_test_rel_err(const float *a, const double *b, size_t n, double floor);
double hs_test_rel_err_ff(const float *a, const float *b, size_t n, double floor);
/* Deterministic random numbers for tests. */
typedef struct { unsigned long long s; } hs_test_rng;
double hs_test_uniform(hs_test_rng *r);          /* [0,1) */
double hs_test_normal(hs_test_rng *r);
void hs_test_fill_normal(float *x, size_t n, double scale, hs_test_rng *r);
/* A fresh empty temp directory for this test (removed at exit). */
const char *hs_test_tmpdir(void);

#endif
