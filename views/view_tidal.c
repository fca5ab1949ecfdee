/* Tidal view: every head as a point, normalised entropy (x) against top-k hit rate (y),
 * coloured by branch type, marker by retrieval-score bin. After a knob change the previous
 * positions (in->ghost, heads matched by index) stay as faint ghosts with arrows to where
 * each head moved, so the tide is visible. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_common.h"

typedef struct { double x, y, w, h; hs_axis ax, ay; double legend_w; } tidal_layout;

/* Retrieval-score bins: 0, (0, 0.1], (0.1, 0.5], > 0.5 */
static int retr_bin(double r) { return !(r > 0) ? 0 : r <= 0.1 ? 1 : r <= 0.5 ? 2 : 3; }
static const hs_marker bin_marker[4] = { HS_MARK_CIRCLE, HS_MARK_SQUARE, HS_MARK_TRIANGLE,
                                         HS_MARK_DIAMOND };
static const char *const bin_label[4] = { "retrieval 0", "retrieval (0, 0.1]",
                                          "retrieval (0.1, 0.5]", "retrieval > 0.5" };

static void layout(tidal_layout *L, hs_canvas *c) {
    double fs = hs_vc_font(c), ln = hs_vc_line(c), pad = hs_vc_pad(c);
    double top = hs_vc_title_height(c) + (c->is_text ? 1 : ln * 1.3);
    double left = hs_vc_axis_left_room(c) + (c->is_text ? 0 : pad);
    double bottom = hs_vc_axis_bottom_room(c, 1) + (c->is_text ? 1 : pad * 0.5);  /* text: the axis line takes a row */
    /* legend to the right when there is room, else inside the plot */
    L->legend_w = c->is_text ? (c->width >= 100 ? 22 : 0) : (c->width >= 700 ? fs * 13 : 0);
    L->x = left;
    L->y = top;
    L->w = c->width - left - L->legend_w - (c->is_text ? 1 : pad * 3);
    L->h = c->height - top - bottom;
    if (c->is_text) {
        L->x = floor(L->x);
        L->y = floor(L->y);
        L->w = floor(L->w);
        L->h = floor(L->h);
    } else if (L->w > L->h * 1.5) {                    /* keep the square-ish look of the paper */
        L->w = L->h * 1.5;
    }
    if (L->w < 4) L->w = 4;
    if (L->h < 2) L->h = 2;
    hs_axis ax = { 0, 1, L->x, L->x + L->w, 0 }, ay = { 0, 1, L->y + L->h, L->y, 0 };
    if (c->is_text) {                                  /* cell centres: keep 0 and 1 inside */
        ax.p0 = L->x + 0.25;
        ax.p1 = L->x + L->w - 0.25;
        ay.p0 = L->y + L->h - 0.125;
        ay.p1 = L->y + 0.125;
    }
    L->ax = ax;
    L->ay = ay;
}

static double clamp01(double v) { return !(v > 0) ? 0 : v > 1 ? 1 : v; }

