/* Analysis results (model-spec section 7-9) as plain structs. views/ draws these and
 * nothing else; the functions that fill them live in engine/ (analysis.c, needle.c, ppl.c,
 * decode.c). */
#ifndef HS_ANALYSIS_H
#define HS_ANALYSIS_H

#include <stdint.h>
#include "model.h"
#include "knobs.h"
#include "forward.h"

/* ---- per-head statistics ---- */
typedef struct {
    int layer, mixer, head;
    hs_mixer_type type;
    double entropy;      /* normalised entropy, mean over probe positions */
    double hit_rate;     /* top-k hit rate against the needle span */
    double retrieval;    /* retrieval score accumulated during greedy decoding */
} hs_head_stat;

/* ---- pooled map of one head ---- */
typedef enum { HS_POOL_MEAN = 0, HS_POOL_MAX = 1 } hs_pool_agg;
typedef struct {
    hs_head_ref head;
    hs_mixer_type type;
    int T;                     /* sequence length */
    int t0, t1, s0, s1;        /* window covered, half-open: queries [t0,t1), keys [s0,s1) */
    int bins_t, bins_s;        /* rows (queries) x cols (keys) */
    hs_pool_agg agg;
    float *cells;              /* [bins_t * bins_s]; NAN where the cell has no causal entry */
} hs_pooled_map;
void hs_pooled_map_free(hs_pooled_map *p);

/* ---- needle tasks ---- */
typedef enum { HS_SK1 = 0, HS_SK2, HS_SK3, HS_NEEDLE_TASKS } hs_needle_task;
typedef struct {
    hs_needle_task task;
    int length;                /* L: tokens of the prompt */
    double depth;              /* percent, 0..100 */
    uint64_t seed;
    char key[64];
    char value[64];
    int32_t *tokens;           /* [length] the prompt (BOS first) */
    int span_start, span_end;  /* needle value tokens, half-open */
    int probe_start, probe_end;/* from the final question to the end of the prompt, half-open */
    int needle_start, needle_end; /* the whole needle sentence, half-open */
} hs_needle_sample;

typedef struct {
    char answer[128];          /* generated text, printable */
    int correct;
} hs_needle_outcome;

/* ---- probe: one forward + decoding on one input ---- */
typedef struct {
    int T;
    int32_t *tokens;
    int span_start, span_end;  /* may be empty (-1) for free text */
    int n_probe;
    int *probe_pos;
    int topk;                  /* k actually used */
    int n_heads;
    hs_head_stat *heads;       /* every head of every mixer, layer-major */
    char answer[128];
    int has_answer, correct;
} hs_probe_result;
void hs_probe_result_free(hs_probe_result *r);

/* ---- NIAH sweep ---- */
typedef struct {
    int n_tasks, n_lengths, n_depths, samples;
    hs_needle_task tasks[HS_NEEDLE_TASKS];
    int *lengths;              /* [n_lengths] */
    double *depths;            /* [n_depths] */
    /* [task][length][depth]: correct count and done count (live fill-in: done < samples) */
    int *correct;
    int *done;
    /* One kept outcome per cell for display (the first sample): */
    hs_needle_sample *shown;   /* [task][length][depth]; tokens may be NULL (freed) */
    hs_needle_outcome *shown_outcome;
} hs_niah_result;
void hs_niah_result_free(hs_niah_result *r);

/* ---- perplexity by position ---- */
typedef struct {
    int n_buckets;
    int *bucket_start, *bucket_end; /* positions, half-open */
    double *ppl;               /* per bucket */
    double overall;
    int length, n_docs;
    char label[128];           /* knob description, for pinned curves */
    char corpus[64];           /* what the documents were cut from, for the view ("" unknown) */
} hs_ppl_result;
void hs_ppl_result_free(hs_ppl_result *r);

#endif
