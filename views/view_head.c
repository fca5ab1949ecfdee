/* Head view: one head's pooled map large, with token-position axes for the (possibly zoomed)
 * window, a linear/log colour bar, the needle span marked on the key axis and the probe rows
 * on the query axis; at token scale the tokens' text runs along both axes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_common.h"

typedef struct {
    double mx, my, mw, mh;       /* map rect */
    double tok_y_w;              /* room for token text left of the map (0 = none) */
    int tok_x, tok_y;            /* token text shown along x / y */
    double cbx, cby, cbw, cbh;   /* colour bar */
} head_layout;

static const hs_pooled_map *the_map(const hs_view_input *in) {
    if (in->head_map && in->head_map->cells) return in->head_map;
    if (in->maps && in->sel_head >= 0 && in->sel_head < in->n_maps && in->maps[in->sel_head].cells)
        return &in->maps[in->sel_head];
    return NULL;
}

/* Tokens' bytes in [a, b) as printable text ("." for other bytes, nothing for specials). */
static void token_text(char *out, size_t n, const hs_probe_result *p, int a, int b, int ascii) {
    size_t k = 0;
    for (int i = a; i < b && i < p->T && k + 4 < n; i++) {
        int32_t t = p->tokens[i];
        if (t < 0 || t > 255) continue;
        if (t == ' ' && !ascii) {                      /* visible space: open box */
            memcpy(out + k, "\xe2\x90\xa3", 3);
            k += 3;
        } else out[k++] = (t > 32 && t < 127) ? (char)t : t == ' ' ? '_' : '.';
    }
    out[k] = 0;
}

static int bin_start(int lo, int hi, int bins, int i) {
    return lo + (int)((long long)i * (hi - lo) / bins);
}

/* Geometry for the given token-text flags. */
static void place(head_layout *L, hs_canvas *c, int tok_x, int tok_y) {
    double fs = hs_vc_font(c), ln = hs_vc_line(c), pad = hs_vc_pad(c);
    double top = hs_vc_title_height(c) + (c->is_text ? 1 : ln * 1.2);
    double left = hs_vc_axis_left_room(c) + (c->is_text ? 1 : pad);
    double bottom = hs_vc_axis_bottom_room(c, 1) + (c->is_text ? 1 : fs * 0.9);
    double right = c->is_text ? 9 : fs * 5.5;
    L->tok_x = tok_x;
    L->tok_y = tok_y;
    L->tok_y_w = tok_y ? c->text_width(c, "MMMMMM", fs * 0.8) : 0;
    if (tok_x) bottom += c->is_text ? 1 : ln;
    left += L->tok_y_w;
    double aw = c->width - left - right - pad, ah = c->height - top - bottom;
    if (aw < 4) aw = 4;
    if (ah < 2) ah = 2;
    if (c->is_text) {
        L->mw = floor(aw);
        L->mh = floor(ah);
    } else {
        double side = fmin(aw, ah);
        L->mw = L->mh = side;
    }
    /* centre map + colour bar in the width left over by the square map */
    if (!c->is_text && aw > L->mw) left += (aw - L->mw) / 2;
    L->mx = c->is_text ? floor(left) : left;
    L->my = c->is_text ? floor(top) : top;
    L->cbx = L->mx + L->mw + (c->is_text ? 2 : fs * 1.2);
    L->cby = L->my;
    L->cbw = c->is_text ? 2 : fs * 1.1;
    L->cbh = L->mh;
}

/* Token text along an axis only at token scale: when every bin has room for its tokens
 * (one character each along x, one line per bin along y), so no bin goes unlabelled. */
static void layout(head_layout *L, hs_canvas *c, const hs_view_input *in, const hs_pooled_map *m) {
    memset(L, 0, sizeof *L);
    place(L, c, 0, 0);
    const hs_probe_result *p = in->probe;
    if (!(p && p->tokens && m->s1 <= p->T && m->t1 <= p->T && m->s0 >= 0 && m->t0 >= 0)) return;
    double fs = hs_vc_font(c);
    double tpb_s = (double)(m->s1 - m->s0) / m->bins_s;
    double char_w = c->is_text ? 1 : c->text_width(c, "e", fs * 0.8) * 1.15;
    double line_h = c->is_text ? 1e9 : fs * 0.95;       /* no room for a y column on cells */
    head_layout T = *L;
    int tx = L->mw / m->bins_s >= ceil(tpb_s) * char_w, ty = L->mh / m->bins_t >= line_h;
    if (!tx && !ty) return;
    place(&T, c, tx, ty);                              /* the map shrinks a little: check again */
    tx = tx && T.mw / m->bins_s >= ceil(tpb_s) * char_w;
    ty = ty && T.mh / m->bins_t >= line_h;
    place(L, c, tx, ty);
}

