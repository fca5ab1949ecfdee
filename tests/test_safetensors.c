/* safetensors: every rejection of model-spec section 1 with its message, dtype conversions
 * against exact references, writer -> reader round trip, the HF sharded index. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "safetensors.h"
#include "test.h"

/* ---- conversion references, written from the IEEE formats ------------------------------ */

/* Value of a binary16 / bfloat16 bit pattern from its fields (double is exact for both). */
static double ref_f16(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

static double ref_bf16(uint16_t h) {
    int s = h >> 15, e = (h >> 7) & 255, m = h & 127;
    double v = e == 0 ? ldexp(m, -133) : e == 255 ? (m ? NAN : INFINITY) : ldexp(128 + m, e - 134);
    return s ? -v : v;
}

static int same_value(double a, float b) {
    if (isnan(a)) return isnan(b);
    return a == (double)b && !signbit(a) == !signbit(b);
}

TEST(st_bf16_to_f32_exhaustive) {
    for (uint32_t h = 0; h < 65536; h++)
        CHECK(same_value(ref_bf16((uint16_t)h), hs_bf16_to_f32((uint16_t)h)), "bf16 0x%04x", h);
}

TEST(st_f16_to_f32_exhaustive) {
    for (uint32_t h = 0; h < 65536; h++)
        CHECK(same_value(ref_f16((uint16_t)h), hs_f16_to_f32((uint16_t)h)), "f16 0x%04x -> %.9g, want %.9g",
              h, (double)hs_f16_to_f32((uint16_t)h), ref_f16((uint16_t)h));
}

/* Round to nearest, ties to even, by searching the positive finite codes of a 16-bit format
 * (monotonic in their bit patterns); the code past the largest finite stands for the value
 * where rounding overflows to infinity (max + one ulp). */
static uint16_t ref_round(double x, double (*val)(uint16_t), uint16_t inf_code) {
    int neg = signbit(x);
    double a = fabs(x);
    uint16_t lo = 0, hi = inf_code;               /* val(lo) <= a < val(hi) */
    double vmax = val((uint16_t)(inf_code - 1)), vinf = vmax + (vmax - val((uint16_t)(inf_code - 2)));
    if (a >= vinf) return (uint16_t)(inf_code | (neg ? 0x8000 : 0));
    while (hi - lo > 1) {
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (val(mid) <= a) lo = mid; else hi = mid;
    }
    double vl = val(lo), vh = hi == inf_code ? vinf : val(hi);
    uint16_t r = (a - vl < vh - a) ? lo : (a - vl > vh - a) ? hi : ((lo & 1) ? hi : lo);
    return (uint16_t)(r | (neg ? 0x8000 : 0));
}

static float probe(hs_test_rng *r, int k) {
    /* specials, then random bit patterns, then values near the formats' edges */
    static const float sp[] = { 0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.0f, 65520.0f, 1e-8f, 5.96e-8f,
                                2.98023224e-8f, 6.1e-5f, FLT_MAX, -FLT_MAX, FLT_MIN, 3.3961776e38f, 1.00390625f,
                                1.01171875f, 1.0078125f };
    int nsp = (int)(sizeof sp / sizeof sp[0]);
    if (k < nsp) return sp[k];
    uint32_t u = (uint32_t)(hs_test_uniform(r) * 4294967296.0);
    if (k % 3 == 0) u = (u & 0x807fffffu) | ((uint32_t)(100 + (int)(hs_test_uniform(r) * 60)) << 23);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

TEST(st_f32_to_bf16_round_nearest_even) {
    hs_test_rng r = { 11 };
    for (int k = 0; k < 200000; k++) {
        float f = probe(&r, k);
        uint16_t got = hs_f32_to_bf16(f);
        if (isnan(f)) { CHECK(isnan(hs_bf16_to_f32(got)), "NaN lost"); continue; }
        uint16_t want = ref_round(f, ref_bf16, 0x7f80);
        CHECK(got == want, "bf16(%.9g) = 0x%04x, want 0x%04x", (double)f, got, want);
    }
    float nan = NAN;
    CHECK(isnan(hs_bf16_to_f32(hs_f32_to_bf16(nan))), "NaN");
}

TEST(st_f32_to_f16_round_nearest_even) {
    hs_test_rng r = { 12 };
    for (int k = 0; k < 200000; k++) {
        float f = probe(&r, k);
        uint16_t got = hs_f32_to_f16(f);
        if (isnan(f)) { CHECK(isnan(hs_f16_to_f32(got)), "NaN lost"); continue; }
        uint16_t want = ref_round(f, ref_f16, 0x7c00);
        CHECK(got == want, "f16(%.9g) = 0x%04x, want 0x%04x", (double)f, got, want);
    }
    /* every f16 value and every midpoint between neighbours */
    for (uint32_t h = 0; h < 0x7c00; h++) {
        CHECK(hs_f32_to_f16((float)ref_f16((uint16_t)h)) == h, "exact 0x%04x", h);
        if (h + 1 < 0x7c00) {
            float mid = (float)((ref_f16((uint16_t)h) + ref_f16((uint16_t)(h + 1))) / 2);
            uint16_t want = ref_round(mid, ref_f16, 0x7c00);
            CHECK(hs_f32_to_f16(mid) == want, "midpoint after 0x%04x", h);
        }
    }
}

/* ---- building files -------------------------------------------------------------------- */

/* An in-memory file: 8-byte length, header text, then `datalen` bytes (value i & 0xff). */
static uint8_t *image(const char *hdr, size_t datalen, size_t *len) {
    size_t n = strlen(hdr);
    *len = 8 + n + datalen;
    uint8_t *b = malloc(*len);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(b + 8, hdr, n);
    for (size_t i = 0; i < datalen; i++) b[8 + n + i] = (uint8_t)i;
    return b;
}

static int parse_img(const char *hdr, size_t datalen, char *err, hs_st_archive *ar) {
    size_t len;
    uint8_t *b = image(hdr, datalen, &len);
    memset(ar, 0, sizeof *ar);
    int rc = hs_st_parse(ar, b, len, 0, "MODEL/model.safetensors", err, HS_ERR_LEN);
    free(b);
    return rc;
}

#define EXPECT_ST_ERR(hdr, datalen, ...)                                                         \
    do {                                                                                        \
        hs_st_archive ar__;                                                                     \
        char err__[HS_ERR_LEN] = "";                                                            \
        int rc__ = parse_img(hdr, datalen, err__, &ar__);                                       \
        int n__ = ar__.n_tensors;                                                               \
        hs_st_close(&ar__);                                                                     \
        CHECK(rc__ == -1, "accepted a bad file");                                               \
        CHECK(n__ == 0, "a rejected file left %d tensors", n__);                                \
        CHECK(strstr(err__, "MODEL/model.safetensors: ") == err__, "no file name: %.300s", err__); \
        const char *frag__[] = { __VA_ARGS__, NULL };                                           \
        for (int k__ = 0; frag__[k__]; k__++)                                                   \
            CHECK(strstr(err__, frag__[k__]), "'%.300s' lacks '%s'", err__, frag__[k__]);       \
    } while (0)

TEST(st_parse_valid_and_metadata_ignored) {
    hs_st_archive ar;
    char err[HS_ERR_LEN];
    CHECK(parse_img("{\"__metadata__\":{\"format\":\"pt\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                    "\"b\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[24,26]},"
                    "\"e\":{\"dtype\":\"F16\",\"shape\":[0,4],\"data_offsets\":[26,26]}}", 26, err, &ar) == 0, "%.400s", err);
    CHECK(ar.n_tensors == 3, "%d tensors", ar.n_tensors);
    hs_st_tensor *a = hs_st_find(&ar, "a"), *b = hs_st_find(&ar, "b");
    CHECK(a && a->ndim == 2 && a->shape[0] == 2 && a->shape[1] == 3 && a->nbytes == 24 && a->dtype == HS_DT_F32, "a");
    CHECK(b && b->ndim == 0 && b->nbytes == 2, "b");
    CHECK(!hs_st_find(&ar, "__metadata__"), "metadata is not a tensor");
    hs_st_close(&ar);
}

TEST(st_rejects_short_file) {
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    char err[HS_ERR_LEN];
    uint8_t b[5] = { 0 };
    CHECK(hs_st_parse(&ar, b, 5, 0, "MODEL/model.safetensors", err, sizeof err) == -1, "accepted");
    CHECK(strstr(err, "MODEL/model.safetensors") && strstr(err, "too short"), "%.400s", err);
}

TEST(st_rejects_header_larger_than_file) {
    size_t len;
    uint8_t *b = image("{}", 0, &len);
    b[0] = 200;                              /* claims a 200-byte header in a 10-byte file */
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    char err[HS_ERR_LEN];
    int rc = hs_st_parse(&ar, b, len, 0, "MODEL/model.safetensors", err, sizeof err);
    free(b);
    CHECK(rc == -1, "accepted");
    CHECK(strstr(err, "MODEL/model.safetensors: header length 200 is larger than the file"), "%.400s", err);
}

TEST(st_rejects_header_over_1e8) {
    size_t len;
    uint8_t *b = image("{}", 0, &len);
    uint64_t n = 100000001ULL;
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(n >> (8 * i));
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    char err[HS_ERR_LEN];
    int rc = hs_st_parse(&ar, b, len, 0, "MODEL/model.safetensors", err, sizeof err);
    free(b);
    CHECK(rc == -1, "accepted");
    CHECK(strstr(err, "MODEL/model.safetensors: header length 100000001 exceeds the 10^8-byte limit"), "%.400s", err);
}

TEST(st_rejects_non_json_header) {
    EXPECT_ST_ERR("{\"a\": {\"dtype\": ", 0, "header is not valid JSON");
    EXPECT_ST_ERR("[1,2,3]", 0, "not a JSON object");
    EXPECT_ST_ERR("{} xx", 0, "not valid JSON");
}

TEST(st_rejects_offsets_outside_buffer) {
    EXPECT_ST_ERR("{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 12,
                  "tensor 'w'", "outside the data buffer");
    EXPECT_ST_ERR("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 12, "tensor 'w'", "outside");
    EXPECT_ST_ERR("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 12, "tensor 'w'", "data_offsets");
}

TEST(st_rejects_overlapping_tensors) {
    EXPECT_ST_ERR("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
                  "tensor 'b'", "overlaps tensor 'a'");
}

TEST(st_rejects_size_mismatch) {
    EXPECT_ST_ERR("{\"w\":{\"dtype\":\"BF16\",\"shape\":[3,2],\"data_offsets\":[0,10]}}", 16,
                  "tensor 'w'", "10 bytes of data but shape x BF16 needs 12");
}

TEST(st_rejects_duplicate_names) {
    EXPECT_ST_ERR("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                  "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
                  "tensor 'w'", "duplicate name");
}

TEST(st_rejects_unknown_dtype) {
    EXPECT_ST_ERR("{\"ids\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8,
                  "tensor 'ids'", "unsupported dtype 'I64'");
}

TEST(st_rejects_bad_shape) {
    EXPECT_ST_ERR("{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 8, "tensor 'w'", "shape[0]");
    EXPECT_ST_ERR("{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 8,
                  "tensor 'w'", "9 dimensions");
}

/* ---- files ---------------------------------------------------------------------------- */

TEST(st_write_read_round_trip) {
    const char *dir = hs_test_tmpdir();
    float a[6] = { 1.0f, -2.5f, 3.25f, 1e-3f, 65504.0f, -0.0f }, s = 7.0f;
    hs_st_out_tensor t[3] = {
        { .name = "a", .ndim = 2, .shape = { 2, 3 }, .data = a },
        { .name = "scalar", .ndim = 0, .data = &s },
        { .name = "empty", .ndim = 2, .shape = { 0, 5 }, .data = a },
    };
    hs_dtype dts[3] = { HS_DT_F32, HS_DT_BF16, HS_DT_F16 };
    for (int d = 0; d < 3; d++) {
        char path[512], err[HS_ERR_LEN];
        snprintf(path, sizeof path, "%s/rt%d.safetensors", dir, d);
        CHECK(hs_st_write(path, t, 3, dts[d], err, sizeof err) == 0, "%.400s", err);
        char tmp[600];
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        CHECK(access(tmp, F_OK) != 0, "temporary file left behind");
        hs_st_archive ar;
        memset(&ar, 0, sizeof ar);
        CHECK(hs_st_open_file(&ar, path, err, sizeof err) == 0, "%.400s", err);
        hs_st_tensor *ta = hs_st_find(&ar, "a"), *ts = hs_st_find(&ar, "scalar"), *te = hs_st_find(&ar, "empty");
        int ok = ta && ts && te && ta->dtype == dts[d] && ta->ndim == 2 && ta->shape[1] == 3 && ts->ndim == 0 &&
                 te->nbytes == 0 && ((uintptr_t)ta->data % 8) == 0;
        float back[6], sb;
        if (ok) { hs_st_to_f32(back, ta); hs_st_to_f32(&sb, ts); }
        hs_st_close(&ar);
        CHECK(ok, "dtype %s: tensors wrong after reading back", hs_dtype_name(dts[d]));
        for (int i = 0; i < 6; i++) {
            float want = dts[d] == HS_DT_F32 ? a[i] : dts[d] == HS_DT_BF16 ? hs_bf16_to_f32(hs_f32_to_bf16(a[i]))
                                                                           : hs_f16_to_f32(hs_f32_to_f16(a[i]));
            CHECK(memcmp(&back[i], &want, 4) == 0, "%s a[%d] = %g, want %g", hs_dtype_name(dts[d]), i, (double)back[i], (double)want);
        }
        CHECK(sb == 7.0f, "scalar");
    }
}

TEST(st_open_dir_single_and_missing) {
    const char *dir = hs_test_tmpdir();
    char err[HS_ERR_LEN], path[512];
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    CHECK(hs_st_open_dir(&ar, dir, err, sizeof err) == -1, "empty dir accepted");
    CHECK(strstr(err, dir) && strstr(err, "no model.safetensors"), "%.400s", err);
    float x = 2;
    hs_st_out_tensor t = { .name = "x", .ndim = 1, .shape = { 1 }, .data = &x };
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(hs_st_write(path, &t, 1, HS_DT_F32, err, sizeof err) == 0, "%.400s", err);
    CHECK(hs_st_open_dir(&ar, dir, err, sizeof err) == 0, "%.400s", err);
    CHECK(ar.n_files == 1 && hs_st_find(&ar, "x"), "tensor x");
    hs_st_close(&ar);
}

static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

TEST(st_sharded_index) {
    const char *dir = hs_test_tmpdir();
    char err[HS_ERR_LEN], path[512];
    float a[2] = { 1, 2 }, b[3] = { 3, 4, 5 };
    hs_st_out_tensor ta = { .name = "a", .ndim = 1, .shape = { 2 }, .data = a };
    hs_st_out_tensor tb = { .name = "b", .ndim = 1, .shape = { 3 }, .data = b };
    snprintf(path, sizeof path, "%s/model-00001-of-00002.safetensors", dir);
    CHECK(hs_st_write(path, &ta, 1, HS_DT_BF16, err, sizeof err) == 0, "%.400s", err);
    snprintf(path, sizeof path, "%s/model-00002-of-00002.safetensors", dir);
    CHECK(hs_st_write(path, &tb, 1, HS_DT_F32, err, sizeof err) == 0, "%.400s", err);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    CHECK(write_file(path, "{\"metadata\":{\"total_size\":16},\"weight_map\":{\"a\":\"model-00001-of-00002.safetensors\","
                           "\"b\":\"model-00002-of-00002.safetensors\"}}") == 0, "write index");
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    CHECK(hs_st_open_dir(&ar, dir, err, sizeof err) == 0, "%.400s", err);
    hs_st_tensor *x = hs_st_find(&ar, "a"), *y = hs_st_find(&ar, "b");
    float va[2] = { 0 }, vb[3] = { 0 };
    int files = ar.n_files;
    if (x) hs_st_to_f32(va, x);
    if (y) hs_st_to_f32(vb, y);
    int fa = x ? x->file_index : -1, fb = y ? y->file_index : -1;
    hs_st_close(&ar);
    CHECK(files == 2 && fa == 0 && fb == 1, "two shards");
    CHECK(va[0] == 1 && va[1] == 2 && vb[2] == 5, "values");
}

TEST(st_sharded_rejects_duplicate_across_shards) {
    const char *dir = hs_test_tmpdir();
    char err[HS_ERR_LEN], path[512];
    float a[2] = { 1, 2 };
    hs_st_out_tensor ta = { .name = "a", .ndim = 1, .shape = { 2 }, .data = a };
    snprintf(path, sizeof path, "%s/s1.safetensors", dir);
    CHECK(hs_st_write(path, &ta, 1, HS_DT_F32, err, sizeof err) == 0, "%.400s", err);
    snprintf(path, sizeof path, "%s/s2.safetensors", dir);
    CHECK(hs_st_write(path, &ta, 1, HS_DT_F32, err, sizeof err) == 0, "%.400s", err);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    CHECK(write_file(path, "{\"weight_map\":{\"a\":\"s1.safetensors\",\"z\":\"s2.safetensors\"}}") == 0, "index");
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    CHECK(hs_st_open_dir(&ar, dir, err, sizeof err) == -1, "duplicate across shards accepted");
    CHECK(strstr(err, "s2.safetensors: tensor 'a': duplicate name (also in ") && strstr(err, "s1.safetensors"), "%.400s", err);
}

TEST(st_sharded_rejects_bad_index) {
    const char *dir = hs_test_tmpdir();
    char err[HS_ERR_LEN], path[512];
    float a[1] = { 1 };
    hs_st_out_tensor ta = { .name = "a", .ndim = 1, .shape = { 1 }, .data = a };
    snprintf(path, sizeof path, "%s/s1.safetensors", dir);
    CHECK(hs_st_write(path, &ta, 1, HS_DT_F32, err, sizeof err) == 0, "%.400s", err);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    CHECK(write_file(path, "{\"weight_map\":{\"a\":\"s1.safetensors\",\"b\":\"s1.safetensors\"}}") == 0, "index");
    CHECK(hs_st_open_dir(&ar, dir, err, sizeof err) == -1, "index naming a missing tensor accepted");
    CHECK(strstr(err, "model.safetensors.index.json: tensor 'b'") && strstr(err, "lacks it"), "%.400s", err);
    CHECK(write_file(path, "{\"weight_map\":{\"a\":\"../s1.safetensors\"}}") == 0, "index");
    CHECK(hs_st_open_dir(&ar, dir, err, sizeof err) == -1 && strstr(err, "not a plain file name"), "%.400s", err);
    CHECK(write_file(path, "{\"weight_map\":{\"a\":\"nope.safetensors\"}}") == 0, "index");
    CHECK(hs_st_open_dir(&ar, dir, err, sizeof err) == -1 && strstr(err, "nope.safetensors: cannot open"), "%.400s", err);
    CHECK(write_file(path, "{\"weights\":{}}") == 0, "index");
    CHECK(hs_st_open_dir(&ar, dir, err, sizeof err) == -1 && strstr(err, "missing 'weight_map'"), "%.400s", err);
}
