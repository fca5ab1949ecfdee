/* safetensors reading (mmap; single file or HF sharded index), validation of everything
 * model-spec section 1 lists, fp32 conversion, and writing through tmp + rename. */
#include "safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define HS_ST_MAX_TENSORS 1000000

size_t hs_dtype_size(hs_dtype d) { return d == HS_DT_F32 ? 4 : 2; }

const char *hs_dtype_name(hs_dtype d) {
    switch (d) {
    case HS_DT_F32: return "F32";
    case HS_DT_BF16: return "BF16";
    case HS_DT_F16: return "F16";
    }
    return "?";
}

static int dtype_parse(const char *s) {
    if (!strcmp(s, "F32")) return HS_DT_F32;
    if (!strcmp(s, "BF16")) return HS_DT_BF16;
    if (!strcmp(s, "F16")) return HS_DT_F16;
    return -1;
}

static int errf(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- conversions ---------------------------------------------------------------------- */

float hs_bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t hs_f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    uint32_t round = 0x7fffu + ((u >> 16) & 1u);   /* nearest, ties to even */
    return (uint16_t)((u + round) >> 16);
}

float hs_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, u;
    if (exp == 0) {
        if (mant == 0) {
            u = sign;
        } else {                     /* subnormal: normalise into an f32 normal */
            int e = -1;
            do { mant <<= 1; e++; } while (!(mant & 0x400u));
            u = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        u = sign | 0x7f800000u | (mant << 13);
    } else {
        u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t hs_f32_to_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u;                 /* NaN */
    if (a >= 0x477ff000u) return sign | 0x7c00u;                /* rounds to >= 65520: inf */
    if (a < 0x38800000u) {                                      /* below 2^-14: subnormal */
        if (a < 0x33000000u) return sign;                       /* below 2^-25: zero */
        uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e;                               /* 14..24 */
        /* value = m * 2^(e-150); in units of 2^-24: m * 2^(e-126) = m >> (126-e) */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return sign | (uint16_t)r;
    }
    uint32_t r = a - 0x38000000u;          /* rebias exponent: 127 -> 15 */
    uint32_t rem = r & 0x1fffu;
    r >>= 13;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return sign | (uint16_t)r;
}

void hs_st_to_f32(float *out, const hs_st_tensor *t) {
    size_t n = t->nbytes / hs_dtype_size(t->dtype);
    const uint8_t *src = t->data;
    if (t->dtype == HS_DT_F32) {
        memcpy(out, src, n * 4);
        return;
    }
    /* The data may be unaligned (the header length is arbitrary): read through memcpy. */
#pragma omp parallel for schedule(static) if (n > (1u << 16))
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, src + 2 * i, 2);
        out[i] = t->dtype == HS_DT_BF16 ? hs_bf16_to_f32(h) : hs_f16_to_f32(h);
    }
}

/* ---- parsing -------------------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b) {
    return strcmp((*(hs_st_tensor *const *)a)->name, (*(hs_st_tensor *const *)b)->name);
}

typedef struct { uint64_t begin, end; const char *name; } span;

static int span_cmp(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Non-negative integer that a double holds exactly. */
static int as_u64(const cJSON *v, uint64_t *out) {
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || d != floor(d)) return 0;
    *out = (uint64_t)d;
    return 1;
}

