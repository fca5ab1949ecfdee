/* GPU benchmark driver (make bench-gpu, through tests/bench/bench_gpu.sh). Three modes:
 *   bench_gpu gemm                          the measured bf16 GEMM peak (cuBLAS, 8192^3)
 *   bench_gpu gemms [T d F]                 a layer's GEMM shapes (default 376m at 64K), fp32 / bf16 / accumulating output
 *   bench_gpu model [init flags] --lengths 4096,16384,65536 [--reps N] [--peak TFLOPS]
 *       prefill of a random-weight model through the engine's device dispatch: ms, tokens/s,
 *       model TFLOP/s (matmul FLOPs + attention/scan FLOPs as stated below), fraction of the
 *       GEMM peak, GPU memory in use after the forward (weights + workspace + context)
 *   bench_gpu attn-check                    tensor-core vs fp32 attention on an odd case
 *   bench_gpu graph-check [init flags]      the forward replayed from its CUDA graph against the
 *       same forward launched eagerly: eager, capture, replay, a new key, knobs, and back
 *   bench_gpu kernels T H dk                attention (full causal, NoPE; tensor cores and fp32), gla scan plain /
 *       exact SWLA / overlap SWLA (W=4096, S=1024), gdn scan plain / exact SWLA
 * One line per measurement, "key=value" fields, so the script can tabulate them. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern "C" {
#include "analysis_api.h"
#include "forward_device.h"
#include "model.h"
#include "presets.h"
}
#include "kernels/cuda/kernels.cuh"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double gemm_peak(void) {
    const int n = 8192;
    void *a, *b, *c;
    CK(cudaMalloc(&a, (size_t)n * n * 2));
    CK(cudaMalloc(&b, (size_t)n * n * 2));
    CK(cudaMalloc(&c, (size_t)n * n * 2));
    CK(cudaMemset(a, 0x3c, (size_t)n * n * 2)); /* non-zero bf16 data */
    CK(cudaMemset(b, 0x3b, (size_t)n * n * 2));
    cublasHandle_t h;
    cublasCreate(&h);
    float al = 1.0f, be = 0.0f;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int i = 0; i < 3; i++)
        cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &al, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &be, c,
                     CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cudaEventRecord(e0);
    const int reps = 10;
    for (int i = 0; i < reps; i++)
        cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &al, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &be, c,
                     CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cudaEventRecord(e1);
    CK(cudaEventSynchronize(e1));
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    double tf = 2.0 * n * (double)n * n * reps / (ms * 1e-3) / 1e12;
    printf("gemm n=%d tflops=%.1f\n", n, tf);
    cublasDestroy(h);
    cudaFree(a); cudaFree(b); cudaFree(c);
    return tf;
}

/* FLOPs of one prefill of T tokens: 2 per weight per token for every projection (the LM head
 * for the last row only); softmax attention 4*dk per visible (t,s) pair (QK and PV, dk=dv);
 * gla/gdn recurrences 4*dk*dv per token and head (state update and readout). */
static double model_flops(const hs_config *c, long T) {
    double f = 0, d = c->hidden_size, F = c->intermediate_size;
    for (int l = 0; l < c->num_layers; l++) {
        f += 2.0 * T * 3 * d * F;
        for (int j = 0; j < c->layers[l].n_mixers; j++) {
            const hs_mixer_config *m = &c->layers[l].mixers[j];
            double H = m->num_heads, Hkv = m->num_kv_heads > 0 ? m->num_kv_heads : m->num_heads;
            double dk = m->head_k_dim, dv = m->head_v_dim;
            f += 2.0 * T * d * (H * dk + Hkv * dk + Hkv * dv + H * dv);
            if (m->type == HS_GLA || m->type == HS_GDN) {
                f += 2.0 * T * d * H * dv;                         /* gate projection */
                f += 4.0 * T * H * dk * dv;
            } else {
                double W = m->type == HS_SWA && m->window < T ? m->window : 0;
                double pairs = W > 0 ? (double)T * W - W * (W - 1) / 2 : (double)T * (T + 1) / 2;
                f += 2.0 * pairs * H * (dk + dv);
            }
        }
    }
    return f + 2.0 * d * c->vocab_size;
}

