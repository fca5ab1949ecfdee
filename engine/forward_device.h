/* The forward pass on a chosen device: the CPU engine (hs_forward) or the CUDA plugin, with
 * the same arguments and results. The GPU copy of a model is uploaded on first use and kept
 * (one model at a time, keyed by the model pointer) until hs_forward_device_release. */
#ifndef HS_FORWARD_DEVICE_H
#define HS_FORWARD_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include "cuda_backend.h"
#include "forward.h"

/* device: HS_DEVICE_CPU, HS_DEVICE_CUDA or HS_DEVICE_AUTO (resolved with hs_device_resolve).
 * Knobs are validated here for both devices. Returns what hs_forward returns. */
int hs_forward_on(int device, const hs_model *m, const int32_t *tokens, int T,
                  const hs_knobs *knobs, const hs_forward_opts *opts, char *err, size_t errlen);
/* Uploads m to the GPU now (so a later hs_forward_on does not pay for it). 0 or -1 with err. */
int hs_forward_device_prepare(const hs_model *m, char *err, size_t errlen);
/* The GPU copy of m (uploaded now unless cached) and the plugin's API, for callers that use
 * more of the plugin than its forward (the decoder: engine/decode_device.c). The copy stays
 * owned by this cache. NULL with err. */
hs_cuda_model *hs_forward_device_model(const hs_model *m, const hs_cuda_api **api, char *err, size_t errlen);
/* Frees the GPU copy of m, if any. Call before hs_model_free(m): the cache is keyed by the
 * pointer, and a new model loaded at the same address must not find the old weights. */
void hs_forward_device_release(const hs_model *m);

#endif