static double tok_to_x(const head_layout *L, const hs_pooled_map *m, double s) {
    return L->mx + (s - m->s0) / (double)(m->s1 - m->s0) * L->mw;
}
static double tok_to_y(const head_layout *L, const hs_pooled_map *m, double t) {
    return L->my + (t - m->t0) / (double)(m->t1 - m->t0) * L->mh;
}

static void head_title(char *out, size_t n, const hs_view_input *in, const hs_pooled_map *m) {
    const hs_head_stat *st = in->probe && in->sel_head >= 0 && in->sel_head < in->probe->n_heads
                                 ? &in->probe->heads[in->sel_head] : NULL;
    int l = m ? m->head.layer : st ? st->layer : 0, mi = m ? m->head.mixer : st ? st->mixer : 0,
        h = m ? m->head.head : st ? st->head : 0;
    hs_mixer_type t = m ? m->type : st ? st->type : HS_NOPE;
    if (st)
        snprintf(out, n, "Head L%d.M%d.H%d %s  entropy %.2f  hit %.2f", l, mi, h,
                 hs_vc_branch_label(t), st->entropy, st->hit_rate);
    else snprintf(out, n, "Head L%d.M%d.H%d %s", l, mi, h, hs_vc_branch_label(t));
}

void hs_view_head_draw(hs_canvas *c, const hs_view_input *in) {
    int dark = c->dark;
    const hs_pooled_map *m = the_map(in);
    char title[160];
    head_title(title, sizeof title, in, m);
    double top = hs_vc_title(c, in, m || in->probe ? title : "Head");
    if (!m || m->bins_t <= 0 || m->bins_s <= 0 || m->t1 <= m->t0 || m->s1 <= m->s0) {
        hs_vc_placeholder(c, 0, top, c->width, c->height - top,
                          "no map for this head yet: press Enter to run a probe");
        return;
    }
    double fs = hs_vc_font(c), ln = hs_vc_line(c);
    hs_rgba fg = hs_theme_fg(dark), mu = hs_vc_muted(dark);
    head_layout L;
    layout(&L, c, in, m);
    double vmax = 0;
    hs_vc_heatmap(c, L.mx, L.my, L.mw, L.mh, m, in->log_color, &vmax);

    /* axes: keys along x, queries down y */
    hs_axis ax = { m->s0, m->s1, L.mx, L.mx + L.mw, 0 };
    hs_axis ay = { m->t0, m->t1, L.my, L.my + L.mh, 0 };
    double tok_room = L.tok_x ? (c->is_text ? 1 : ln) : 0;
    double band = c->is_text ? 1 : fs * 0.9;            /* needle band below the map */
    /* draw the x axis lower, below the needle band and token row */
    if (!c->is_text) c->stroke_rect(c, L.mx, L.my, L.mw, L.mh, fg, 1);
    hs_vc_axes(c, L.mx, L.my, L.mw, L.mh + band + tok_room, &ax, NULL, HS_TICK_TOKENS, 0, 1, 0,
               c->is_text ? "key s" : "key position s (tokens)", NULL, HS_AXES_NOFRAME);
    hs_vc_axes(c, L.mx - L.tok_y_w, L.my, L.mw + L.tok_y_w, L.mh, NULL, &ay, 0, HS_TICK_TOKENS, 0,
               1, NULL, c->is_text ? "query t" : "query position t (tokens)", HS_AXES_NOFRAME);

    /* needle span on the key axis */
    const hs_probe_result *p = in->probe;
    hs_rgba needle = hs_branch_color(HS_NOPE, dark);
    if (p && p->span_start >= 0 && p->span_end > p->span_start) {
        double a = fmax(p->span_start, m->s0), b = fmin(p->span_end, m->s1);
        if (b > a) {
            double x0 = tok_to_x(&L, m, a), x1 = tok_to_x(&L, m, b);
            if (c->is_text) {
                c->fill_rect(c, x0, L.my + L.mh, fmax(1, x1 - x0), 1, needle);
                double lx = x1 + 1;
                if (lx + 6 > L.mx + L.mw) lx = x0 - 7;
                c->text(c, lx, L.my + L.mh + 0.5, "needle", 1, needle, HS_ALIGN_LEFT, 1);
            } else {
                double w = fmax(2, x1 - x0);
                c->fill_rect(c, x0, L.my + L.mh + fs * 0.25, w, fs * 0.45, needle);
                hs_rgba edge = hs_vc_alpha(dark ? hs_theme_fg(dark) : hs_theme_bg(dark), 0.8f);
                c->line(c, x0, L.my, x0, L.my + L.mh, edge, 0.8);
                c->line(c, x0 + w, L.my, x0 + w, L.my + L.mh, edge, 0.8);
                double lx = x0 + w + fs * 0.3;
                const char *lab = "needle";
                double tw = c->text_width(c, lab, fs * 0.8);
                hs_align al = HS_ALIGN_LEFT;
                if (lx + tw > L.mx + L.mw) { lx = x0 - fs * 0.3; al = HS_ALIGN_RIGHT; }
                c->text(c, lx, L.my + L.mh + fs * 0.48, lab, fs * 0.8, needle, al, 1);
            }
        }
    }
    /* probe rows on the query axis */
    if (p && p->n_probe > 0 && p->probe_pos) {
        double bx = c->is_text ? L.mx - 1 : L.mx - L.tok_y_w - fs * 0.55;
        double bw = c->is_text ? 1 : fs * 0.35;
        int shown = 0;
        double first_y = 0, last_y = 0;
        for (int i = 0; i < p->n_probe; i++) {
            int t = p->probe_pos[i];
            if (t < m->t0 || t >= m->t1) continue;
            double y0 = tok_to_y(&L, m, t), y1 = tok_to_y(&L, m, t + 1);
            if (c->is_text) c->fill_rect(c, bx, floor(y0), 1, 1, needle);
            else c->fill_rect(c, bx, y0, bw, fmax(1.2, y1 - y0), needle);
            if (!shown) first_y = y0;
            last_y = y0;
            shown++;
        }
        /* text: "probe" under the marked column when the rows reach the map's bottom (they
         * are the last tokens); the tick labels own the rows beside the axis */
        if (shown && c->is_text && last_y >= L.my + L.mh - 3 && bx >= 5)
            c->text(c, bx, L.my + L.mh + 0.5, "probe", 1, needle, HS_ALIGN_RIGHT, 1);
        if (shown && !c->is_text)
            c->text(c, bx - fs * 0.2, first_y - fs * 0.6, "probe", fs * 0.8, needle,
                    HS_ALIGN_RIGHT, 1);
    }
    /* token text along the axes */
    if (L.tok_x) {
        int ascii = c->is_text;
        double last = -1e9, yy = L.my + L.mh + band + (c->is_text ? 0.5 : ln * 0.5);
        for (int i = 0; i < m->bins_s; i++) {
            int a = bin_start(m->s0, m->s1, m->bins_s, i), b = bin_start(m->s0, m->s1, m->bins_s, i + 1);
            char tt[64];
            token_text(tt, sizeof tt, p, a, b, ascii);
            double cx = tok_to_x(&L, m, (a + b) / 2.0);
            double tw = c->text_width(c, tt, fs * 0.8);
            if (cx - tw / 2 < last) continue;
            c->text(c, cx, yy, tt, fs * 0.8, mu, HS_ALIGN_CENTER, 0);
            last = cx + tw / 2 + (c->is_text ? 0 : fs * 0.15);
        }
    }
    if (L.tok_y) {
        double last = -1e9;
        for (int i = 0; i < m->bins_t; i++) {
            int a = bin_start(m->t0, m->t1, m->bins_t, i), b = bin_start(m->t0, m->t1, m->bins_t, i + 1);
            double y0 = tok_to_y(&L, m, a), y1 = tok_to_y(&L, m, b);
            double cy = (y0 + y1) / 2;
            if (cy - fs * 0.5 < last) continue;
            char tt[64], fit[64];
            token_text(tt, sizeof tt, p, a, b, 0);
            hs_vc_fit(c, fit, sizeof fit, tt, fs * 0.8, L.tok_y_w - fs * 0.3);
            c->text(c, L.mx - fs * 0.2, cy, fit, fs * 0.8, mu, HS_ALIGN_RIGHT, 0);
            last = cy + fs * 0.5;
        }
    }
    /* colour bar */
    hs_vc_colorbar(c, L.cbx, L.cby, L.cbw, L.cbh, vmax, in->log_color, HS_VC_LOG_DECADES,
                   in->log_color ? "log" : "linear");
    /* window caption under the title */
    char cap[160], a0[16], a1[16], b0[16], b1[16];
    hs_vc_fmt_tokens(a0, sizeof a0, m->t0);
    hs_vc_fmt_tokens(a1, sizeof a1, m->t1);
    hs_vc_fmt_tokens(b0, sizeof b0, m->s0);
    hs_vc_fmt_tokens(b1, sizeof b1, m->s1);
    int zoomed = m->t0 > 0 || m->s0 > 0 || m->t1 < m->T || m->s1 < m->T;
    if (c->is_text)
        snprintf(cap, sizeof cap, "%s t %s-%s s %s-%s %dx%d %s", zoomed ? "zoom" : "", a0, a1, b0,
                 b1, m->bins_t, m->bins_s, m->agg == HS_POOL_MAX ? "max" : "mean");
    else
        snprintf(cap, sizeof cap, "%squeries %s-%s, keys %s-%s, %d x %d bins, %s-pooled",
                 zoomed ? "zoomed: " : "", a0, a1, b0, b1, m->bins_t, m->bins_s,
                 m->agg == HS_POOL_MAX ? "max" : "mean");
    char fit[160];
    double capx = c->is_text ? L.mx + 12 : L.mx + L.mw * 0.35;
    hs_vc_fit(c, fit, sizeof fit, cap, fs * 0.85, L.mx + L.mw - capx);
    c->text(c, L.mx + L.mw, c->is_text ? L.my - 0.5 : L.my - ln * 0.7, fit, fs * 0.85, mu,
            HS_ALIGN_RIGHT, 0);
}