/* A model of the preset flags pa holds, with random weights (0, or 2 with the error printed). */
static int build_preset_model(hs_model *m, hs_preset_args *pa) {
    char err[512];
    memset(m, 0, sizeof *m);
    if (hs_preset_build(&m->cfg, pa, err, sizeof err) || hs_model_alloc(m, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    hs_model_init_random(m, hs_preset_seed(pa));
    return 0;
}

static int bench_model(int argc, char **argv) {
    hs_preset_args pa;
    hs_preset_args_init(&pa);
    char err[512];
    const char *lengths = "4096,16384,65536";
    int reps = 3, analysis_rows = 0, maps = 0;
    double peak = 0;
    for (int i = 2; i < argc; i++) {
        int j = i;
        int r = hs_preset_parse_arg(&pa, argc, argv, &j, err, sizeof err);
        if (r < 0) { fprintf(stderr, "%s\n", err); return 2; }
        if (r > 0) { i = j; continue; }   /* j is left on the flag's value */
        if (!strcmp(argv[i], "--lengths") && i + 1 < argc) lengths = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--peak") && i + 1 < argc) peak = atof(argv[++i]);
        else if (!strcmp(argv[i], "--analysis") && i + 1 < argc) analysis_rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--maps")) maps = 1;
        else { fprintf(stderr, "bench_gpu model: unknown argument %s\n", argv[i]); return 2; }
    }
    hs_model m;
    double t0 = now_s();
    if (build_preset_model(&m, &pa)) return 2;
    double t1 = now_s();
    if (hs_forward_device_prepare(&m, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
    double t2 = now_s();
    printf("model params=%zu init_s=%.1f upload_s=%.2f\n", m.arena_floats, t1 - t0, t2 - t1);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", lengths);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int T = atoi(tok);
        int32_t *ids = (int32_t *)malloc((size_t)T * sizeof *ids);
        for (int t = 0; t < T; t++) ids[t] = (int32_t)((t * 2654435761u) % 256u);
        float *logit = (float *)malloc((size_t)m.cfg.vocab_size * sizeof(float));
        hs_forward_opts o;
        memset(&o, 0, sizeof o);
        o.logits = logit;
        o.n_logit_rows = 1;
        if (hs_forward_on(HS_DEVICE_CUDA, &m, ids, T, NULL, &o, err, sizeof err)) {
            fprintf(stderr, "T=%d: %s\n", T, err);
            return 1;
        }
        double best = 1e30, sum = 0;
        for (int r = 0; r < reps; r++) {
            double a = now_s();
            if (hs_forward_on(HS_DEVICE_CUDA, &m, ids, T, NULL, &o, err, sizeof err)) {
                fprintf(stderr, "T=%d: %s\n", T, err);
                return 1;
            }
            double s = now_s() - a;
            sum += s;
            if (s < best) best = s;
        }
        size_t fr, tot;
        CK(cudaMemGetInfo(&fr, &tot));
        double fl = model_flops(&m.cfg, T);
        double tfs = fl / best / 1e12;
        printf("prefill T=%d ms=%.2f mean_ms=%.2f tok_s=%.0f tflops=%.1f peak_frac=%.3f gpu_mem_gib=%.2f finite=%d\n", T,
               best * 1e3, sum / reps * 1e3, T / best, tfs, peak > 0 ? tfs / peak : 0.0,
               (double)(tot - fr) / (1 << 30), isfinite(logit[0]) ? 1 : 0);
        fflush(stdout);
        if (analysis_rows > 0 && analysis_rows <= T) {
            /* the probe's analysis pass: every head's entropy / top-k hit / argmax on the last
             * analysis_rows positions, computed inside the forward (hs_forward_opts.stats) */
            const int nh = hs_config_head_count(&m.cfg);
            int *rows = (int *)malloc(sizeof(int) * (size_t)analysis_rows);
            double *ent = (double *)malloc(sizeof(double) * (size_t)nh * analysis_rows);
            int *hit = (int *)malloc(sizeof(int) * (size_t)nh * analysis_rows);
            int *am = (int *)malloc(sizeof(int) * (size_t)nh * analysis_rows);
            for (int r = 0; r < analysis_rows; r++) rows[r] = T - analysis_rows + r;
            int topk = T / 64 < 1 ? 1 : T / 64 > 64 ? 64 : T / 64;
            hs_head_stats_req req = {rows, analysis_rows, T / 2, T / 2 + 7, topk, ent, hit, am};
            o.stats = &req;
            double ab = 1e30;
            for (int r = 0; r < (reps < 2 ? 2 : reps); r++) {   /* the first run includes set-up */
                double a = now_s();
                if (hs_forward_on(HS_DEVICE_CUDA, &m, ids, T, NULL, &o, err, sizeof err)) {
                    fprintf(stderr, "analysis T=%d: %s\n", T, err);
                    return 1;
                }
                double s2 = now_s() - a;
                if (r > 0 && s2 < ab) ab = s2;
            }
            o.stats = NULL;
            double me = 0;
            for (size_t i = 0; i < (size_t)nh * analysis_rows; i++) me += ent[i];
            printf("analysis T=%d heads=%d rows=%d topk=%d ms=%.1f (forward + every head's statistics) "
                   "stats_ms=%.1f mean_entropy=%.4f\n", T, nh, analysis_rows, topk, ab * 1e3,
                   (ab - best) * 1e3, me / ((double)nh * analysis_rows));
            fflush(stdout);
            free(rows); free(ent); free(hit); free(am);
        }
        if (maps) {
            /* every head's pooled map as `map --device cuda` makes it by default (256 x 256 bins,
             * 16 sampled rows a row bin past 4K queries), all in one forward */
            const int nh = hs_config_head_count(&m.cfg);
            hs_map_opts *mo = (hs_map_opts *)calloc((size_t)nh, sizeof *mo);
            hs_pooled_map *pm = (hs_pooled_map *)calloc((size_t)nh, sizeof *pm);
            long long *used = (long long *)calloc((size_t)nh, sizeof *used);
            double mb = 1e30;
            long long rows_total = 0;
            int nan_free = 1;
            for (int r = 0; r < (reps < 2 ? 2 : reps); r++) {   /* the first run includes set-up */
                int i = 0;
                for (int l = 0; l < m.cfg.num_layers; l++)
                    for (int j = 0; j < m.cfg.layers[l].n_mixers; j++)
                        for (int hh = 0; hh < m.cfg.layers[l].mixers[j].num_heads; hh++, i++) {
                            memset(&mo[i], 0, sizeof mo[i]);
                            mo[i].head.layer = l; mo[i].head.mixer = j; mo[i].head.head = hh;
                        }
                double a = now_s();
                if (hs_pooled_maps_cuda(pm, &m, NULL, ids, T, mo, nh, used, NULL, NULL, err, sizeof err)) {
                    fprintf(stderr, "maps T=%d: %s\n", T, err);
                    return 1;
                }
                double s2 = now_s() - a;
                if (r > 0 && s2 < mb) mb = s2;
                rows_total = 0;
                for (int k = 0; k < nh; k++) {
                    rows_total += used[k];
                    /* the last row bin always holds the diagonal: a finite cell */
                    if (!isfinite(pm[k].cells[(size_t)pm[k].bins_t * pm[k].bins_s - 1])) nan_free = 0;
                    hs_pooled_map_free(&pm[k]);
                }
            }
            printf("maps T=%d heads=%d bins=%dx%d rows=%lld ms=%.1f (forward + every head's pooled map) "
                   "maps_ms=%.1f finite=%d\n", T, nh, mo[0].bins_t, mo[0].bins_s, rows_total, mb * 1e3,
                   (mb - best) * 1e3, nan_free);
            fflush(stdout);
            free(mo); free(pm); free(used);
        }
        free(ids);
        free(logit);
    }
    hs_forward_device_release(&m);
    hs_model_free(&m);
    return 0;
}

static void fill(float *d, size_t n, float scale, float offset, unsigned seed) {
    float *h = (float *)malloc(n * sizeof(float));
    unsigned s = seed;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = offset + scale * (((s >> 8) & 0xffff) / 65536.0f - 0.5f);
    }
    CK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    free(h);
}

/* The tensor-core attention against the fp32 one on a small odd case (GQA, window, log
 * scaling, T not a multiple of the tiles): largest difference relative to the output RMS. */
static void attention_check(void) {
    const int T = 1001, H = 4, Hkv = 2, dk = 64, dv = 64, W = 300;
    size_t nq = (size_t)T * H * dk, nk = (size_t)T * Hkv * dk;
    float *q, *k, *v, *o1, *o2, *rs;
    CK(cudaMalloc(&q, nq * 4)); CK(cudaMalloc(&k, nk * 4)); CK(cudaMalloc(&v, nk * 4));
    CK(cudaMalloc(&o1, nq * 4)); CK(cudaMalloc(&o2, nq * 4)); CK(cudaMalloc(&rs, T * 4));
    fill(q, nq, 4.0f, 0.0f, 11); fill(k, nk, 4.0f, 0.0f, 12); fill(v, nk, 2.0f, 0.0f, 13); fill(rs, T, 0.5f, 1.25f, 14);
    CK(cu_attention_setup());
    for (int mode = 0; mode < 2; mode++) {
        const float *r = mode ? rs : NULL;
        int w = mode ? W : 0;
        CK(cu_attention_tc(o1, q, k, v, r, T, H, Hkv, dk, dv, w, 0));
        CK(cu_attention_simt(o2, q, k, v, r, T, H, Hkv, dk, dv, w, 0));
        float *a = (float *)malloc(nq * 4), *b = (float *)malloc(nq * 4);
        CK(cudaMemcpy(a, o1, nq * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b, o2, nq * 4, cudaMemcpyDeviceToHost));
        double ss = 0, mx = 0;
        for (size_t i = 0; i < nq; i++) {
            ss += (double)b[i] * b[i];
            double d = fabs((double)a[i] - b[i]);
            if (mx == mx && !(d <= mx)) mx = d;    /* a NaN d sticks */
        }
        double rel = mx / sqrt(ss / nq);
        printf("attn_check mode=%s rel_max=%.2e %s\n", mode ? "window+logscale+gqa" : "causal+gqa", rel,
               rel < 0.05 ? "ok" : "FAIL");
        free(a); free(b);
    }
    cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(o1); cudaFree(o2); cudaFree(rs);
}

/* The layer GEMMs of a preset's shape at T tokens, as engine/cuda/forward.cu calls them
 * (cublasGemmEx, weights [N, K] bf16, activations [T, K] bf16, fp32 accumulation), with the
 * output in fp32 (the engine's default), in bf16, and fp32 accumulating into the output (the
 * residual adds): what the projections cost in a prefill, and what a bf16 output would save.
 * One row a shape and output type: ms (best of 10 after 3 warm-ups), TFLOP/s, output GB/s. */
static int bench_gemms(int argc, char **argv) {
    const int T = argc > 2 ? atoi(argv[2]) : 65536, d = argc > 3 ? atoi(argv[3]) : 1024, F = argc > 4 ? atoi(argv[4]) : 3584;
    if (T < 1 || d < 1 || F < 1) { fprintf(stderr, "usage: bench_gpu gemms [T d F]\n"); return 2; }
    struct { const char *name; int n, k; } shapes[] = {
        {"proj_d_to_d", d, d}, {"gate_up", 2 * F, d}, {"down", d, F}, {"gla_gate_lr16", 16, d},
    };
    const size_t kmax = (size_t)(F > d ? F : d), nmax = (size_t)2 * F;
    void *x, *w, *y;
    CK(cudaMalloc(&x, (size_t)T * kmax * 2));
    CK(cudaMalloc(&w, nmax * kmax * 2));
    CK(cudaMalloc(&y, (size_t)T * nmax * 4));
    CK(cudaMemset(x, 0x3c, (size_t)T * kmax * 2));
    CK(cudaMemset(w, 0x3b, nmax * kmax * 2));
    CK(cudaMemset(y, 0, (size_t)T * nmax * 4));
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "bench_gpu gemms: cublasCreate failed\n"); return 1; }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (auto &sh : shapes)
        for (int mode = 0; mode < 3; mode++) {   /* fp32 out, bf16 out, fp32 accumulate */
            const float al = 1.0f, be = mode == 2 ? 1.0f : 0.0f;
            const cudaDataType ot = mode == 1 ? CUDA_R_16BF : CUDA_R_32F;
            double best = 1e30;
            for (int r = 0; r < 13; r++) {
                CK(cudaEventRecord(e0));
                cublasStatus_t bs = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, sh.n, T, sh.k, &al, w, CUDA_R_16BF, sh.k, x,
                                                 CUDA_R_16BF, sh.k, &be, y, ot, sh.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                if (bs != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "bench_gpu gemms: %s failed (%d)\n", sh.name, (int)bs); return 1; }
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= 3 && ms < best) best = ms;
            }
            const double fl = 2.0 * T * (double)sh.n * sh.k, ob = (double)T * sh.n * (mode == 1 ? 2 : 4) * (mode == 2 ? 2 : 1);
            printf("gemm_shape name=%s T=%d N=%d K=%d out=%s ms=%.3f tflops=%.1f out_gb_s=%.0f\n", sh.name, T, sh.n, sh.k,
                   mode == 0 ? "fp32" : mode == 1 ? "bf16" : "fp32_accumulate", best, fl / (best * 1e-3) / 1e12,
                   ob / (best * 1e-3) / 1e9);
            fflush(stdout);
        }
    cublasDestroy(h);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(x); cudaFree(w); cudaFree(y);
    return 0;
}