static int parse_entry(hs_st_tensor *t, const cJSON *e, uint64_t buflen, const char *fname,
                       uint64_t *begin, uint64_t *end, char *err, size_t errlen) {
    const char *nm = e->string;
    if (!cJSON_IsObject(e)) return errf(err, errlen, "%s: tensor '%s': entry is not a JSON object", fname, nm);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(dt)) return errf(err, errlen, "%s: tensor '%s': missing or bad 'dtype'", fname, nm);
    int d = dtype_parse(dt->valuestring);
    if (d < 0)
        return errf(err, errlen, "%s: tensor '%s': unsupported dtype '%.32s' (F32, BF16 or F16)",
                    fname, nm, dt->valuestring);
    if (!cJSON_IsArray(sh)) return errf(err, errlen, "%s: tensor '%s': missing or bad 'shape'", fname, nm);
    int nd = cJSON_GetArraySize(sh);
    if (nd > HS_ST_MAX_NDIM)
        return errf(err, errlen, "%s: tensor '%s': %d dimensions (at most %d)", fname, nm, nd, HS_ST_MAX_NDIM);
    uint64_t numel = 1;
    int k = 0;
    int overflow = 0;
    for (const cJSON *it = sh->child; it; it = it->next, k++) {
        uint64_t v;
        if (!as_u64(it, &v))
            return errf(err, errlen, "%s: tensor '%s': shape[%d] is not a non-negative integer", fname, nm, k);
        t->shape[k] = (int64_t)v;
        if (v && numel > UINT64_MAX / 4 / v) overflow = 1;
        else numel *= v;
    }
    if (!cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2 || !as_u64(of->child, begin) ||
        !as_u64(of->child->next, end))
        return errf(err, errlen, "%s: tensor '%s': 'data_offsets' must be two non-negative integers", fname, nm);
    if (*begin > *end || *end > buflen)
        return errf(err, errlen, "%s: tensor '%s': data_offsets [%llu, %llu] outside the data buffer (%llu bytes)",
                    fname, nm, (unsigned long long)*begin, (unsigned long long)*end,
                    (unsigned long long)buflen);
    size_t es = hs_dtype_size((hs_dtype)d);
    if (overflow || numel * es != *end - *begin)
        return errf(err, errlen, "%s: tensor '%s': %llu bytes of data but shape x %s needs %s%llu",
                    fname, nm, (unsigned long long)(*end - *begin), dt->valuestring,
                    overflow ? "more than " : "", overflow ? (unsigned long long)UINT64_MAX / 4
                                                          : (unsigned long long)(numel * es));
    t->dtype = (hs_dtype)d;
    t->ndim = nd;
    t->nbytes = (size_t)(*end - *begin);
    return 0;
}

static const char *file_name(const hs_st_archive *ar, const hs_st_tensor *t, int cur_index,
                             const char *cur_name) {
    if (t->file_index == cur_index) return cur_name;
    return t->file_index >= 0 && t->file_index < ar->n_files ? ar->file_paths[t->file_index] : "?";
}

/* Duplicate names anywhere in the archive (also across shards). The file being added is
 * cur_index, named cur_name (it may not be in file_paths when parsed from memory). */
static int check_duplicates(hs_st_archive *ar, int cur_index, const char *cur_name, char *err,
                            size_t errlen) {
    int n = ar->n_tensors;
    if (n < 2) return 0;
    hs_st_tensor **p = malloc((size_t)n * sizeof *p);
    if (!p) return errf(err, errlen, "out of memory");
    for (int i = 0; i < n; i++) p[i] = &ar->tensors[i];
    qsort(p, (size_t)n, sizeof *p, name_cmp);
    int rc = 0;
    for (int i = 1; i < n; i++) {
        if (strcmp(p[i - 1]->name, p[i]->name)) continue;
        hs_st_tensor *a = p[i - 1], *b = p[i];
        if (a->file_index == cur_index && b->file_index != cur_index) {
            hs_st_tensor *tmp = a; a = b; b = tmp;      /* b: the one in the new file */
        }
        if (a->file_index == b->file_index)
            rc = errf(err, errlen, "%s: tensor '%s': duplicate name", cur_name, b->name);
        else
            rc = errf(err, errlen, "%s: tensor '%s': duplicate name (also in %s)", cur_name, b->name,
                      file_name(ar, a, cur_index, cur_name));
        break;
    }
    free(p);
    return rc;
}

