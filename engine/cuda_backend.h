/* The CUDA backend's C interface. The backend is a plugin (build/libhs_cuda.so) that the
 * engine dlopens at run time (engine/backend.c), so the program starts and reports "no CUDA
 * device" cleanly where the CUDA libraries or a device are missing. */
#ifndef HS_CUDA_BACKEND_H
#define HS_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"
#include "knobs.h"
#include "forward.h"

typedef enum { HS_DEVICE_AUTO = 0, HS_DEVICE_CPU, HS_DEVICE_CUDA } hs_device;

/* Parses "cpu", "cuda", "auto". -1 if unknown. */
int hs_device_parse(const char *s);
/* Resolves AUTO; returns HS_DEVICE_CPU or HS_DEVICE_CUDA, or -1 with err when CUDA was asked
 * for and is unavailable ("no CUDA device: ..."). */
int hs_device_resolve(int requested, char *err, size_t errlen);
const char *hs_device_name(int d);

/* Symbols the plugin exports (looked up with dlsym). */
typedef struct hs_cuda_model hs_cuda_model;
typedef struct hs_cuda_decoder hs_cuda_decoder;
typedef struct {
    int abi_version;
    int (*device_count)(char *err, size_t errlen);
    hs_cuda_model *(*model_upload)(const hs_model *m, char *err, size_t errlen);
    void (*model_free)(hs_cuda_model *cm);
    int (*forward)(hs_cuda_model *cm, const int32_t *tokens, int T, const hs_knobs *k,
                   const hs_forward_opts *opts, char *err, size_t errlen);
    /* Incremental decoding on the GPU (engine/decode.h's semantics): KV caches, recurrent
     * states and conv tails for up to max_tokens positions in one device allocation. NULL with
     * err when it cannot (head dims over 256, out of memory): the caller then decodes by
     * forwards. The decoder uses cm's stream and handles; it must be freed before cm. */
    hs_cuda_decoder *(*decoder_new)(hs_cuda_model *cm, const hs_knobs *k, int max_tokens,
                                    char *err, size_t errlen);
    /* The prompt (first call only): one forward that fills the caches; logits [V] of its last
     * row (may be NULL). opts: only progress is used. 0, HS_CANCELLED or -1 with err. */
    int (*decoder_prefill)(hs_cuda_decoder *d, const int32_t *tokens, int n, float *logits,
                           const hs_forward_opts *opts, char *err, size_t errlen);
    /* One token at the next position; logits [V] after it (may be NULL). 0 or -1 with err. */
    int (*decoder_step)(hs_cuda_decoder *d, int32_t token, float *logits, char *err, size_t errlen);
    void (*decoder_free)(hs_cuda_decoder *d);
} hs_cuda_api;
#define HS_CUDA_ABI 4   /* 2: hs_forward_opts.stats; 3: the decoder entries; 4: hs_forward_opts.maps */
/* The plugin defines: const hs_cuda_api *hs_cuda_get_api(void); */

/* Loads the plugin (once). NULL with err when unavailable. */
const hs_cuda_api *hs_cuda_load(char *err, size_t errlen);

#endif
