/* Incremental decoding: KV cache for softmax mixers (ring buffer when windowed), recurrent
 * state for gla/gdn (with the bookkeeping exact/overlap SWLA need), short-conv state.
 * Decoding gives the same logits as a full forward of the longer sequence. */
#ifndef HS_DECODE_H
#define HS_DECODE_H

#include <stdint.h>
#include "model.h"
#include "knobs.h"
#include "forward.h"

typedef struct hs_decoder hs_decoder;

/* Per generated token, for analysis: called once per head with that head's distribution
 * a~ over positions 0..t (length t+1; zeros outside windows). */
typedef void (*hs_decode_head_fn)(void *ctx, int layer, int mixer, int head, int t,
                                  const float *dist);

hs_decoder *hs_decoder_new(const hs_model *m, const hs_knobs *k, int max_tokens,
                           char *err, size_t errlen);
void hs_decoder_free(hs_decoder *d);
/* Feeds n tokens (prompt); writes the logits after the last one to logits [V] (may be NULL). */
int hs_decoder_prefill(hs_decoder *d, const int32_t *tokens, int n, float *logits,
                       const hs_forward_opts *opts, char *err, size_t errlen);
/* Feeds one token; logits [V] for the next. head_fn may be NULL. */
int hs_decoder_step(hs_decoder *d, int32_t token, float *logits, hs_decode_head_fn head_fn,
                    void *ctx, char *err, size_t errlen);
int hs_decoder_position(const hs_decoder *d);

/* Greedy generation of up to max_new tokens after prompt; stops at eos. */
int hs_generate_greedy(const hs_model *m, const hs_knobs *k, const int32_t *prompt, int T,
                       int max_new, int32_t *out, int *n_out, hs_decode_head_fn head_fn,
                       void *ctx, const hs_forward_opts *opts, char *err, size_t errlen);

#endif
