/* Full forwards and greedy generation on the chosen device, through the engine's dispatch
 * (engine/forward_device.h, engine/decode_device.h), which keeps the model's GPU copy for the
 * whole run. */
#include "device_forward.h"

#include <stdio.h>
#include <string.h>

#include "decode_device.h"
#include "forward_device.h"

int hs_device_forward_open(hs_device_forward *f, int requested, const hs_model *m,
                           const hs_knobs *k, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->m = m;
    f->k = k;
    int d = hs_device_resolve(requested, err, errlen);
    if (d < 0) return -1;
    f->device = d;
    if (d == HS_DEVICE_CUDA && hs_forward_device_prepare(m, err, errlen)) return -1;
    return 0;
}

int hs_device_forward_run(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts,
                          char *err, size_t errlen) {
    hs_device_forward *f = ctx;
    return hs_forward_on(f->device, f->m, tokens, T, f->k, opts, err, errlen);
}

int hs_device_forward_generate(void *ctx, const int32_t *prompt, int T, int max_new, int32_t *out,
                               int *n_out, const hs_forward_opts *opts, char *err, size_t errlen) {
    hs_device_forward *f = ctx;
    return hs_generate_greedy_on(f->device, f->m, f->k, prompt, T, max_new, out, n_out, NULL, opts, err,
                                 errlen);
}

void hs_device_forward_close(hs_device_forward *f) {
    if (f->device == HS_DEVICE_CUDA) hs_forward_device_release(f->m);
    memset(f, 0, sizeof *f);
}