int hs_view_head_rect(hs_canvas *c, const hs_view_input *in, double *x, double *y, double *w,
                      double *h) {
    const hs_pooled_map *m = the_map(in);
    if (!m || m->bins_t <= 0 || m->bins_s <= 0 || m->t1 <= m->t0 || m->s1 <= m->s0) return 0;
    head_layout L;
    layout(&L, c, in, m);
    *x = L.mx;
    *y = L.my;
    *w = L.mw;
    *h = L.mh;
    return 1;
}

int hs_view_head_hit(hs_view_hit *out, hs_canvas *c, const hs_view_input *in, double x,
                     double y) {
    const hs_pooled_map *m = the_map(in);
    double mx, my, mw, mh;
    if (!hs_view_head_rect(c, in, &mx, &my, &mw, &mh)) return HS_HIT_NONE;
    if (x < mx || y < my || x >= mx + mw || y >= my + mh) return HS_HIT_NONE;
    int bs = (int)((x - mx) / mw * m->bins_s), bt = (int)((y - my) / mh * m->bins_t);
    if (bs >= m->bins_s) bs = m->bins_s - 1;
    if (bt >= m->bins_t) bt = m->bins_t - 1;
    int t0 = bin_start(m->t0, m->t1, m->bins_t, bt), t1 = bin_start(m->t0, m->t1, m->bins_t, bt + 1);
    int s0 = bin_start(m->s0, m->s1, m->bins_s, bs), s1 = bin_start(m->s0, m->s1, m->bins_s, bs + 1);
    out->what = HS_HIT_CELL;
    out->head = in->sel_head;
    out->t = t0;
    out->s = s0;
    float v = m->cells[(size_t)bt * m->bins_s + bs];
    char tq[40] = "", sq[40] = "";
    if (t1 - t0 > 1) snprintf(tq, sizeof tq, "t=%d..%d", t0, t1 - 1);
    else snprintf(tq, sizeof tq, "t=%d", t0);
    if (s1 - s0 > 1) snprintf(sq, sizeof sq, "s=%d..%d", s0, s1 - 1);
    else snprintf(sq, sizeof sq, "s=%d", s0);
    char tok[80] = "";
    const hs_probe_result *p = in->probe;
    if (p && p->tokens && t1 - t0 == 1 && s1 - s0 == 1 && t0 < p->T && s0 < p->T) {
        char a[16], b[16];
        token_text(a, sizeof a, p, t0, t1, 1);
        token_text(b, sizeof b, p, s0, s1, 1);
        snprintf(tok, sizeof tok, "  '%s' -> '%s'", a, b);
    }
    if (isfinite(v))
        snprintf(out->text, sizeof out->text, "%s %s  %s %.4g%s", tq, sq,
                 m->agg == HS_POOL_MAX ? "max" : "mean", v, tok);
    else snprintf(out->text, sizeof out->text, "%s %s  no causal entry (s > t)%s", tq, sq, tok);
    return out->what;
}