int hs_st_parse(hs_st_archive *ar, const uint8_t *buf, size_t len, int file_index,
                const char *fname, char *err, size_t errlen) {
    if (!fname) fname = "model.safetensors";
    if (len < 8)
        return errf(err, errlen, "%s: %zu bytes, too short for a safetensors header", fname, len);
    uint64_t N = 0;
    for (int i = 7; i >= 0; i--) N = (N << 8) | buf[i];
    if (N > HS_ST_MAX_HEADER)
        return errf(err, errlen, "%s: header length %llu exceeds the 10^8-byte limit", fname,
                    (unsigned long long)N);
    if (N > len - 8)
        return errf(err, errlen, "%s: header length %llu is larger than the file (%zu bytes)", fname,
                    (unsigned long long)N, len);
    const char *hdr = (const char *)buf + 8;
    for (uint64_t i = 0; i < N; i++) {
        unsigned char ch = (unsigned char)hdr[i];
        if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
            return errf(err, errlen, "%s: header is not valid JSON (control character 0x%02x at byte %llu)",
                        fname, ch, (unsigned long long)(8 + i));
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(hdr, (size_t)N, &end, 0);
    if (!root) return errf(err, errlen, "%s: header is not valid JSON", fname);
    for (const char *p = end; p < hdr + N; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
            cJSON_Delete(root);
            return errf(err, errlen, "%s: header is not valid JSON (trailing data)", fname);
        }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return errf(err, errlen, "%s: header is not a JSON object", fname);
    }
    const uint8_t *data = buf + 8 + N;
    uint64_t buflen = len - 8 - N;
    int count = 0;
    for (const cJSON *e = root->child; e; e = e->next) count++;
    /* Real checkpoints hold thousands of tensors; a header of millions is a memory bomb. */
    if (count > HS_ST_MAX_TENSORS) {
        cJSON_Delete(root);
        return errf(err, errlen, "%s: header lists %d tensors (at most %d)", fname, count, HS_ST_MAX_TENSORS);
    }

    int first = ar->n_tensors, rc = -1;
    span *spans = malloc((size_t)(count ? count : 1) * sizeof *spans);
    hs_st_tensor *grown = realloc(ar->tensors, (size_t)(first + count + 1) * sizeof *grown);
    if (!spans || !grown) {
        free(spans);
        if (grown) ar->tensors = grown;
        cJSON_Delete(root);
        return errf(err, errlen, "%s: out of memory for %d tensors", fname, count);
    }
    ar->tensors = grown;
    int ns = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (!e->string) continue;
        if (!strcmp(e->string, "__metadata__")) continue;
        if (strlen(e->string) >= HS_ST_NAME_LEN) {
            errf(err, errlen, "%s: tensor '%.64s...': name longer than %d bytes", fname, e->string,
                 HS_ST_NAME_LEN - 1);
            goto out;
        }
        hs_st_tensor *t = &ar->tensors[first + ns];
        memset(t, 0, sizeof *t);
        strcpy(t->name, e->string);
        uint64_t b = 0, en = 0;
        if (parse_entry(t, e, buflen, fname, &b, &en, err, errlen) < 0) goto out;
        t->data = data + b;
        t->file_index = file_index;
        spans[ns].begin = b;
        spans[ns].end = en;
        spans[ns].name = t->name;
        ns++;
    }
    ar->n_tensors = first + ns;
    if (check_duplicates(ar, file_index, fname, err, errlen) < 0) goto out;
    qsort(spans, (size_t)ns, sizeof *spans, span_cmp);
    /* Sorted by start, the spans are disjoint iff each starts at or after the end of the
     * previous non-empty one (empty tensors occupy no bytes and overlap nothing). */
    for (int i = 0, last = -1; i < ns; i++) {
        if (spans[i].begin == spans[i].end) continue;
        if (last >= 0 && spans[i].begin < spans[last].end) {
            errf(err, errlen, "%s: tensor '%s': data [%llu, %llu) overlaps tensor '%s' [%llu, %llu)",
                 fname, spans[i].name, (unsigned long long)spans[i].begin,
                 (unsigned long long)spans[i].end, spans[last].name,
                 (unsigned long long)spans[last].begin, (unsigned long long)spans[last].end);
            goto out;
        }
        last = i;
    }
    rc = 0;
out:
    if (rc < 0) ar->n_tensors = first;
    free(spans);
    cJSON_Delete(root);
    return rc;
}

/* ---- files ---------------------------------------------------------------------------- */

static int add_file(hs_st_archive *ar, const char *path, void *map, size_t len) {
    int n = ar->n_files + 1;
    char **fp = realloc(ar->file_paths, (size_t)n * sizeof *fp);
    if (fp) ar->file_paths = fp;
    void **mp = realloc(ar->maps, (size_t)n * sizeof *mp);
    if (mp) ar->maps = mp;
    size_t *ml = realloc(ar->map_lens, (size_t)n * sizeof *ml);
    if (ml) ar->map_lens = ml;
    char *dup = strdup(path);
    if (!fp || !mp || !ml || !dup) { free(dup); return -1; }
    ar->file_paths[ar->n_files] = dup;
    ar->maps[ar->n_files] = map;
    ar->map_lens[ar->n_files] = len;
    ar->n_files = n;
    return 0;
}

