/* Greedy generation through the device dispatch (engine/decode_device.h), on the CPU: the
 * same tokens as hs_generate_greedy and as forwards of the growing sequence, logits rows equal
 * to the full forward's, eos and argument handling. (The CUDA path: tests/gpu/decode_check.sh.) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "decode.h"
#include "decode_device.h"
#include "test.h"

#define V_GEN 40

/* Layer 0: `first`; layer 1: HH (`first` + nope). */
static hs_model *gen_model(const char *first, uint64_t seed) {
    char json[4096];
    snprintf(json, sizeof json,
             "{\"model_type\":\"hybrid\",\"vocab_size\":%d,\"hidden_size\":16,"
             "\"intermediate_size\":24,\"num_hidden_layers\":2,\"head_dim\":8,"
             "\"train_context\":8,\"tokenizer\":{\"type\":\"bytes\",\"bos_id\":1,\"eos_id\":2},"
             "\"layers\":[{\"mixers\":[%s]},{\"mixers\":[%s,{\"type\":\"nope\",\"num_heads\":2}]}]}",
             V_GEN, first, first);
    hs_model *m = calloc(1, sizeof *m);
    char err[HS_ERR_LEN];
    if (!m || hs_config_parse(&m->cfg, json, strlen(json), "test.json", err, sizeof err) ||
        hs_model_alloc(m, err, sizeof err)) {
        fprintf(stderr, "gen_model: %s\n", err);
        free(m);
        return NULL;
    }
    hs_model_init_random(m, seed);
    return m;
}

static void gen_free(hs_model *m) { if (m) { hs_model_free(m); free(m); } }

typedef struct { const hs_model *m; const hs_knobs *k; int calls; } fwd_ctx;

static int cpu_forward(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts, char *err,
                       size_t errlen) {
    fwd_ctx *f = ctx;
    f->calls++;
    return hs_forward(f->m, tokens, T, f->k, opts, err, errlen);
}

static const char *GEN_MIXERS[] = {
    "{\"type\":\"swa\",\"num_heads\":4,\"num_kv_heads\":2,\"window\":5}",
    "{\"type\":\"gla\",\"num_heads\":2,\"gate_low_rank_dim\":4,\"use_short_conv\":true,\"conv_size\":3}",
    "{\"type\":\"gdn\",\"num_heads\":2}",
};

TEST(generate_on_cpu_equals_greedy_forwards_and_full_forward_rows) {
    enum { T = 9, N = 8 };
    char err[HS_ERR_LEN];
    for (int mi = 0; mi < 3; mi++) {
        hs_model *m = gen_model(GEN_MIXERS[mi], 70 + mi);
        CHECK(m, "model %d", mi);
        m->cfg.eos_id = -1;    /* never stop early */
        for (int kc = 0; kc < 3; kc++) {
            hs_knobs k;
            memset(&k, 0, sizeof k);
            if (kc == 1) { k.log_scale = 1; k.log_scale_L0 = 4; k.swa_window = 3; }
            if (kc == 2) { k.swla = HS_SWLA_OVERLAP; k.swla_window = 6; k.swla_stride = 2; }
            int32_t seq[T + N], a[N], b[N], c[N];
            for (int i = 0; i < T; i++) seq[i] = 3 + (i * 7 + mi) % (V_GEN - 3);
            float *rows = malloc(sizeof(float) * N * V_GEN), *full = malloc(sizeof(float) * (T + N) * V_GEN);
            int na = 0, nb = 0, nc = 0;
            int r1 = hs_generate_greedy(m, &k, seq, T, N, a, &na, NULL, NULL, NULL, err, sizeof err);
            int r2 = r1 ? r1 : hs_generate_greedy_on(HS_DEVICE_CPU, m, &k, seq, T, N, b, &nb, rows, NULL, err, sizeof err);
            fwd_ctx f = {m, &k, 0};
            int r3 = r2 ? r2 : hs_generate_greedy_by_forward(m, cpu_forward, &f, seq, T, N, c, &nc, NULL, err, sizeof err);
            double worst = 0;
            if (!r3) {
                memcpy(seq + T, b, sizeof b);
                hs_forward_opts o;
                memset(&o, 0, sizeof o);
                o.logits = full;
                o.n_logit_rows = T + N;
                r3 = hs_forward(m, seq, T + N, &k, &o, err, sizeof err);
                for (int i = 0; !r3 && i < N; i++) {
                    double e = hs_test_rel_err_ff(rows + (size_t)i * V_GEN, full + (size_t)(T - 1 + i) * V_GEN, V_GEN, 1e-3);
                    if (worst == worst && !(e <= worst)) worst = e; /* a NaN sticks */
                }
            }
            free(rows);
            free(full);
            int same = na == N && nb == N && nc == N && !memcmp(a, b, sizeof a) && !memcmp(a, c, sizeof a);
            if (r3 || !same || worst > 1e-4 || f.calls != N) gen_free(m);
            CHECK(!r3, "mixer %d knobs %d: %.300s", mi, kc, err);
            CHECK(same, "mixer %d knobs %d: the three greedy paths differ (%d %d %d tokens)", mi, kc, na, nb, nc);
            CHECK(worst <= 1e-4, "mixer %d knobs %d: logits rows off the full forward by %.3g", mi, kc, worst);
            CHECK(f.calls == N, "mixer %d knobs %d: %d forwards for %d tokens", mi, kc, f.calls, N);
        }
        gen_free(m);
    }
}

TEST(generate_on_stops_at_eos_and_checks_arguments) {
    hs_model *m = gen_model(GEN_MIXERS[2], 5);
    CHECK(m, "model");
    char err[HS_ERR_LEN];
    int32_t prompt[4] = {3, 4, 5, 6}, out[4];
    float rows[4 * V_GEN];
    int n = -1;
    /* make the first pick eos: it is the argmax of the prompt's last row */
    m->cfg.eos_id = -1;
    int rc = hs_generate_greedy_on(HS_DEVICE_CPU, m, NULL, prompt, 4, 1, out, &n, rows, NULL, err, sizeof err);
    int first = out[0];
    m->cfg.eos_id = first;
    int n2 = -1;
    int rc2 = rc ? rc : hs_generate_greedy_on(HS_DEVICE_CPU, m, NULL, prompt, 4, 4, out, &n2, rows, NULL, err, sizeof err);
    int n3 = -1;
    int rc3 = hs_generate_greedy_on(HS_DEVICE_CPU, m, NULL, prompt, 0, 4, out, &n3, NULL, NULL, err, sizeof err);
    hs_knobs bad;
    memset(&bad, 0, sizeof bad);
    bad.n_ablate = 1;
    bad.ablate[0] = (hs_head_ref){5, 0, 0};
    int n4 = -1;
    int rc4 = hs_generate_greedy_on(HS_DEVICE_CPU, m, &bad, prompt, 4, 4, out, &n4, NULL, NULL, err, sizeof err);
    gen_free(m);
    CHECK(rc == 0 && n == 1, "one token: rc %d n %d", rc, n);
    CHECK(rc2 == 0 && n2 == 0, "eos first: rc %d, %d tokens", rc2, n2);
    CHECK(rc3 == -1 && n3 == 0, "empty prompt accepted");
    CHECK(rc4 == -1 && n4 == 0, "bad ablation accepted");
}
