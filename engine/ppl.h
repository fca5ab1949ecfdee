/* Perplexity by position (model-spec section 9): documents of L tokens cut from a corpus,
 * per-position next-token NLL from hs_forward, averaged over documents in position buckets.
 * Position p (1 <= p < L) is the index of the predicted token, i.e. p tokens of context
 * (BOS included). The windowing rule is in assets/NEEDLE.md section 7. */
#ifndef HS_PPL_H
#define HS_PPL_H

#include <stddef.h>
#include <stdint.h>
#include "analysis.h"

typedef enum { HS_PPL_LOG = 0, HS_PPL_LINEAR = 1 } hs_ppl_spacing;

/* Cuts documents: out is malloc'd [n * L] ([BOS] + L-1 stream bytes each). With W whole
 * windows in the stream and want < W, takes windows floor(k W / want); want <= 0 = all.
 * Returns the number of documents, or -1 with err (stream shorter than one window). */
int hs_ppl_documents(int32_t **out, const char *stream, size_t len, int L, int want, int bos_id,
                     char *err, size_t errlen);

/* Bucket edges over positions [1, L): log-spaced (rounded, duplicates merged) or linear.
 * Fills r->n_buckets, bucket_start, bucket_end; ppl zeroed. Returns 0 or -1 (no memory,
 * L < 2 or n < 1). */
int hs_ppl_result_init(hs_ppl_result *r, int L, int n_buckets, hs_ppl_spacing spacing,
                       char *err, size_t errlen);

/* Sums one document's nll [L-1] (nll[t] predicts position t+1) into the running totals. */
typedef struct {
    double *sum;        /* [n_buckets] */
    long long *count;   /* [n_buckets] */
    double total;
    long long total_count;
} hs_ppl_accum;
int hs_ppl_accum_init(hs_ppl_accum *acc, const hs_ppl_result *r);
void hs_ppl_accum_add(hs_ppl_accum *acc, const hs_ppl_result *r, const float *nll);
/* Writes exp(mean NLL) per bucket and overall into r (NaN for an empty bucket). */
void hs_ppl_accum_finish(hs_ppl_result *r, const hs_ppl_accum *acc, int n_docs);
void hs_ppl_accum_free(hs_ppl_accum *acc);

/* A forward that writes opts->nll: hs_forward on the CPU, or another backend's. */
typedef int (*hs_ppl_forward_fn)(void *ctx, const int32_t *tokens, int T,
                                 const hs_forward_opts *opts, char *err, size_t errlen);
/* Called after each document; return nonzero to cancel. */
typedef int (*hs_ppl_doc_fn)(void *ctx, int done, int total);

/* Runs every document through forward (NULL: hs_forward on m with k) and fills r (already
 * initialised with hs_ppl_result_init). Returns 0, HS_CANCELLED, or -1 with err. */
int hs_ppl_run(hs_ppl_result *r, const hs_model *m, const hs_knobs *k, const int32_t *docs,
               int n_docs, const hs_forward_opts *base, hs_ppl_forward_fn forward,
               void *forward_ctx, hs_ppl_doc_fn on_doc, void *ctx, char *err, size_t errlen);

#endif