static int bench_kernels(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: bench_gpu kernels T H dk\n"); return 2; }
    int T = atoi(argv[2]), H = atoi(argv[3]), dk = atoi(argv[4]), dv = dk;
    size_t n = (size_t)T * H * dk;
    float *q, *k, *v, *gk, *o, *beta, *la;
    CK(cudaMalloc(&q, n * 4)); CK(cudaMalloc(&k, n * 4)); CK(cudaMalloc(&v, n * 4));
    CK(cudaMalloc(&gk, n * 4)); CK(cudaMalloc(&o, n * 4));
    CK(cudaMalloc(&beta, (size_t)T * H * 4)); CK(cudaMalloc(&la, (size_t)T * H * 4));
    fill(q, n, 1.0f, 0.0f, 1); fill(k, n, 0.2f, 0.0f, 2); fill(v, n, 1.0f, 0.0f, 3);
    fill(gk, n, 0.05f, -0.03f, 4); fill(beta, (size_t)T * H, 0.5f, 0.5f, 5); fill(la, (size_t)T * H, 0.02f, -0.02f, 6);
    CK(cu_l2norm_heads(k, T, H, dk, 1e-6f, 0));
    CK(cu_attention_setup());
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const int W = 4096, S = 1024;
    double att_flops = 2.0 * (double)T * (T + 1) / 2 * H * (dk + dv);
    double lin_flops = 4.0 * T * H * dk * dv;
    const char *names[] = {"attention_nope_tc", "attention_nope_simt", "gla_plain", "gla_exact_swla", "gla_overlap_swla", "gdn_plain",
                           "gdn_exact_swla"};
    for (int which = 0; which < 7; which++) {
        float best = 1e30f;
        for (int r = 0; r < (which == 1 ? 1 : 3); r++) {   /* the fp32 kernel is slow: once */
            cudaEventRecord(e0);
            switch (which) {
            case 0: CK(cu_attention_tc(o, q, k, v, NULL, T, H, H, dk, dv, 0, 0)); break;
            case 1: CK(cu_attention_simt(o, q, k, v, NULL, T, H, H, dk, dv, 0, 0)); break;
            case 2: CK(cu_gla_scan(o, q, k, v, gk, T, H, dk, dv, CU_SWLA_OFF, 0, 0)); break;
            case 3: CK(cu_gla_scan(o, q, k, v, gk, T, H, dk, dv, CU_SWLA_EXACT, W, 0)); break;
            case 4: CK(cu_linattn_window(o, q, k, v, gk, NULL, NULL, T, H, dk, dv, CU_SWLA_OVERLAP, W, S, 0)); break;
            case 5: CK(cu_gdn_scan(o, q, k, v, beta, la, T, H, dk, dv, 0)); break;
            case 6: CK(cu_linattn_window(o, q, k, v, NULL, beta, la, T, H, dk, dv, CU_SWLA_EXACT, W, S, 0)); break;
            }
            cudaEventRecord(e1);
            CK(cudaEventSynchronize(e1));
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (ms < best) best = ms;
        }
        double fl = which <= 1 ? att_flops : lin_flops;
        printf("kernel name=%s T=%d H=%d dk=%d ms=%.3f tflops=%.2f\n", names[which], T, H, dk, best,
               fl / (best * 1e-3) / 1e12);
        fflush(stdout);
    }
    cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(gk); cudaFree(o); cudaFree(beta); cudaFree(la);
    return 0;
}

