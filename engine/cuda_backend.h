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
typedef struct {
    int abi_version;
    int (*device_count)(char *err, size_t errlen);
    hs_cuda_model *(*model_upload)(const hs_model *m, char *err, size_t errlen);
    void (*model_free)(hs_cuda_model *cm);
    int (*forward)(hs_cuda_model *cm, const int32_t *tokens, int T, const hs_knobs *k,
                   const hs_forward_opts *opts, char *err, size_t errlen);
} hs_cuda_api;
#define HS_CUDA_ABI 2   /* 2: hs_forward_opts.stats */
/* The plugin defines: const hs_cuda_api *hs_cuda_get_api(void); */

/* Loads the plugin (once). NULL with err when unavailable. */
const hs_cuda_api *hs_cuda_load(char *err, size_t errlen);

#endif
