/* Shared by decode.c (decoder state, steps, greedy generation) and decode_prefill.c (the
 * prefill that fills the caches from a forward's capture hook). Not a public interface. */
#ifndef HS_DECODE_INTERNAL_H
#define HS_DECODE_INTERNAL_H

#include "decode.h"
#include "analysis_api.h"

typedef struct {
    const hs_mixer_config *mc;
    const hs_mixer_weights *w;
    int H, Hkv, dk, dv;
    /* softmax */
    int window;                /* effective, 0 = full causal */
    int cap;                   /* cache slots; position s lives in slot s % cap */
    float *kc, *vc;            /* [cap, Hkv*dk], [cap, Hkv*dv] */
    /* gla / gdn */
    double *state;             /* [H, dk, dv] when SWLA is off */
    int hcap;                  /* history ring slots (0 = none) */
    /* history rings, head-major (a head's sweep reads contiguous memory): */
    float *hk, *hv;            /* [H, hcap, dk], [H, hcap, dv] (hv only with SWLA) */
    float *hdec;               /* gla: exp(gk) [H, hcap, dk] */
    double *halpha;            /* gdn: alpha [H, hcap] */
    float *hbeta;              /* gdn: [H, hcap] */
    /* short conv: the last K-1 pre-conv projections, oldest first */
    int K;
    float *cq, *ck, *cv;       /* [K-1, H*dk], [K-1, H*dk], [K-1, H*dv] */
} dec_mixer;

struct hs_decoder {
    const hs_model *m;
    hs_knobs knobs;
    hs_knobs_resolved kr;
    int max_tokens, pos, keep_history;
    dec_mixer mix[HS_MAX_LAYERS][2];
    /* one-token scratch */
    float *x, *h, *y, *ffn_a, *ffn_b;
    float *q, *k, *v, *g, *o, *gk, *lowrank;
    float *beta, *log_alpha;
    double *c;                 /* [max_tokens] value-path weights */
    double *ks;                /* [widest dv] k S of a gdn step */
    double *cbuf;              /* [most heads, max_tokens] per-head a~ of a step */
    float *dist;               /* [max_tokens] a~ handed to head_fn */
    void *allocs[64];
    int n_allocs;
};

/* Stores position s's k, v and gates (rows [H*dk], [H*dv]; gk [H*dk] or beta/log_alpha [H])
 * in history slot s % hcap. */
void hs_dec_hist_put(dec_mixer *dm, int s, const float *k, const float *v, const float *gk,
                     const float *beta, const float *log_alpha);
hs_decoder *hs_dec_new(const hs_model *m, const hs_knobs *k, int max_tokens, int keep_history,
                       char *err, size_t errlen);
/* Prefill of the first n tokens (d->pos must be 0); head_fn (may be NULL) gets every head's
 * a~ of the prompt's last row. */
int hs_dec_prefill(hs_decoder *d, const int32_t *tokens, int n, float *logits,
                   const hs_forward_opts *opts, hs_decode_head_fn head_fn, void *ctx,
                   char *err, size_t errlen);

#endif
