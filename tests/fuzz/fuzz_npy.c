/* libFuzzer entry point for the .npy reader (hs_npy_parse: token files, fixtures). An accepted
 * array must have a known dtype, at most HS_NPY_MAX_NDIM non-negative dimensions whose product
 * is count, and count readable values (ASan checks the read); float32 and int32 arrays must
 * survive hs_npy_write_* and parse back to the same bytes. A rejected image must name the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

static char path[64];

static uint8_t *slurp(const char *p, size_t *len) {
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    *len = b ? (size_t)n : 0;
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) snprintf(path, sizeof path, "/tmp/hs_fuzz_npy.%d.npy", (int)getpid());
    hs_npy_array a, b;
    char err[512];
    err[0] = 0;
    if (hs_npy_parse(&a, data, size, "fuzz.npy", err, sizeof err) != 0) {
        if (!memchr(err, 0, sizeof err) || !strstr(err, "fuzz.npy")) __builtin_trap();
        return 0;
    }
    if (a.ndim < 0 || a.ndim > HS_NPY_MAX_NDIM || (a.dtype != HS_NPY_F32 && a.dtype != HS_NPY_I32 && a.dtype != HS_NPY_I64))
        __builtin_trap();
    size_t count = 1;
    for (int i = 0; i < a.ndim; i++) {
        if (a.shape[i] < 0) __builtin_trap();
        if (a.shape[i] && count > SIZE_MAX / (size_t)a.shape[i]) __builtin_trap();
        count *= (size_t)a.shape[i];
    }
    if (count != a.count || (count && !a.data)) __builtin_trap();
    const size_t esize = a.dtype == HS_NPY_I64 ? 8 : 4;
    unsigned sum = 0;
    for (size_t i = 0; i < count * esize; i++) sum += ((const uint8_t *)a.data)[i];
    (void)sum;
    if (a.dtype != HS_NPY_I64 && a.ndim >= 1) {
        int rc = a.dtype == HS_NPY_F32 ? hs_npy_write_f32(path, a.data, a.ndim, a.shape, err, sizeof err)
                                       : hs_npy_write_i32(path, a.data, a.ndim, a.shape, err, sizeof err);
        if (rc != 0) __builtin_trap();
        size_t len;
        uint8_t *img = slurp(path, &len);
        if (!img || hs_npy_parse(&b, img, len, "roundtrip.npy", err, sizeof err) != 0) __builtin_trap();
        if (b.dtype != a.dtype || b.ndim != a.ndim || b.count != a.count ||
            memcmp(b.shape, a.shape, sizeof a.shape[0] * (size_t)a.ndim) != 0 ||
            (count && memcmp(a.data, b.data, count * esize) != 0))
            __builtin_trap();
        hs_npy_free(&b);
        free(img);
        unlink(path);
    }
    hs_npy_free(&a);
    return 0;
}