/* All-row logits of one forward through the device dispatch (NULL on failure). */
static float *forward_logits(hs_model *m, const int32_t *ids, int T, const hs_knobs *k) {
    char err[512];
    float *out = (float *)malloc((size_t)T * m->cfg.vocab_size * sizeof(float));
    hs_forward_opts o;
    memset(&o, 0, sizeof o);
    o.logits = out;
    o.n_logit_rows = T;
    if (!out || hs_forward_on(HS_DEVICE_CUDA, m, ids, T, k, &o, err, sizeof err)) {
        fprintf(stderr, "graph-check: T=%d: %s\n", T, err);
        free(out);
        return NULL;
    }
    return out;
}

/* Largest |a - b| relative to the RMS of b. */
static double rel_max(const float *a, const float *b, size_t n) {
    double ss = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        ss += (double)b[i] * b[i];
        double d = fabs((double)a[i] - b[i]);
        if (mx == mx && !(d <= mx)) mx = d;   /* a NaN d sticks */
    }
    return mx / sqrt(ss / (double)n + 1e-30);
}

/* engine/cuda/forward.cu (unless HS_CUDA_GRAPH=0) replays the layer stack from a CUDA graph from
 * the second forward of a kind on. Every replayed result must match the eager one of the same inputs (same kernels
 * in the same order: expected exactly; tolerance 1e-6 of the RMS). */
