/* .npy I/O (engine/npy.c) and the byte tokenizer (engine/tokenizer.c). */
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "tokenizer.h"

static int write_bytes(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(b, 1, n, f);
    fclose(f);
    return w == n ? 0 : -1;
}

/* A hand-built v1.0 header (as numpy writes it) + data. */
static size_t make_npy(uint8_t *out, const char *dict, const void *data, size_t nbytes) {
    size_t dl = strlen(dict), total = (10 + dl + 1 + 63) / 64 * 64;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (uint8_t)((total - 10) & 0xff);
    out[9] = (uint8_t)((total - 10) >> 8);
    memcpy(out + 10, dict, dl);
    memset(out + 10 + dl, ' ', total - 10 - dl - 1);
    out[total - 1] = '\n';
    memcpy(out + total, data, nbytes);
    return total + nbytes;
}

TEST(npy_roundtrip_f32_i32) {
    const char *dir = hs_test_tmpdir();
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/a.npy", dir);
    float x[6] = {1, -2.5f, 3, 4, 5e-8f, 6};
    int64_t shape[2] = {2, 3};
    CHECK(!hs_npy_write_f32(path, x, 2, shape, err, sizeof err), "%s", err);
    hs_npy_array a;
    CHECK(!hs_npy_read(&a, path, err, sizeof err), "%s", err);
    CHECK(a.dtype == HS_NPY_F32 && a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3, "shape");
    CHECK(!memcmp(a.data, x, sizeof x), "data");
    hs_npy_free(&a);
    /* header is 64-byte aligned, v1.0, and says C order */
    FILE *f = fopen(path, "rb");
    uint8_t h[512] = {0};
    size_t n = fread(h, 1, sizeof h - 1, f);
    fclose(f);
    size_t hdr = 10 + h[8] + 256 * (size_t)h[9];
    CHECK(h[6] == 1 && h[7] == 0 && hdr % 64 == 0 && n == hdr + sizeof x && h[hdr - 1] == '\n',
          "header layout (file %zu bytes, header %zu)", n, hdr);
    CHECK(strstr((char *)h + 10, "'shape': (2, 3)") && strstr((char *)h + 10, "'fortran_order': False"), "dict");

    int32_t ids[4] = {256, 72, 105, 0};
    int64_t s1 = 4;
    CHECK(!hs_npy_write_i32(path, ids, 1, &s1, err, sizeof err), "%s", err);
    int32_t *back;
    int T;
    CHECK(!hs_npy_read_tokens(&back, &T, path, 258, err, sizeof err), "%s", err);
    CHECK(T == 4 && !memcmp(back, ids, sizeof ids), "tokens");
    free(back);
    CHECK(hs_npy_read_tokens(&back, &T, path, 200, err, sizeof err) && strstr(err, "position 0"),
          "out-of-vocab id accepted: %s", err);
}

TEST(npy_reads_int64_and_rejects_bad_files) {
    const char *dir = hs_test_tmpdir();
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/b.npy", dir);
    uint8_t buf[512];
    int64_t v[3] = {256, 1, 255};
    size_t n = make_npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 3), }", v, sizeof v);
    CHECK(!write_bytes(path, buf, n), "write");
    int32_t *ids;
    int T;
    CHECK(!hs_npy_read_tokens(&ids, &T, path, 258, err, sizeof err), "%s", err);
    CHECK(T == 3 && ids[0] == 256 && ids[2] == 255, "int64 ids");
    free(ids);

    struct { const char *dict; size_t cut; const char *msg; } bad[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 0, "dtype"},
        {"{'descr': '>i8', 'fortran_order': False, 'shape': (3,), }", 0, "dtype"},
        {"{'descr': '<i8', 'fortran_order': True, 'shape': (3,), }", 0, "Fortran"},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", 9, "truncated"},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", 0, "truncated"},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (3", 0, "shape"},
        {"['descr']", 0, "dict"},
        /* a key whose value would start past the header (fuzz_npy found the 1-byte over-read) */
        {"{'descr': '<i8', 'fortran_order': False, 'shape':", 0, "shape"},
        {"{'descr':", 0, "descr"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = make_npy(buf, bad[i].dict, v, sizeof v) - bad[i].cut;
        CHECK(!write_bytes(path, buf, n), "write");
        hs_npy_array a;
        err[0] = 0;
        CHECK(hs_npy_read(&a, path, err, sizeof err) == -1, "case %zu accepted", i);
        CHECK(strstr(err, bad[i].msg) && strstr(err, path), "case %zu: '%s' lacks '%s' or the file name", i, err, bad[i].msg);
    }
    static const char zip[] = "PK\x03\x04 not numpy";
    CHECK(!write_bytes(path, zip, sizeof zip - 1), "write");
    hs_npy_array a;
    CHECK(hs_npy_read(&a, path, err, sizeof err) == -1 && strstr(err, "magic"), "%s", err);
    float f[2] = {1, 2};
    n = make_npy(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f, sizeof f);
    CHECK(!write_bytes(path, buf, n), "write");
    CHECK(hs_npy_read_tokens(&ids, &T, path, 258, err, sizeof err) == -1 && strstr(err, "float32"), "%s", err);
    n = make_npy(buf, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", v, 16);
    CHECK(!write_bytes(path, buf, n), "write");
    CHECK(hs_npy_read_tokens(&ids, &T, path, 258, err, sizeof err) == -1 && strstr(err, "shape"), "%s", err);
    snprintf(path, sizeof path, "%s/missing.npy", dir);
    CHECK(hs_npy_read(&a, path, err, sizeof err) == -1 && strstr(err, "missing.npy"), "%s", err);
}

TEST(tokenizer_encode_decode) {
    hs_config c;
    memset(&c, 0, sizeof c);
    c.vocab_size = 258;
    c.bos_id = 256;
    c.eos_id = 257;
    snprintf(c.tokenizer_type, sizeof c.tokenizer_type, "bytes");
    hs_tokenizer tk;
    char err[256];
    CHECK(!hs_tokenizer_init(&tk, &c, err, sizeof err), "%s", err);
    const char *text = "h\xc3\xa9llo\n";
    int n;
    int32_t *ids = hs_tokenizer_encode_alloc(&tk, text, strlen(text), &n);
    CHECK(n == 8 && ids[0] == 256 && ids[1] == 'h' && ids[2] == 0xc3 && ids[3] == 0xa9, "encode");
    char *s = hs_tokenizer_decode_alloc(&tk, ids, n);
    CHECK(!strcmp(s, "<bos>h\xc3\xa9llo\n"), "decode '%s'", s);
    free(s);
    free(ids);
    int32_t odd[6] = {0x01, 0xc3, 'x', 257, 300, 0xff};
    s = hs_tokenizer_decode_alloc(&tk, odd, 6);
    CHECK(!strcmp(s, "\\x01\\xc3x<eos><300>\\xff"), "decode odd '%s'", s);
    char small[6];
    size_t need = hs_tokenizer_decode(small, sizeof small, &tk, odd, 6);
    CHECK(need == strlen(s) && strlen(small) == 5 && !strncmp(small, s, 5), "truncation");
    free(s);
    c.vocab_size = 100;
    CHECK(hs_tokenizer_init(&tk, &c, err, sizeof err) && strstr(err, "vocab"), "small vocab accepted");
    c.vocab_size = 258;
    snprintf(c.tokenizer_type, sizeof c.tokenizer_type, "bpe");
    CHECK(hs_tokenizer_init(&tk, &c, err, sizeof err) && strstr(err, "bpe"), "bpe accepted");
}
