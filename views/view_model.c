/* Model view: the layer layout as coloured blocks (one row per layer, a block per mixer sized
 * by its heads, LH/HH, branch type, heads, windows), the parameter count, and cache/state
 * memory against context length for this model (log-log). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_common.h"
#include "../engine/model.h"

/* The same heads, every one full causal attention (NoPE, kv heads = heads): the reference the
 * hybrid's memory saving is measured against. NULL when out of memory. */
static hs_config *all_full_attention(const hs_config *cfg) {
    hs_config *f = malloc(sizeof *f);
    if (!f) return NULL;
    *f = *cfg;
    for (int l = 0; l < f->num_layers; l++)
        for (int k = 0; k < f->layers[l].n_mixers; k++) {
            hs_mixer_config *m = &f->layers[l].mixers[k];
            m->type = HS_NOPE;
            m->num_kv_heads = m->num_heads;
            m->window = 0;
            m->use_short_conv = 0;
        }
    return f;
}

static long long total_cache(const hs_config *cfg, long long T) {
    long long b = 0;
    for (int l = 0; l < cfg->num_layers; l++) b += hs_layer_cache_bytes(cfg, l, T);
    return b;
}

/* Effective window shown for a mixer: the knob override where one applies, else its own. */
static int shown_window(const hs_mixer_config *m, const hs_knobs *k) {
    if (m->type == HS_SWA) return k && k->swa_window > 0 ? k->swa_window : m->window;
    if (m->type == HS_ROPE) return k && k->rope_window > 0 ? k->rope_window : 0;
    return 0;
}

static void fmt_count(char *out, size_t n, long long v) {
    if (v >= 1000000000LL) snprintf(out, n, "%.2fB", v / 1e9);
    else if (v >= 1000000) snprintf(out, n, "%.2fM", v / 1e6);
    else if (v >= 1000) snprintf(out, n, "%.1fK", v / 1e3);
    else snprintf(out, n, "%lld", v);
}

static void draw_layers(hs_canvas *c, const hs_view_input *in, double x, double y, double w,
                        double h) {
    const hs_config *cfg = in->cfg;
    int dark = c->dark;
    double fs = hs_vc_font(c);
    double label_w = c->is_text ? 7 : fs * 4.2;
    int n = cfg->num_layers;
    double row = c->is_text ? 1 : fmin(fs * 3.2, h / (n > 0 ? n : 1));
    int shown = (int)(h / row);
    if (shown > n) shown = n;
    if (shown < n && shown > 0) shown--;              /* keep a line for "+N more" */
    double bx = x + label_w, bw = w - label_w;
    char buf[96], fit[96];
    for (int l = 0; l < shown; l++) {
        const hs_layer_config *L = &cfg->layers[l];
        double ry = y + l * row, cy = c->is_text ? ry + 0.5 : ry + row / 2;
        snprintf(buf, sizeof buf, "L%d %s", l, L->n_mixers == 2 ? "HH" : "LH");
        c->text(c, x, cy, buf, fs * 0.9, hs_theme_fg(dark), HS_ALIGN_LEFT, 0);
        int heads = 0;
        for (int k = 0; k < L->n_mixers; k++) heads += L->mixers[k].num_heads;
        double cx = bx;
        for (int k = 0; k < L->n_mixers; k++) {
            const hs_mixer_config *m = &L->mixers[k];
            double mw = heads > 0 ? bw * m->num_heads / heads : bw;
            if (c->is_text) mw = k == L->n_mixers - 1 ? bx + bw - cx : floor(mw);
            hs_rgba col = hs_branch_color(m->type, dark);
            double gap = c->is_text ? 0 : fmax(1.5, fs * 0.15);
            if (c->is_text) c->fill_rect(c, cx, ry, mw - (k < L->n_mixers - 1), 1, col);
            else c->fill_rect(c, cx + gap / 2, ry + gap, mw - gap, row - 2 * gap, col);
            int win = shown_window(m, in->knobs);
            char ws[24] = "";
            if (win > 0) {
                char t[16];
                hs_vc_fmt_tokens(t, sizeof t, win);
                snprintf(ws, sizeof ws, " w=%s", t);
            }
            if (m->type == HS_GLA || m->type == HS_GDN) {
                if (in->knobs && in->knobs->swla != HS_SWLA_OFF) {
                    char t[16];
                    int W = in->knobs->swla_window > 0 ? in->knobs->swla_window : cfg->train_context;
                    hs_vc_fmt_tokens(t, sizeof t, W);
                    snprintf(ws, sizeof ws, " swla=%s", t);
                }
            }
            if (m->type == HS_NOPE && in->knobs && in->knobs->log_scale) snprintf(ws, sizeof ws, " log");
            snprintf(buf, sizeof buf, "%s %dh%s", hs_vc_branch_label(m->type), m->num_heads, ws);
            double tfs = fs * 0.85;
            /* text: the label stays inside its block (a column is left between blocks) */
            double room = mw - (c->is_text ? (k < L->n_mixers - 1) : fs * 0.6);
            if (c->text_width(c, buf, tfs) > room)
                snprintf(buf, sizeof buf, "%s %d", hs_vc_branch_label(m->type), m->num_heads);
            hs_vc_fit(c, fit, sizeof fit, buf, tfs, room);
            hs_rgba tc = { 0.06f, 0.06f, 0.06f, 1 };
            if (m->type == HS_ROPE && !dark) tc = (hs_rgba){ 1, 1, 1, 1 };
            c->text(c, cx + (c->is_text ? 0 : fs * 0.35), cy, fit, tfs, tc, HS_ALIGN_LEFT, 0);
            cx += mw;
        }
    }
    if (shown < n) {
        snprintf(buf, sizeof buf, "+%d more layers", n - shown);
        c->text(c, x, c->is_text ? y + shown * row + 0.5 : y + shown * row + row / 2, buf,
                fs * 0.85, hs_vc_muted(dark), HS_ALIGN_LEFT, 0);
    }
}

