/* safetensors reading (mmap, single file or HF sharded index) and writing. */
#ifndef HS_SAFETENSORS_H
#define HS_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define HS_ST_MAX_HEADER 100000000ULL  /* spec: reject N > 10^8 */
#define HS_ST_MAX_NDIM 8
#define HS_ST_NAME_LEN 192

typedef enum { HS_DT_F32 = 0, HS_DT_BF16, HS_DT_F16 } hs_dtype;

typedef struct {
    char name[HS_ST_NAME_LEN];
    hs_dtype dtype;
    int ndim;
    int64_t shape[HS_ST_MAX_NDIM];
    const void *data;          /* points into the mmap */
    size_t nbytes;
    int file_index;            /* which shard */
    int used;                  /* set by the model loader; unused ones are warned about */
} hs_st_tensor;

typedef struct {
    int n_tensors;
    hs_st_tensor *tensors;     /* malloc'd */
    int n_files;
    char **file_paths;         /* malloc'd; for messages */
    void **maps;
    size_t *map_lens;
} hs_st_archive;

size_t hs_dtype_size(hs_dtype d);
const char *hs_dtype_name(hs_dtype d);

/* Parses one safetensors file image already in memory (the fuzz entry point).
 * Appends its tensors to `ar` with file_index. `fname` is used in messages.
 * Validates: header length, JSON, dtype, offsets inside the buffer, no overlap,
 * nbytes == numel * dtype size, duplicate names (also across shards). */
int hs_st_parse(hs_st_archive *ar, const uint8_t *buf, size_t len, int file_index,
                const char *fname, char *err, size_t errlen);

/* Opens MODEL_DIR/model.safetensors, or MODEL_DIR/model.safetensors.index.json + shards. */
int hs_st_open_dir(hs_st_archive *ar, const char *model_dir, char *err, size_t errlen);
/* Opens one file. */
int hs_st_open_file(hs_st_archive *ar, const char *path, char *err, size_t errlen);
void hs_st_close(hs_st_archive *ar);

hs_st_tensor *hs_st_find(const hs_st_archive *ar, const char *name);

/* Converts a tensor's data to fp32. */
void hs_st_to_f32(float *out, const hs_st_tensor *t);

/* Writing: tensors given as fp32 data, stored as `dtype`. Writes to path.tmp then renames,
 * so a failed write never leaves a corrupt file. */
typedef struct {
    const char *name;
    int ndim;
    int64_t shape[HS_ST_MAX_NDIM];
    const float *data;
} hs_st_out_tensor;
int hs_st_write(const char *path, const hs_st_out_tensor *t, int n, hs_dtype dtype,
                char *err, size_t errlen);
/* Progress report for slow whole-file work: fraction in [0, 1], from the calling thread. */
typedef void (*hs_io_progress_fn)(void *ctx, double fraction);
/* hs_st_write with a progress callback (fn may be NULL). */
int hs_st_write_progress(const char *path, const hs_st_out_tensor *t, int n, hs_dtype dtype,
                         hs_io_progress_fn fn, void *ctx, char *err, size_t errlen);

/* bf16/f16 conversions (round to nearest even). */
float hs_bf16_to_f32(uint16_t h);
uint16_t hs_f32_to_bf16(float f);
float hs_f16_to_f32(uint16_t h);
uint16_t hs_f32_to_f16(float f);   /* for writing F16 files (tests, conversion tools) */

#endif
