/* .npy reading and writing (NumPy format versions 1.0 to write; 1.0-3.0 to read). */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char magic[6] = {(char)0x93, 'N', 'U', 'M', 'P', 'Y'};

static const char *descr_of(hs_npy_dtype d) {
    return d == HS_NPY_F32 ? "<f4" : d == HS_NPY_I32 ? "<i4" : "<i8";
}
static size_t size_of(hs_npy_dtype d) { return d == HS_NPY_I64 ? 8 : 4; }

static int write_array(const char *path, const void *data, hs_npy_dtype dt, int ndim,
                       const int64_t *shape, char *err, size_t errlen) {
    if (ndim < 0 || ndim > HS_NPY_MAX_NDIM) {
        snprintf(err, errlen, "%s: cannot write a %d-dimensional array", path, ndim);
        return -1;
    }
    char dict[256], shp[160] = "";
    size_t sl = 0, count = 1;
    for (int i = 0; i < ndim; i++) {
        sl += (size_t)snprintf(shp + sl, sizeof shp - sl, "%lld,%s", (long long)shape[i],
                               i + 1 < ndim ? " " : "");
        count *= (size_t)shape[i];
    }
    if (ndim > 1) shp[sl - 1] = 0; /* "(3, 4)" without the trailing comma; "(5,)" keeps it */
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                      descr_of(dt), shp);
    /* header = magic(6) + version(2) + len(2) + dict + padding + '\n', a multiple of 64 */
    size_t total = 10 + (size_t)dl + 1;
    size_t padded = (total + 63) / 64 * 64;
    size_t hlen = padded - 10;
    char header[512];
    memcpy(header, magic, 6);
    header[6] = 1; header[7] = 0;
    header[8] = (char)(hlen & 0xff); header[9] = (char)(hlen >> 8);
    memcpy(header + 10, dict, (size_t)dl);
    memset(header + 10 + dl, ' ', padded - 10 - (size_t)dl - 1);
    header[padded - 1] = '\n';

    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) { snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno)); return -1; }
    int ok = fwrite(header, 1, padded, f) == padded;
    if (ok && count) ok = fwrite(data, size_of(dt), count, f) == count;
    if (fclose(f)) ok = 0;
    if (!ok) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    if (rename(tmp, path)) {
        snprintf(err, errlen, "%s: cannot rename from %s: %s", path, tmp, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

int hs_npy_write_f32(const char *path, const float *data, int ndim, const int64_t *shape,
                     char *err, size_t errlen) {
    return write_array(path, data, HS_NPY_F32, ndim, shape, err, errlen);
}

int hs_npy_write_i32(const char *path, const int32_t *data, int ndim, const int64_t *shape,
                     char *err, size_t errlen) {
    return write_array(path, data, HS_NPY_I32, ndim, shape, err, errlen);
}

/* ---- reading: a tiny parser for the header's Python dict literal ---- */

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n')) p++;
    return p;
}

/* Finds 'key': in the dict and returns a pointer to its value, or NULL (also when the header
 * ends right after the colon: the callers read the value's first character). */
static const char *find_key(const char *p, const char *end, const char *key) {
    size_t kl = strlen(key);
    for (const char *s = p; s + kl + 2 < end; s++) {
        if ((*s == '\'' || *s == '"') && s[kl + 1] == *s && !memcmp(s + 1, key, kl)) {
            const char *q = skip_ws(s + kl + 2, end);
            if (q < end && *q == ':') {
                const char *v = skip_ws(q + 1, end);
                return v < end ? v : NULL;
            }
        }
    }
    return NULL;
}

static int parse_header(hs_npy_array *a, const char *h, size_t hl, const char *name,
                        char *err, size_t errlen) {
    const char *end = h + hl;
    const char *p = skip_ws(h, end);
    if (p >= end || *p != '{') { snprintf(err, errlen, "%s: .npy header is not a dict", name); return -1; }
    const char *d = find_key(p, end, "descr");
    if (!d || (*d != '\'' && *d != '"')) { snprintf(err, errlen, "%s: .npy header has no descr", name); return -1; }
    char q = *d++;
    const char *de = memchr(d, q, (size_t)(end - d));
    if (!de) { snprintf(err, errlen, "%s: .npy header descr is unterminated", name); return -1; }
    size_t dl = (size_t)(de - d);
    if (dl == 3 && !memcmp(d, "<f4", 3)) a->dtype = HS_NPY_F32;
    else if (dl == 3 && !memcmp(d, "<i4", 3)) a->dtype = HS_NPY_I32;
    else if (dl == 3 && !memcmp(d, "<i8", 3)) a->dtype = HS_NPY_I64;
    else {
        snprintf(err, errlen, "%s: unsupported dtype '%.*s' (expected <f4, <i4 or <i8)", name,
                 (int)(dl < 32 ? dl : 32), d);
        return -1;
    }
    const char *fo = find_key(p, end, "fortran_order");
    if (!fo) { snprintf(err, errlen, "%s: .npy header has no fortran_order", name); return -1; }
    if (end - fo >= 4 && !memcmp(fo, "True", 4)) {
        snprintf(err, errlen, "%s: Fortran-order arrays are not supported (save in C order)", name);
        return -1;
    }
    if (!(end - fo >= 5 && !memcmp(fo, "False", 5))) {
        snprintf(err, errlen, "%s: bad fortran_order in .npy header", name);
        return -1;
    }
    const char *s = find_key(p, end, "shape");
    if (!s || *s != '(') { snprintf(err, errlen, "%s: .npy header has no shape tuple", name); return -1; }
    s++;
    a->ndim = 0;
    a->count = 1;
    for (;;) {
        s = skip_ws(s, end);
        if (s >= end) { snprintf(err, errlen, "%s: .npy shape is unterminated", name); return -1; }
        if (*s == ')') break;
        if (*s < '0' || *s > '9') { snprintf(err, errlen, "%s: bad .npy shape", name); return -1; }
        int64_t v = 0;
        while (s < end && *s >= '0' && *s <= '9') {
            if (v > (INT64_C(1) << 40)) { snprintf(err, errlen, "%s: .npy shape too large", name); return -1; }
            v = v * 10 + (*s++ - '0');
        }
        if (a->ndim >= HS_NPY_MAX_NDIM) { snprintf(err, errlen, "%s: too many dimensions", name); return -1; }
        a->shape[a->ndim++] = v;
        if (v && a->count > (SIZE_MAX / 8) / (size_t)v) { snprintf(err, errlen, "%s: .npy shape too large", name); return -1; }
        a->count *= (size_t)v;
        s = skip_ws(s, end);
        if (s < end && *s == ',') s++;
        else if (s < end && *s != ')') { snprintf(err, errlen, "%s: bad .npy shape", name); return -1; }
    }
    return 0;
}

int hs_npy_parse(hs_npy_array *out, const uint8_t *buf, size_t len, const char *name,
                 char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(buf, magic, 6)) {
        snprintf(err, errlen, "%s: not a .npy file (bad magic)", name);
        return -1;
    }
    int major = buf[6];
    size_t hl, off;
    if (major == 1) { hl = (size_t)buf[8] | (size_t)buf[9] << 8; off = 10; }
    else if (major == 2 || major == 3) {
        if (len < 12) { snprintf(err, errlen, "%s: truncated .npy header", name); return -1; }
        hl = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        off = 12;
    } else {
        snprintf(err, errlen, "%s: unsupported .npy version %d.%d", name, major, buf[7]);
        return -1;
    }
    if (hl > len - off) { snprintf(err, errlen, "%s: truncated .npy header", name); return -1; }
    if (parse_header(out, (const char *)buf + off, hl, name, err, errlen)) return -1;
    size_t need = out->count * size_of(out->dtype), have = len - off - hl;
    if (have < need) {
        snprintf(err, errlen, "%s: truncated data (%zu bytes, shape needs %zu)", name, have, need);
        return -1;
    }
    if (have > need) {
        snprintf(err, errlen, "%s: %zu bytes of trailing data after the array", name, have - need);
        return -1;
    }
    out->data = malloc(need ? need : 1);
    if (!out->data) { snprintf(err, errlen, "%s: out of memory (%zu bytes)", name, need); return -1; }
    memcpy(out->data, buf + off + hl, need);
    return 0;
}

