/* The --device choice for commands that need full forwards (ppl) or greedy generation (niah):
 * callbacks over hs_forward_on (engine/forward_device.h), which runs hs_forward or the CUDA
 * plugin's forward, and over hs_generate_greedy_on (engine/decode_device.h), which runs the CPU
 * or the GPU decoder. */
#ifndef HS_DEVICE_FORWARD_H
#define HS_DEVICE_FORWARD_H

#include <stddef.h>
#include <stdint.h>
#include "cuda_backend.h"

typedef struct {
    int device;                /* HS_DEVICE_CPU or HS_DEVICE_CUDA */
    const hs_model *m;
    const hs_knobs *k;
} hs_device_forward;

/* Resolves `requested` (hs_device_parse value) and uploads the model when it is CUDA.
 * Returns 0, or -1 with err ("--device cuda: no CUDA device: ..."). */
int hs_device_forward_open(hs_device_forward *f, int requested, const hs_model *m,
                           const hs_knobs *k, char *err, size_t errlen);
/* Matches hs_ppl_forward_fn / hs_needle_forward_fn; ctx is the hs_device_forward. */
int hs_device_forward_run(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts,
                          char *err, size_t errlen);
/* Matches hs_needle_generate_fn; ctx is the hs_device_forward (its model and knobs). */
int hs_device_forward_generate(void *ctx, const int32_t *prompt, int T, int max_new, int32_t *out,
                               int *n_out, const hs_forward_opts *opts, char *err, size_t errlen);
void hs_device_forward_close(hs_device_forward *f);

#endif