static int graph_check(int argc, char **argv) {
    hs_preset_args pa;
    hs_preset_args_init(&pa);
    char err[512];
    for (int i = 2; i < argc; i++) {
        int j = i;
        int r = hs_preset_parse_arg(&pa, argc, argv, &j, err, sizeof err);
        if (r <= 0) { fprintf(stderr, "graph-check: %s\n", r < 0 ? err : "unknown argument"); return 2; }
        i = j;
    }
    hs_model m;
    if (build_preset_model(&m, &pa)) return 2;
    int32_t ids[301];
    for (int t = 0; t < 301; t++) ids[t] = (int32_t)((t * 2654435761u) % (unsigned)m.cfg.vocab_size);
    hs_knobs none, kn;
    memset(&none, 0, sizeof none);
    memset(&kn, 0, sizeof kn);
    kn.log_scale = 1;
    kn.log_scale_L0 = 16;
    kn.n_ablate = 1;
    kn.ablate[0].layer = m.cfg.num_layers - 1;
    /* eager, capture, replay (x2); another length; knobs; the first kind again */
    struct { int T; const hs_knobs *k; int ref; const char *what; } seq[] = {
        {300, &none, -1, "eager"}, {300, &none, 0, "captured"}, {300, &none, 0, "replayed"},
        {300, &none, 0, "replayed again"}, {301, &none, -1, "T=301 eager"}, {301, &none, 4, "T=301 captured"},
        {301, &kn, -1, "knobs eager"}, {301, &kn, 6, "knobs captured"}, {301, &kn, 6, "knobs replayed"},
        {300, &none, 0, "T=300 again"}, {300, &none, 0, "T=300 captured again"}};
    const int n = (int)(sizeof seq / sizeof seq[0]);
    float *out[sizeof seq / sizeof seq[0]] = {};
    int fails = 0;
    for (int i = 0; i < n; i++) {
        out[i] = forward_logits(&m, ids, seq[i].T, seq[i].k);
        if (!out[i]) { fails++; break; }
        if (seq[i].ref < 0) continue;
        double d = rel_max(out[i], out[seq[i].ref], (size_t)seq[i].T * m.cfg.vocab_size);
        int ok = d <= 1e-6;
        printf("graph_check %s %s T=%d: max |diff| %.2e of the RMS (tol 1e-6)\n", ok ? "ok  " : "FAIL", seq[i].what,
               seq[i].T, d);
        fails += !ok;
    }
    double dk = out[6] && out[4] ? rel_max(out[6], out[4], (size_t)301 * m.cfg.vocab_size) : 0;
    printf("graph_check %s the knobs change the logits: %.2e of the RMS\n", dk > 1e-3 ? "ok  " : "FAIL", dk);
    fails += !(dk > 1e-3);
    for (int i = 0; i < n; i++) free(out[i]);
    hs_forward_device_release(&m);
    hs_model_free(&m);
    printf("graph_check %s\n", fails ? "FAIL" : "PASS");
    return fails ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: bench_gpu gemm | gemms [T d F] | model [flags] | kernels T H dk | attn-check | graph-check [flags]\n"); return 2; }
    if (!strcmp(argv[1], "gemm")) { gemm_peak(); return 0; }
    if (!strcmp(argv[1], "gemms")) return bench_gemms(argc, argv);
    if (!strcmp(argv[1], "model")) return bench_model(argc, argv);
    if (!strcmp(argv[1], "kernels")) return bench_kernels(argc, argv);
    if (!strcmp(argv[1], "attn-check")) { attention_check(); return 0; }
    if (!strcmp(argv[1], "graph-check")) return graph_check(argc, argv);
    fprintf(stderr, "bench_gpu: unknown mode %s\n", argv[1]);
    return 2;
}