void hs_view_model_draw(hs_canvas *c, const hs_view_input *in) {
    int dark = c->dark;
    double top = hs_vc_title(c, in, c->is_text && c->width < 70 ? "Model" : "Model: layers and memory");
    const hs_config *cfg = in->cfg;
    if (!cfg || cfg->num_layers <= 0) {
        hs_vc_placeholder(c, 0, top, c->width, c->height - top, "no model loaded");
        return;
    }
    double fs = hs_vc_font(c), ln = hs_vc_line(c), pad = hs_vc_pad(c);
    hs_rgba fg = hs_theme_fg(dark), mu = hs_vc_muted(dark);
    double y0 = top + (c->is_text ? 0 : pad);
    double left_w = c->is_text ? floor(c->width * 0.48) : c->width * 0.46;
    double lx = c->is_text ? 0 : pad * 1.5;
    c->text(c, lx, c->is_text ? y0 + 0.5 : y0 + ln * 0.5, "layers (block width = heads)", fs * 0.9,
            mu, HS_ALIGN_LEFT, 0);
    draw_layers(c, in, lx, y0 + (c->is_text ? 1 : ln * 1.1), left_w - lx,
                c->height - y0 - (c->is_text ? 1 : ln * 1.1) - (c->is_text ? 0 : pad));

    /* facts */
    double rx = left_w + (c->is_text ? 2 : fs * 2), rw = c->width - rx - (c->is_text ? 0 : pad * 1.5);
    char buf[160], a[32], b[32];
    int biased = 0, nope = 0, hh = 0;
    hs_config_total_heads(cfg, &biased, &nope);
    for (int l = 0; l < cfg->num_layers; l++) hh += cfg->layers[l].n_mixers == 2;
    fmt_count(a, sizeof a, hs_config_param_count(cfg));
    const char *lines[5];
    char l1[160], l2[160], l3[160], l4[160];
    snprintf(l1, sizeof l1, "parameters %s", a);
    snprintf(l2, sizeof l2, "%d layers (%d LH, %d HH), d=%d", cfg->num_layers, cfg->num_layers - hh,
             hh, cfg->hidden_size);
    snprintf(l3, sizeof l3, "heads: %d positional/linear, %d NoPE", biased, nope);
    hs_vc_fmt_tokens(b, sizeof b, cfg->train_context);
    snprintf(l4, sizeof l4, "vocab %d, ffn %d, L0=%s", cfg->vocab_size, cfg->intermediate_size, b);
    lines[0] = l1; lines[1] = l2; lines[2] = l3; lines[3] = l4;
    int nl = 4;
    /* the checkpoint's training record, where it has one: whether ratio siblings saw the same
     * steps and data is what makes them comparable */
    char l5[160];
    if (hs_training_describe(l5, sizeof l5, &cfg->training)) lines[nl++] = l5;
    double ty = c->is_text ? y0 + 0.5 : y0 + ln * 0.5;
    for (int i = 0; i < nl; i++) {
        hs_vc_fit(c, buf, sizeof buf, lines[i], fs * 0.9, rw);
        c->text(c, rx, ty + i * (c->is_text ? 1 : ln * 1.05), buf, fs * (i == 0 ? 1.0 : 0.9),
                i == 0 ? fg : mu, HS_ALIGN_LEFT, i == 0);
    }

    /* cache / state memory against context length */
    double py = ty + nl * (c->is_text ? 1 : ln * 1.05) + (c->is_text ? 1 : ln * 1.6);
    double left_room = c->is_text ? 9 : fs * 5;
    double px = rx + left_room, pw = c->width - px - (c->is_text ? 1 : pad * 3);
    double ph = c->height - py - hs_vc_axis_bottom_room(c, 1) - (c->is_text ? 0 : pad);
    if (c->is_text) { px = floor(px); py = floor(py); pw = floor(pw); ph = floor(ph); }
    if (ph < 3 || pw < 8) return;
    long long tmax = in->max_length > 0 ? in->max_length : 65536;
    if (tmax < (long long)cfg->train_context * 4) tmax = (long long)cfg->train_context * 4;
    if (in->length > tmax) tmax = in->length;
    long long tmin = 256 < tmax / 4 ? 256 : tmax / 4;
    if (tmin < 1) tmin = 1;
    enum { N = 64 };
    double xs[N], ys[N], yf[N], ymin = INFINITY, ymax = 0;
    hs_config *full = all_full_attention(cfg);
    for (int i = 0; i < N; i++) {
        xs[i] = exp(log((double)tmin) + (log((double)tmax) - log((double)tmin)) * i / (N - 1));
        ys[i] = (double)total_cache(cfg, (long long)llround(xs[i]));
        yf[i] = full ? (double)total_cache(full, (long long)llround(xs[i])) : 0;
        if (ys[i] > 0) { ymin = fmin(ymin, ys[i]); ymax = fmax(ymax, ys[i]); }
        if (yf[i] > 0) { ymin = fmin(ymin, yf[i]); ymax = fmax(ymax, yf[i]); }
    }
    free(full);
    if (!(ymax > 0)) return;
    if (ymax / ymin < 10) { ymin = ymax / 10; }
    hs_axis ax = { (double)tmin, (double)tmax, px, px + pw, 1 };
    hs_axis ay = { ymin / 1.3, ymax * 1.3, py + ph, py, 1 };
    hs_vc_axes(c, px, py, pw, ph, &ax, &ay, HS_TICK_TOKENS, HS_TICK_BYTES, 1, 1, "context length",
               c->is_text ? "cache+state" : "KV cache + recurrent state (fp32)", 1);
    hs_rgba col = hs_branch_color(HS_ROPE, dark);
    /* reference: every head full attention, dashed (skipped when it is this model) */
    int differs = 0;
    for (int i = 0; i < N; i++) differs |= fabs(yf[i] - ys[i]) > 0.5;
    if (differs) {
        for (int i = 1; i < N; i++)
            if (c->is_text || i % 2)
                c->line(c, hs_axis_map(&ax, xs[i - 1]), hs_axis_map(&ay, yf[i - 1]),
                        hs_axis_map(&ax, xs[i]), hs_axis_map(&ay, yf[i]), hs_vc_muted(dark),
                        c->is_text ? 1 : fmax(1.2, fs * 0.1));
        hs_legend_item it[2] = { { "this model", col, 1, HS_MARK_CIRCLE, 0 },
                                 { "all heads full attention", hs_vc_muted(dark), 1, HS_MARK_CIRCLE, 1 } };
        /* in the corner the curves leave free (both rise, so usually bottom right) */
        double lw, lh, cx[2 * N], cy[2 * N], xr, yt;
        hs_vc_legend_size(c, it, 2, pw * 0.6, &lw, &lh);
        for (int i = 0; i < N; i++) {
            cx[i] = cx[N + i] = hs_axis_map(&ax, xs[i]);
            cy[i] = hs_axis_map(&ay, ys[i]);
            cy[N + i] = hs_axis_map(&ay, yf[i]);
        }
        hs_vc_legend_corner(c, px, py, pw, ph, lw, lh, cx, cy, 2 * N, &xr, &yt);
        hs_vc_legend(c, xr, yt, it, 2, pw * 0.6);
    }
    for (int i = 1; i < N; i++)
        c->line(c, hs_axis_map(&ax, xs[i - 1]), hs_axis_map(&ay, ys[i - 1]), hs_axis_map(&ax, xs[i]),
                hs_axis_map(&ay, ys[i]), col, c->is_text ? 1 : fmax(2, fs * 0.16));
    if (in->length > 0) {
        double v = (double)total_cache(cfg, in->length);
        double mx = hs_axis_map(&ax, in->length), my = hs_axis_map(&ay, v);
        hs_vc_fmt_bytes(a, sizeof a, v);
        hs_vc_fmt_tokens(b, sizeof b, in->length);
        snprintf(buf, sizeof buf, "%s at L=%s", a, b);
        c->marker(c, mx, my, c->is_text ? 1 : fs * 0.8, HS_MARK_CIRCLE, hs_branch_color(HS_NOPE, dark),
                  fg);
        double tw = c->text_width(c, buf, fs * 0.85);
        double tx = mx + (c->is_text ? 2 : fs * 0.7);
        hs_align al = HS_ALIGN_LEFT;
        if (tx + tw > px + pw) { tx = mx - (c->is_text ? 2 : fs * 0.7); al = HS_ALIGN_RIGHT; }
        c->text(c, tx, c->is_text ? floor(my) + 0.5 + (my > py + ph / 2 ? -1 : 1) : my - fs * 0.9,
                buf, fs * 0.85, fg, al, 1);
    }
}