static int open_one(hs_st_archive *ar, const char *path, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return errf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return errf(err, errlen, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    if (len < 8) {
        close(fd);
        return errf(err, errlen, "%s: %zu bytes, too short for a safetensors header", path, len);
    }
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return errf(err, errlen, "%s: cannot mmap: %s", path, strerror(errno));
    madvise(map, len, MADV_SEQUENTIAL);
    if (add_file(ar, path, map, len) < 0) {
        munmap(map, len);
        return errf(err, errlen, "%s: out of memory", path);
    }
    return hs_st_parse(ar, map, len, ar->n_files - 1, path, err, errlen);
}

int hs_st_open_file(hs_st_archive *ar, const char *path, char *err, size_t errlen) {
    if (open_one(ar, path, err, errlen) < 0) {
        hs_st_close(ar);
        return -1;
    }
    return 0;
}

static char *read_small_file(const char *path, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) { errf(err, errlen, "%s: cannot open: %s", path, strerror(errno)); return NULL; }
    if (fseek(f, 0, SEEK_END) < 0) { fclose(f); errf(err, errlen, "%s: cannot seek", path); return NULL; }
    long n = ftell(f);
    if (n < 0 || (unsigned long)n > HS_ST_MAX_HEADER) {
        fclose(f);
        errf(err, errlen, "%s: larger than 10^8 bytes", path);
        return NULL;
    }
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        errf(err, errlen, "%s: read error", path);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

/* HF sharded layout: index.json {"weight_map": {tensor: shard file}}. Every shard named is
 * opened; each tensor the index lists must be in the shard the index names. */
static int open_index(hs_st_archive *ar, const char *dir, const char *ipath, char *err, size_t errlen) {
    size_t len;
    char *text = read_small_file(ipath, &len, err, errlen);
    if (!text) return -1;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!root) return errf(err, errlen, "%s: not valid JSON", ipath);
    int rc = -1;
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(wm)) { errf(err, errlen, "%s: missing 'weight_map' object", ipath); goto done; }
    for (const cJSON *e = wm->child; e; e = e->next) {
        if (!cJSON_IsString(e)) {
            errf(err, errlen, "%s: weight_map['%.64s'] is not a file name", ipath, e->string);
            goto done;
        }
        const char *shard = e->valuestring;
        if (!shard[0] || strchr(shard, '/') || !strcmp(shard, "..") || !strcmp(shard, ".")) {
            errf(err, errlen, "%s: weight_map['%.64s']: shard '%.64s' is not a plain file name",
                 ipath, e->string, shard);
            goto done;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, shard);
        int seen = 0;
        for (int i = 0; i < ar->n_files && !seen; i++) seen = !strcmp(ar->file_paths[i], path);
        if (!seen && open_one(ar, path, err, errlen) < 0) goto done;
    }
    if (ar->n_files == 0) { errf(err, errlen, "%s: 'weight_map' is empty", ipath); goto done; }
    for (const cJSON *e = wm->child; e; e = e->next) {
        hs_st_tensor *t = hs_st_find(ar, e->string);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->valuestring);
        if (!t) {
            errf(err, errlen, "%s: tensor '%.128s' is listed in %s but that shard lacks it", ipath,
                 e->string, path);
            goto done;
        }
        if (strcmp(ar->file_paths[t->file_index], path)) {
            errf(err, errlen, "%s: tensor '%.128s' is listed in %s but stored in %s", ipath,
                 e->string, path, ar->file_paths[t->file_index]);
            goto done;
        }
    }
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

int hs_st_open_dir(hs_st_archive *ar, const char *model_dir, char *err, size_t errlen) {
    char ipath[4096], spath[4096];
    snprintf(ipath, sizeof ipath, "%s/model.safetensors.index.json", model_dir);
    snprintf(spath, sizeof spath, "%s/model.safetensors", model_dir);
    int rc;
    if (access(ipath, F_OK) == 0) rc = open_index(ar, model_dir, ipath, err, errlen);
    else if (access(spath, F_OK) == 0) rc = open_one(ar, spath, err, errlen);
    else rc = errf(err, errlen, "%s: no model.safetensors or model.safetensors.index.json", model_dir);
    if (rc < 0) hs_st_close(ar);
    return rc;
}

void hs_st_close(hs_st_archive *ar) {
    for (int i = 0; i < ar->n_files; i++) {
        if (ar->maps && ar->maps[i]) munmap(ar->maps[i], ar->map_lens[i]);
        if (ar->file_paths) free(ar->file_paths[i]);
    }
    free(ar->tensors);
    free(ar->file_paths);
    free(ar->maps);
    free(ar->map_lens);
    memset(ar, 0, sizeof *ar);
}

