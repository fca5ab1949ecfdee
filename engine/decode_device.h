/* Greedy generation on a chosen device: the CPU decoder (engine/decode.h), or on CUDA the
 * plugin's decoder (KV caches and recurrent states on the GPU), and where that decoder cannot
 * run (or for a backend that only has a forward) one full forward per generated token. Every
 * path picks the tokens hs_generate_greedy picks: argmax (first on ties), stop before eos. */
#ifndef HS_DECODE_DEVICE_H
#define HS_DECODE_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include "forward.h"
#include "knobs.h"
#include "model.h"

/* A forward that fills opts->logits (hs_forward's contract). */
typedef int (*hs_generate_forward_fn)(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts,
                                      char *err, size_t errlen);

/* Greedy decoding by full forwards of the growing sequence (a backend without a decoder):
 * every forward gets base (may be NULL) with its logits, nll and hidden outputs replaced.
 * Returns 0, HS_CANCELLED, or -1 with err. */
int hs_generate_greedy_by_forward(const hs_model *m, hs_generate_forward_fn forward, void *ctx,
                                  const int32_t *prompt, int T, int max_new, int32_t *out, int *n_out,
                                  const hs_forward_opts *base, char *err, size_t errlen);

/* device: HS_DEVICE_CPU, HS_DEVICE_CUDA or HS_DEVICE_AUTO. Up to max_new tokens after prompt
 * into out, *n_out of them. logits_out [max_new, V] (may be NULL) gets, row i, the logits
 * token i was picked from. opts (may be NULL): progress of the prefill (of every forward on the
 * fallback path). HS_CUDA_DECODER=0 in the environment skips the GPU decoder (forwards only),
 * to compare the two. Returns 0, HS_CANCELLED, or -1 with err. */
int hs_generate_greedy_on(int device, const hs_model *m, const hs_knobs *k, const int32_t *prompt, int T,
                          int max_new, int32_t *out, int *n_out, float *logits_out,
                          const hs_forward_opts *opts, char *err, size_t errlen);

#endif
