/* Perplexity view: PPL by position on a log position axis, one curve per result (pinned
 * knob settings first, the live one last and drawn heavier), with L0 marked. */
#include <math.h>
#include <stdio.h>

#include "view_common.h"

static hs_rgba curve_color(int i, int dark) {
    /* Okabe-Ito order, skipping yellow (weak on white) */
    static const unsigned light[] = { 0x0072b2, 0xe69f00, 0x009e73, 0xcc79a7, 0xd55e00, 0x56b4e9 };
    static const unsigned darkp[] = { 0x56b4e9, 0xe69f00, 0x009e73, 0xcc79a7, 0xd55e00, 0xf0e442 };
    unsigned v = (dark ? darkp : light)[i % 6];
    hs_rgba c = { ((v >> 16) & 255) / 255.0f, ((v >> 8) & 255) / 255.0f, (v & 255) / 255.0f, 1 };
    return c;
}

static double bucket_x(const hs_ppl_result *r, int b) {
    double a = r->bucket_start[b] < 1 ? 1 : r->bucket_start[b];
    double e = r->bucket_end[b] < a + 1 ? a + 1 : r->bucket_end[b];
    return sqrt(a * e);                                /* geometric midpoint on a log axis */
}

void hs_view_ppl_draw(hs_canvas *c, const hs_view_input *in) {
    int dark = c->dark;
    double top = hs_vc_title(c, in, c->is_text && c->width < 70 ? "PPL" : "Perplexity by position");
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    int any = 0;
    for (int k = 0; k < in->n_ppl && in->ppl; k++) {
        const hs_ppl_result *r = &in->ppl[k];
        for (int b = 0; b < r->n_buckets; b++) {
            if (!isfinite(r->ppl[b]) || r->ppl[b] <= 0) continue;
            double x = bucket_x(r, b);
            xmin = fmin(xmin, x / 1.3);
            xmax = fmax(xmax, x * 1.3);
            ymin = fmin(ymin, r->ppl[b]);
            ymax = fmax(ymax, r->ppl[b]);
            any = 1;
        }
    }
    if (!any) {
        hs_vc_placeholder(c, 0, top, c->width, c->height - top,
                          "no perplexity yet: press Enter to run (p pins a curve)");
        return;
    }
    double fs = hs_vc_font(c), ln = hs_vc_line(c), pad = hs_vc_pad(c);
    double x = hs_vc_axis_left_room(c) + (c->is_text ? 0 : pad);
    double y = top + (c->is_text ? 1 : ln * 1.3);
    double w = c->width - x - (c->is_text ? 1 : pad * 3);
    double h = c->height - y - hs_vc_axis_bottom_room(c, 1) - (c->is_text ? 1 : pad * 0.5);  /* text: the axis line takes a row */
    if (c->is_text) { x = floor(x); y = floor(y); w = floor(w); h = floor(h); }
    if (xmax <= xmin) xmax = xmin * 2;
    /* y: log when the curves span more than a factor of 8 */
    int ylog = ymax / ymin > 8;
    double y0 = ylog ? ymin / 1.15 : fmax(0, ymin - (ymax - ymin) * 0.08);
    double y1 = ylog ? ymax * 1.15 : ymax + (ymax - ymin) * 0.08 + 1e-9;
    if (!(y1 > y0)) y1 = y0 + 1;
    hs_axis ax = { xmin, xmax, x, x + w, 1 }, ay = { y0, y1, y + h, y, ylog };
    /* what the curves were measured on (the last curve's corpus: the current run) */
    char xlabel[160] = "position (tokens)";
    const hs_ppl_result *cur = &in->ppl[in->n_ppl - 1];
    if (cur->corpus[0])
        snprintf(xlabel, sizeof xlabel, "position (tokens)  -  %s, %d document%s", cur->corpus, cur->n_docs,
                 cur->n_docs == 1 ? "" : "s");
    hs_vc_axes(c, x, y, w, h, &ax, &ay, HS_TICK_TOKENS, HS_TICK_NUM, 1, 0, xlabel,
               ylog ? "perplexity (log)" : "perplexity", 1);
    /* L0 (its label is kept clear of the legend below) */
    double l0x = NAN, l0y = NAN;
    if (in->cfg && in->cfg->train_context > xmin && in->cfg->train_context < xmax) {
        double px = hs_axis_map(&ax, in->cfg->train_context);
        hs_rgba mu = hs_vc_muted(dark);
        if (c->is_text) {
            c->line(c, floor(px) + 0.5, y, floor(px) + 0.5, y + h, hs_vc_grid(dark), 1);
            c->text(c, floor(px) + 1, y + 0.5, "L0", 1, mu, HS_ALIGN_LEFT, 0);
            l0x = floor(px) + 1.5;
            l0y = y + 0.5;
        } else {
            for (double yy = y; yy < y + h; yy += fs * 0.8)
                c->line(c, px, yy, px, fmin(yy + fs * 0.4, y + h), mu, 1);
            c->text(c, px - fs * 0.3, y + h - ln * 0.5, "L0 (train context)", fs * 0.8, mu, HS_ALIGN_RIGHT, 0);
            l0x = px - fs * 2;
            l0y = y + h - ln * 0.5;
        }
    }
    c->clip(c, x, y, w, h);
    enum { MAXP = 512 };
    double ptx[MAXP], pty[MAXP];
    int np = 0;
    hs_legend_item it[16];
    char labels[16][160];
    int ni = 0;
    for (int k = 0; k < in->n_ppl; k++) {
        const hs_ppl_result *r = &in->ppl[k];
        int live = k == in->n_ppl - 1;
        hs_rgba col = curve_color(k, dark);
        double lw = c->is_text ? 1 : live ? fmax(2, fs * 0.18) : fmax(1.4, fs * 0.12);
        double px = 0, py = 0;
        int have = 0;
        for (int b = 0; b < r->n_buckets; b++) {
            if (!isfinite(r->ppl[b]) || r->ppl[b] <= 0) { have = 0; continue; }
            double qx = hs_axis_map(&ax, bucket_x(r, b)), qy = hs_axis_map(&ay, r->ppl[b]);
            if (have) c->line(c, px, py, qx, qy, col, lw);
            for (int s = 0; s <= 4 && have && np < MAXP; s++) {   /* the segment, for the legend */
                ptx[np] = px + (qx - px) * s / 4;
                pty[np++] = py + (qy - py) * s / 4;
            }
            if (!c->is_text) c->marker(c, qx, qy, lw * 2.2, HS_MARK_CIRCLE, col, col);
            else if (!have) c->marker(c, qx, qy, 0.5, HS_MARK_CIRCLE, col, col);
            px = qx;
            py = qy;
            have = 1;
        }
        if (ni < 16) {
            snprintf(labels[ni], sizeof labels[ni], "%s, ppl %.3g", r->label[0] ? r->label : live ? "current" : "pinned",
                     r->overall);
            it[ni] = (hs_legend_item){ labels[ni], col, 1, HS_MARK_CIRCLE, 0 };
            ni++;
        }
    }
    c->unclip(c);
    for (int s = 0; s < 8 && isfinite(l0x) && np < MAXP; s++) {   /* weigh the L0 label */
        ptx[np] = l0x;
        pty[np++] = l0y;
    }
    double lw, lh, lx, ly;
    hs_vc_legend_size(c, it, ni, w * 0.6, &lw, &lh);
    hs_vc_legend_corner(c, x, y, w, h, lw, lh, ptx, pty, np, &lx, &ly);
    hs_vc_legend(c, lx, ly, it, ni, w * 0.6);
}