hs_st_tensor *hs_st_find(const hs_st_archive *ar, const char *name) {
    for (int i = 0; i < ar->n_tensors; i++)
        if (!strcmp(ar->tensors[i].name, name)) return &ar->tensors[i];
    return NULL;
}

/* ---- writing -------------------------------------------------------------------------- */

static uint64_t out_numel(const hs_st_out_tensor *t) {
    uint64_t n = 1;
    for (int k = 0; k < t->ndim; k++) n *= (uint64_t)t->shape[k];
    return n;
}

static int write_all(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n ? 0 : -1; }

int hs_st_write(const char *path, const hs_st_out_tensor *t, int n, hs_dtype dtype, char *err,
                size_t errlen) {
    return hs_st_write_progress(path, t, n, dtype, NULL, NULL, err, errlen);
}

int hs_st_write_progress(const char *path, const hs_st_out_tensor *t, int n, hs_dtype dtype,
                         hs_io_progress_fn fn, void *ctx, char *err, size_t errlen) {
    size_t es = hs_dtype_size(dtype);
    cJSON *hdr = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(hdr, "__metadata__");
    cJSON_AddStringToObject(meta, "format", "pt");
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].ndim < 0 || t[i].ndim > HS_ST_MAX_NDIM || !t[i].name ||
            cJSON_GetObjectItemCaseSensitive(hdr, t[i].name)) {
            cJSON_Delete(hdr);
            return errf(err, errlen, "%s: tensor '%s': bad shape or duplicate name", path,
                        t[i].name ? t[i].name : "?");
        }
        cJSON *e = cJSON_AddObjectToObject(hdr, t[i].name);
        cJSON_AddStringToObject(e, "dtype", hs_dtype_name(dtype));
        cJSON *sh = cJSON_AddArrayToObject(e, "shape");
        for (int k = 0; k < t[i].ndim; k++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t[i].shape[k]));
        uint64_t nb = out_numel(&t[i]) * es;
        cJSON *of = cJSON_AddArrayToObject(e, "data_offsets");
        cJSON_AddItemToArray(of, cJSON_CreateNumber((double)off));
        cJSON_AddItemToArray(of, cJSON_CreateNumber((double)(off + nb)));
        off += nb;
    }
    char *json = cJSON_PrintUnformatted(hdr);
    cJSON_Delete(hdr);
    if (!json) return errf(err, errlen, "%s: out of memory", path);
    size_t jl = strlen(json);
    size_t padded = (jl + 7) & ~(size_t)7;   /* keep the data 8-byte aligned */

    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        free(json);
        return errf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
    }
    uint8_t lenb[8];
    for (int i = 0; i < 8; i++) lenb[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    int bad = write_all(f, lenb, 8) || write_all(f, json, jl);
    for (size_t i = jl; i < padded && !bad; i++) bad = fputc(' ', f) == EOF;
    free(json);

    enum { CHUNK = 1 << 16 };
    uint16_t *half = es == 2 ? malloc(CHUNK * sizeof *half) : NULL;
    if (es == 2 && !half) bad = 1;
    uint64_t done = 0;
    for (int i = 0; i < n && !bad; i++) {
        uint64_t ne = out_numel(&t[i]);
        if (fn && off) fn(ctx, (double)done / (double)off);
        done += ne * es;
        if (dtype == HS_DT_F32) {
            bad = write_all(f, t[i].data, (size_t)ne * 4);
            continue;
        }
        for (uint64_t s = 0; s < ne && !bad; s += CHUNK) {
            size_t m = (size_t)(ne - s < CHUNK ? ne - s : CHUNK);
            for (size_t j = 0; j < m; j++)
                half[j] = dtype == HS_DT_BF16 ? hs_f32_to_bf16(t[i].data[s + j])
                                              : hs_f32_to_f16(t[i].data[s + j]);
            bad = write_all(f, half, m * 2);
        }
    }
    free(half);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) bad = 1;
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        int e = errno;
        unlink(tmp);
        return errf(err, errlen, "%s: write failed: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return errf(err, errlen, "%s: cannot rename to %s: %s", tmp, path, strerror(e));
    }
    return 0;
}