int hs_npy_read(hs_npy_array *out, const char *path, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno)); return -1; }
    uint8_t *buf = NULL;
    long sz = -1;
    if (!fseek(f, 0, SEEK_END)) sz = ftell(f);
    if (sz < 0 || fseek(f, 0, SEEK_SET)) {
        fclose(f);
        snprintf(err, errlen, "%s: cannot read (not a regular file?)", path);
        return -1;
    }
    buf = malloc((size_t)sz + 1);
    if (!buf) { fclose(f); snprintf(err, errlen, "%s: out of memory", path); return -1; }
    size_t got = fread(buf, 1, (size_t)sz, f);
    fclose(f);
    if (got != (size_t)sz) { free(buf); snprintf(err, errlen, "%s: read failed", path); return -1; }
    int rc = hs_npy_parse(out, buf, got, path, err, errlen);
    free(buf);
    return rc;
}

void hs_npy_free(hs_npy_array *a) {
    free(a->data);
    a->data = NULL;
}

int hs_npy_read_tokens(int32_t **ids, int *T, const char *path, int vocab, char *err, size_t errlen) {
    hs_npy_array a;
    if (hs_npy_read(&a, path, err, errlen)) return -1;
    int rc = -1;
    if (a.dtype == HS_NPY_F32) {
        snprintf(err, errlen, "%s: token ids must be int32 or int64, not float32", path);
    } else if (!(a.ndim == 1 || (a.ndim == 2 && a.shape[0] == 1))) {
        snprintf(err, errlen, "%s: token ids must have shape [T] or [1, T] (got %d dimensions)", path, a.ndim);
    } else if (a.count == 0) {
        snprintf(err, errlen, "%s: no tokens", path);
    } else if (a.count > 0x7fffffff) {
        snprintf(err, errlen, "%s: too many tokens", path);
    } else if (!(*ids = malloc(a.count * sizeof **ids))) {
        snprintf(err, errlen, "%s: out of memory", path);
    } else {
        rc = 0;
        for (size_t i = 0; i < a.count; i++) {
            int64_t v = a.dtype == HS_NPY_I32 ? ((int32_t *)a.data)[i] : ((int64_t *)a.data)[i];
            if (v < 0 || v >= vocab) {
                snprintf(err, errlen, "%s: token %lld at position %zu is outside the vocabulary [0, %d)",
                         path, (long long)v, i, vocab);
                free(*ids);
                *ids = NULL;
                rc = -1;
                break;
            }
            (*ids)[i] = (int32_t)v;
        }
        if (!rc) *T = (int)a.count;
    }
    hs_npy_free(&a);
    return rc;
}