void hs_view_tidal_draw(hs_canvas *c, const hs_view_input *in) {
    int dark = c->dark;
    double top = hs_vc_title(c, in, c->is_text && c->width < 70 ? "Tidal"
                                                                 : "Tidal: entropy vs hit rate");
    const hs_probe_result *p = in->probe;
    if (!p || p->n_heads <= 0) {
        hs_vc_placeholder(c, 0, top, c->width, c->height - top,
                          "no probe yet: press Enter to run one");
        return;
    }
    double fs = hs_vc_font(c), pad = hs_vc_pad(c);
    tidal_layout L;
    layout(&L, c);
    char ytitle[64];
    snprintf(ytitle, sizeof ytitle, c->is_text ? "hit@%d" : "top-%d hit rate", p->topk);
    hs_vc_axes(c, L.x, L.y, L.w, L.h, &L.ax, &L.ay, HS_TICK_NUM, HS_TICK_NUM, 0, 0,
               "normalised entropy", ytitle, 1);
    double ms = c->is_text ? 0.5 : fmax(6, fs * 0.75);
    hs_rgba edge = hs_vc_alpha(hs_theme_fg(dark), 0.75f);
    const hs_probe_result *g = in->ghost;
    int n_ghost = g ? (g->n_heads < p->n_heads ? g->n_heads : p->n_heads) : 0;
    c->clip(c, L.x - ms, L.y - ms, L.w + 2 * ms, L.h + 2 * ms);
    /* ghosts and arrows first, so current points sit on top */
    for (int i = 0; i < n_ghost; i++) {
        const hs_head_stat *a = &g->heads[i], *b = &p->heads[i];
        /* a ghost from another model (ratio switched) has other heads: no arrows then */
        if (a->layer != b->layer || a->mixer != b->mixer || a->head != b->head) continue;
        double x0 = hs_axis_map(&L.ax, clamp01(a->entropy)), y0 = hs_axis_map(&L.ay, clamp01(a->hit_rate));
        double x1 = hs_axis_map(&L.ax, clamp01(b->entropy)), y1 = hs_axis_map(&L.ay, clamp01(b->hit_rate));
        hs_rgba bc = hs_branch_color(b->type, dark);
        c->marker(c, x0, y0, ms * 0.8, bin_marker[retr_bin(a->retrieval)], hs_vc_alpha(bc, 0.28f),
                  hs_vc_alpha(bc, 0.45f));
        double d = hypot(x1 - x0, y1 - y0);
        /* on text cells arrows would be braille lines crossing every point: ghosts only */
        if (!c->is_text && d > ms * 1.2) {
            /* stop the arrow at the edge of the current marker */
            double u = (d - ms * 0.7) / d;
            c->arrow(c, x0, y0, x0 + (x1 - x0) * u, y0 + (y1 - y0) * u, hs_vc_alpha(bc, 0.55f),
                     c->is_text ? 1 : fmax(1, fs * 0.08));
        }
    }
    for (int i = 0; i < p->n_heads; i++) {
        const hs_head_stat *h = &p->heads[i];
        double x = hs_axis_map(&L.ax, clamp01(h->entropy)), y = hs_axis_map(&L.ay, clamp01(h->hit_rate));
        c->marker(c, x, y, ms, bin_marker[retr_bin(h->retrieval)],
                  hs_vc_alpha(hs_branch_color(h->type, dark), 0.9f), edge);
    }
    /* selected head: a ring and its name */
    if (in->sel_head >= 0 && in->sel_head < p->n_heads) {
        const hs_head_stat *h = &p->heads[in->sel_head];
        double x = hs_axis_map(&L.ax, clamp01(h->entropy)), y = hs_axis_map(&L.ay, clamp01(h->hit_rate));
        char lab[48];
        snprintf(lab, sizeof lab, "L%d.M%d.H%d", h->layer, h->mixer, h->head);
        if (!c->is_text) {
            c->marker(c, x, y, ms * 2.1, HS_MARK_CIRCLE, hs_vc_alpha(hs_vc_accent(dark), 0),
                      hs_vc_accent(dark));
            double tx = x + ms * 1.3;
            hs_align al = HS_ALIGN_LEFT;
            if (tx + c->text_width(c, lab, fs * 0.85) > L.x + L.w) { tx = x - ms * 1.3; al = HS_ALIGN_RIGHT; }
            c->text(c, tx, y - ms * 1.1, lab, fs * 0.85, hs_theme_fg(dark), al, 1);
        } else {
            double tx = floor(x) + 1;
            hs_align al = HS_ALIGN_LEFT;
            if (tx + (double)strlen(lab) > L.x + L.w) { tx = floor(x); al = HS_ALIGN_RIGHT; }
            c->text(c, tx, floor(y) + 0.5, lab, 1, hs_theme_fg(dark), al, 1);
        }
    }
    c->unclip(c);

    /* legend: branch types present, retrieval bins, ghost */
    hs_legend_item it[16];
    int n = 0, present[HS_MIXER_TYPES] = { 0 }, bins[4] = { 0 };
    for (int i = 0; i < p->n_heads; i++) {
        if ((int)p->heads[i].type >= 0 && p->heads[i].type < HS_MIXER_TYPES) present[p->heads[i].type] = 1;
        bins[retr_bin(p->heads[i].retrieval)] = 1;
    }
    for (int t = 0; t < HS_MIXER_TYPES; t++)
        if (present[t])
            it[n++] = (hs_legend_item){ hs_vc_branch_label((hs_mixer_type)t),
                                        hs_branch_color((hs_mixer_type)t, dark), 2, HS_MARK_CIRCLE, 0 };
    /* marker shapes exist on pixel canvases and in ASCII (letters); braille dots have none */
    int shapes = !c->is_text || hs_vc_ascii(c);
    if (shapes)
        for (int b = 0; b < 4; b++)
            if (bins[b])
                it[n++] = (hs_legend_item){ bin_label[b], hs_vc_muted(dark), 0, bin_marker[b], 0 };
    char ghost_lab[96];
    if (g) {
        snprintf(ghost_lab, sizeof ghost_lab, "was: %s", in->ghost_label ? in->ghost_label : "previous");
        it[n++] = (hs_legend_item){ ghost_lab, hs_vc_alpha(hs_vc_muted(dark), 0.5f), 0,
                                    HS_MARK_CIRCLE, 0 };
    }
    if (L.legend_w > 0) {
        hs_vc_legend(c, c->width - (c->is_text ? 0 : pad), L.y, it, n, L.legend_w);
    } else if (c->is_text) {
        /* compact legend row inside the top of the plot, right-aligned */
        double x = L.x + L.w;
        for (int i = n - 1; i >= 0; i--) {
            if (it[i].kind != 2) continue;
            double tw = c->text_width(c, it[i].label, 1);
            x -= tw + 2;
            if (x < L.x) break;
            c->fill_rect(c, x, L.y, 1, 1, it[i].color);
            c->text(c, x + 1, L.y + 0.5, it[i].label, 1, hs_theme_fg(dark), HS_ALIGN_LEFT, 0);
        }
        if (hs_vc_ascii(c)) {                          /* what the marker letters mean */
            const char *key = "retrieval o:0 s:<=.1 a:<=.5 d:>.5";
            c->text(c, L.x + L.w, L.y + 1.5, key, 1, hs_vc_muted(dark), HS_ALIGN_RIGHT, 0);
        }
    } else {
        double px[512], py[512], lw, lh, lx, ly;
        int np = 0;
        for (int i = 0; i < p->n_heads && np < 512; i++, np++) {
            px[np] = hs_axis_map(&L.ax, clamp01(p->heads[i].entropy));
            py[np] = hs_axis_map(&L.ay, clamp01(p->heads[i].hit_rate));
        }
        hs_vc_legend_size(c, it, n, L.w * 0.5, &lw, &lh);
        hs_vc_legend_corner(c, L.x, L.y, L.w, L.h, lw, lh, px, py, np, &lx, &ly);
        hs_vc_legend(c, lx, ly, it, n, L.w * 0.5);
    }
}

