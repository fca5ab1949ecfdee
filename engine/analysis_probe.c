/* Probe statistics (model-spec section 7) gathered inside the forward's capture hook, so one
 * forward analyses every head of every layer without keeping any layer's activations. */
#include "analysis_api.h"
#include "kernels/cpu/blas_threads.h"

#include <stdlib.h>
#include <string.h>

/* Probe rows per hs_head_view_rows call (its buffer is PROBE_BLOCK x T doubles). */
#define PROBE_BLOCK 32

/* Work per probe row is O(T * dk); small probes run on one thread (threads cost more). */
static int v_dk(const hs_mixer_acts *a) { return a->mc->head_k_dim; }

void hs_probe_stats_capture(void *ctx, const hs_mixer_acts *a) {
    hs_probe_stats *ps = ctx;
    if (ps->failed) return;
    const hs_mixer_config *mc = a->mc;
    int H = mc->num_heads, T = a->T;
    int base = hs_config_head_index(ps->cfg, a->layer, a->mixer, 0);
    if (base < 0) { ps->failed = 1; return; }
    int rows = ps->n_probe;
    for (int h = 0; h < H; h++) {
        hs_head_stat *st = &ps->heads[base + h];
        st->layer = a->layer; st->mixer = a->mixer; st->head = h; st->type = mc->type;
        st->entropy = 0; st->hit_rate = 0;
    }
    if (rows <= 0 || H <= 0) return;
    hs_head_view *views = calloc((size_t)(unsigned)H, sizeof *views);
    double *ent = calloc((size_t)H * rows, sizeof *ent);
    int *hit = calloc((size_t)H * rows, sizeof *hit);
    int failed = !views || !ent || !hit;
    for (int h = 0; h < H && !failed; h++)
        if (hs_head_view_init(&views[h], a, h)) failed = 1;
    /* Softmax rows take the exact double path: identical keys (a token repeated in the
     * haystack, seen by a NoPE head) then get identical a~, so the top-k tie rule sees the
     * exact ties that a float GEMM would break by rounding. gla/gdn rows take the chunked
     * GEMM path (their decays make exact ties between positions practically impossible). */
    int exact = hs_mixer_is_softmax(mc->type);
    int blas = hs_blas_serial_begin();
    if (!failed && !exact) {
#pragma omp parallel for schedule(dynamic, 1) if (H > 1 && (long long)T * v_dk(a) > (1 << 16))
        for (int h = 0; h < H; h++)
            if (hs_head_view_prepare(&views[h])) {
#pragma omp atomic write
                failed = 1;
            }
    }
    if (!failed) {
        int blocks = (rows + PROBE_BLOCK - 1) / PROBE_BLOCK, items = H * blocks;
#pragma omp parallel if ((long long)items * T * v_dk(a) > (1 << 18))
        {
            double *buf = malloc(sizeof(double) * (size_t)PROBE_BLOCK * T);
            int *los = malloc(sizeof(int) * PROBE_BLOCK);
            if (!buf || !los) {
#pragma omp atomic write
                failed = 1;
            }
#pragma omp for schedule(dynamic, 1)
            for (int it = 0; it < items; it++) {
                if (!buf || !los) continue;
                int h = it / blocks, r0 = (it % blocks) * PROBE_BLOCK;
                int n = rows - r0 < PROBE_BLOCK ? rows - r0 : PROBE_BLOCK;
                const int *ts = ps->probe_pos + r0;
                if (exact) {
                    for (int r = 0; r < n; r++) los[r] = hs_head_view_row(&views[h], ts[r], buf + (size_t)r * T);
                } else if (hs_head_view_rows(&views[h], ts, n, buf, (size_t)T, los)) {
#pragma omp atomic write
                    failed = 1;
                    continue;
                }
                for (int r = 0; r < n; r++) {
                    const double *row = buf + (size_t)r * T;
                    ent[h * rows + r0 + r] = hs_dist_entropy(row, los[r], ts[r]);
                    hit[h * rows + r0 + r] = hs_dist_topk_hit(row, los[r], ts[r], ps->span_start,
                                                              ps->span_end, ps->topk);
                }
            }
            free(buf);
            free(los);
        }
    }
    hs_blas_serial_end(blas);
    if (!failed) {
        for (int h = 0; h < H; h++) {
            double se = 0, sh = 0;
            for (int r = 0; r < rows; r++) { se += ent[h * rows + r]; sh += hit[h * rows + r]; }
            ps->heads[base + h].entropy = se / rows;
            ps->heads[base + h].hit_rate = sh / rows;
        }
    } else {
        ps->failed = 1;
    }
    if (views) for (int h = 0; h < H; h++) hs_head_view_free(&views[h]);
    free(views); free(ent); free(hit);
}
