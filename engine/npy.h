/* NumPy .npy files: float32/int32 writing (v1.0 header, C order, tmp + rename) and reading of
 * int32/int64/float32 arrays with validation. */
#ifndef HS_NPY_H
#define HS_NPY_H

#include <stddef.h>
#include <stdint.h>

#define HS_NPY_MAX_NDIM 8

typedef enum { HS_NPY_F32 = 0, HS_NPY_I32, HS_NPY_I64 } hs_npy_dtype;

typedef struct {
    hs_npy_dtype dtype;
    int ndim;
    int64_t shape[HS_NPY_MAX_NDIM];
    size_t count;              /* product of shape */
    void *data;                /* malloc'd, little-endian values of dtype */
} hs_npy_array;

/* Writes path.tmp then renames. Returns 0 or -1 with one line in err naming the file. */
int hs_npy_write_f32(const char *path, const float *data, int ndim, const int64_t *shape,
                     char *err, size_t errlen);
int hs_npy_write_i32(const char *path, const int32_t *data, int ndim, const int64_t *shape,
                     char *err, size_t errlen);

/* Reads '<f4', '<i4' or '<i8' in C order. Returns 0 or -1 with err naming the file. */
int hs_npy_read(hs_npy_array *out, const char *path, char *err, size_t errlen);
/* Parses an in-memory .npy image (name only used in messages). data is copied. */
int hs_npy_parse(hs_npy_array *out, const uint8_t *buf, size_t len, const char *name,
                 char *err, size_t errlen);
void hs_npy_free(hs_npy_array *a);

/* Token ids: an int32 or int64 array of shape [T] or [1, T], every id in [0, vocab).
 * *ids is malloc'd. Returns 0 or -1 with err naming the file. */
int hs_npy_read_tokens(int32_t **ids, int *T, const char *path, int vocab, char *err, size_t errlen);

#endif