int hs_view_tidal_hit(hs_view_hit *out, hs_canvas *c, const hs_view_input *in, double x,
                      double y) {
    const hs_probe_result *p = in->probe;
    if (!p || p->n_heads <= 0) return HS_HIT_NONE;
    tidal_layout L;
    layout(&L, c);
    double best = c->is_text ? 2.5 : hs_vc_font(c) * 1.2;
    int bi = -1;
    for (int i = 0; i < p->n_heads; i++) {
        double px = hs_axis_map(&L.ax, clamp01(p->heads[i].entropy));
        double py = hs_axis_map(&L.ay, clamp01(p->heads[i].hit_rate));
        double d = c->is_text ? hypot((px - x) / 2, py - y) : hypot(px - x, py - y);
        if (d < best) { best = d; bi = i; }
    }
    if (bi < 0) return HS_HIT_NONE;
    const hs_head_stat *h = &p->heads[bi];
    out->what = HS_HIT_HEAD;
    out->head = bi;
    int k = snprintf(out->text, sizeof out->text, "L%d.M%d.H%d %s  entropy %.3f  hit %.3f  retrieval %.3f",
                     h->layer, h->mixer, h->head, hs_vc_branch_label(h->type), h->entropy,
                     h->hit_rate, h->retrieval);
    if (in->ghost && bi < in->ghost->n_heads && k > 0 && (size_t)k < sizeof out->text)
        snprintf(out->text + k, sizeof out->text - (size_t)k, "  (was %.3f, %.3f)",
                 in->ghost->heads[bi].entropy, in->ghost->heads[bi].hit_rate);
    return out->what;
}
