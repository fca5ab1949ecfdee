/* Heads view: small multiples of every head's pooled map, layers as rows and heads as columns
 * (an HH layer shows its biased mixer's heads, then its NoPE heads), each tagged with its
 * branch type, entropy and hit rate; the selected head is outlined. When the grid does not
 * fit, a window of rows/columns around the selected head is shown. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_common.h"

typedef struct {
    int n;                       /* heads */
    int n_layers, max_cols;      /* grid size */
    int row0, rows, col0, cols;  /* visible window */
    double x0, y0;               /* top-left of the grid */
    double cw, ch;               /* one cell: map + tag */
    double map_w, map_h, tag_h;
    double label_w;
    double legend_y;
    int tags;                    /* branch/entropy/hit tags under the maps */
    int beside;                  /* tags to the right of each map (wide canvases) */
    double tag_w;
    int wrap;                    /* text cells: layers side by side in one grid row (>1 when
                                    the whole model fits and that gives bigger maps) */
    double group_gap;            /* extra space between those layers */
} heads_layout;

static int head_layer(const hs_view_input *in, int i) {
    if (in->probe && i < in->probe->n_heads) return in->probe->heads[i].layer;
    return in->maps[i].head.layer;
}

static int head_count(const hs_view_input *in) {
    if (in->probe && in->probe->n_heads > 0) return in->probe->n_heads;
    return in->maps ? in->n_maps : 0;
}

static hs_mixer_type head_type(const hs_view_input *in, int i) {
    if (in->probe && i < in->probe->n_heads) return in->probe->heads[i].type;
    return in->maps[i].type;
}

/* Column of head i within its layer (heads are layer-major). */
static int head_col(const hs_view_input *in, int i) {
    int l = head_layer(in, i), k = 0;
    for (int j = i - 1; j >= 0 && head_layer(in, j) == l; j--) k++;
    return k;
}

/* The map of head i, when the maps belong to these heads (a stale set from another model
 * is not drawn). */
static const hs_pooled_map *head_map(const hs_view_input *in, int i) {
    if (!in->maps || i >= in->n_maps || !in->maps[i].cells) return NULL;
    const hs_pooled_map *m = &in->maps[i];
    if (in->probe && i < in->probe->n_heads) {
        const hs_head_stat *s = &in->probe->heads[i];
        if (m->head.layer != s->layer || m->head.mixer != s->mixer || m->head.head != s->head)
            return NULL;
    }
    return m;
}

/* Square side, in half-block pixels (a cell is 1 wide, 2 tall), of a text map w x h cells. */
static int text_side(double w, double h) { return (int)fmin(w, h * 2); }

/* Text cells: the side of the maps with one layer per grid row and tags beside or under
 * each map (the classic layout below), and with `wrap` layers side by side (tags under each
 * map: "L3h0 NoPE" / ".94 .08"). Picks the wrap giving the biggest roughly-square maps; only
 * when the whole model fits, so the window around the selection stays one layer per row.
 * Returns 1 when a wrapped layout was chosen and L is filled. */
static int text_wrap_layout(heads_layout *L, hs_canvas *c, double top, double legend_h) {
    if (L->n_layers < 2 || L->max_cols < 1) return 0;
    double avail_h = c->height - top - legend_h;
    /* the classic layout's map side (see below) */
    int cw1 = (int)floor((c->width - L->label_w) / L->max_cols);
    int ch1 = (int)floor(avail_h / L->n_layers);
    int best = 0, best_k = 1, best_h = 0, best_w = 0;
    if (ch1 >= 2) {
        int mh = ch1 - 1, mw = (int)fmin(mh * 2 + 2, cw1 - 1);
        if (ch1 >= 3 && cw1 - 2 - 10 >= (ch1 - 1) * 2) mw = (int)fmin(mh * 2 + 2, cw1 - 2 - 10);
        best = text_side(mw, mh);
    }
    for (int k = 2; k <= L->n_layers; k++) {
        int grows = (L->n_layers + k - 1) / k, gcols = k * L->max_cols;
        int cw = (int)floor(c->width / gcols), ch = (int)floor(avail_h / grows);
        if (cw < 8 || ch < 3) continue;              /* tags need ~7 columns, 2 rows */
        int mh = ch - 2, mw = cw - 2;
        if (mw > mh * 2) mw = mh * 2;                /* roughly square in pixels */
        if (mh > (mw + 1) / 2) mh = (mw + 1) / 2;
        int side = text_side(mw, mh);
        if (side > best) {
            best = side;
            best_k = k;
            best_h = mh;
            best_w = mw;
        }
    }
    if (best_k < 2) return 0;
    int grows = (L->n_layers + best_k - 1) / best_k, gcols = best_k * L->max_cols;
    L->wrap = best_k;
    L->rows = L->n_layers;
    L->cols = L->max_cols;
    L->row0 = L->col0 = 0;
    L->cw = floor(c->width / gcols);
    L->ch = floor(avail_h / grows);
    L->map_w = best_w;
    L->map_h = best_h;
    L->tag_h = 2;
    L->tags = 1;
    L->label_w = 0;
    return 1;
}

/* Pixel canvases: the side of a square map in a cell cw x ch with tags under it (L->tag_h
 * high) or beside it (L->tag_w wide) when that gives a clearly bigger map; sets L->beside
 * and clears L->tag_h when beside. */
static double pixel_side(heads_layout *L, hs_canvas *c, double cw, double ch, double gap) {
    double fs = hs_vc_font(c), tfs = fs * 0.8;
    double side = fmin(cw - gap, ch - L->tag_h - gap);
    double side_beside = fmin(cw - L->tag_w - gap, ch - fs * 0.5 - gap);
    L->beside = 0;
    if (L->tags && side_beside > side * 1.15 && side_beside >= tfs * 3.6) {
        L->beside = 1;
        side = side_beside;
        L->tag_h = 0;
    }
    return side;
}

static void layout(heads_layout *L, hs_canvas *c, const hs_view_input *in, double top) {
    memset(L, 0, sizeof *L);
    L->n = head_count(in);
    for (int i = 0; i < L->n; i++) {
        int l = head_layer(in, i) + 1, k = head_col(in, i) + 1;
        if (l > L->n_layers) L->n_layers = l;
        if (k > L->max_cols) L->max_cols = k;
    }
    double fs = hs_vc_font(c), pad = hs_vc_pad(c);
    double legend_h = c->is_text ? 1 : hs_vc_line(c) * 1.4;
    L->label_w = c->is_text ? 6 : fs * 3.6;
    double avail_w = c->width - L->label_w - (c->is_text ? 0 : pad * 2);
    double avail_h = c->height - top - legend_h - (c->is_text ? 0 : pad);
    L->tag_h = c->is_text ? 1 : fs * 0.85 * 2.3;
    /* pixel canvases: when tags would leave the maps tiny, drop them (hover shows the values;
     * the colour band keeps the branch type) */
    if (!c->is_text && (avail_h / (L->n_layers > 0 ? L->n_layers : 1) - L->tag_h < fs * 3 ||
                        avail_w / (L->max_cols > 0 ? L->max_cols : 1) < fs * 4.5))
        L->tag_h = 0;
    L->tags = c->is_text || L->tag_h > 0;
    double min_w = c->is_text ? 5 : fs * 2.2, min_h = c->is_text ? 3 : L->tag_h + fs * 2.2;
    L->cols = L->max_cols;
    L->rows = L->n_layers;
    if (L->cols * min_w > avail_w) L->cols = (int)(avail_w / min_w);
    if (L->rows * min_h > avail_h) L->rows = (int)(avail_h / min_h);
    if (L->cols < 1) L->cols = 1;
    if (L->rows < 1) L->rows = 1;
    /* window around the selection */
    int sl = 0, sc = 0;
    if (in->sel_head >= 0 && in->sel_head < L->n) {
        sl = head_layer(in, in->sel_head);
        sc = head_col(in, in->sel_head);
    }
    L->row0 = sl - L->rows / 2;
    if (L->row0 + L->rows > L->n_layers) L->row0 = L->n_layers - L->rows;
    if (L->row0 < 0) L->row0 = 0;
    L->col0 = sc - L->cols / 2;
    if (L->col0 + L->cols > L->max_cols) L->col0 = L->max_cols - L->cols;
    if (L->col0 < 0) L->col0 = 0;
    L->cw = avail_w / L->cols;
    L->ch = avail_h / L->rows;
    if (c->is_text && text_wrap_layout(L, c, top, legend_h)) {
        /* chosen by text_wrap_layout */
    } else if (c->is_text) {
        L->cw = floor(L->cw);
        L->ch = floor(L->ch);
        L->map_h = L->ch - L->tag_h;
        L->map_w = L->cw - 1;
        if (L->map_w > L->map_h * 2 + 2) L->map_w = L->map_h * 2 + 2;  /* cells are ~2:1 */
        /* wide cells: the tag beside the map ("NoPE h0" / ".65 .00"), the row below free */
        L->tag_w = 10;
        if (L->ch >= 3 && L->cw - 2 - L->tag_w >= (L->ch - 1) * 2) {
            L->beside = 1;
            L->map_h = L->ch - 1;
            L->map_w = fmin(L->map_h * 2 + 2, L->cw - 2 - L->tag_w);
        }
    } else {
        double tfs = fs * 0.8, gap = L->tags ? fmax(3, fs * 0.5) : fmax(3, fs * 0.35);
        L->tag_w = fmax(c->text_width(c, "hit 0.00", tfs), hs_vc_bold_width(c, "NoPE h00", tfs)) + fs * 0.6;
        double side = pixel_side(L, c, L->cw, L->ch, gap);
        /* the whole model fits: try layers side by side (tags name the layer), which uses
         * wide canvases far better than one layer per row */
        double full_w = c->width - pad * 2, tag_h0 = fs * 0.85 * 2.3;
        if (L->rows == L->n_layers && L->cols == L->max_cols) {
            heads_layout W = *L;
            W.tags = 1;                              /* side by side needs the tags back */
            W.tag_w = fmax(c->text_width(c, "hit 0.00", tfs), hs_vc_bold_width(c, "L00 NoPE h00", tfs)) + fs * 0.6;
            double wgap = fmax(3, fs * 0.5);
            for (int k = 2; k <= L->n_layers; k++) {
                int grows = (L->n_layers + k - 1) / k, gcols = k * L->max_cols;
                W.tag_h = tag_h0;
                W.beside = 0;
                double gg = fs * 0.8, gw = (full_w - (k - 1) * gg) / gcols;
                double ws = pixel_side(&W, c, gw, avail_h / grows, wgap);
                if (ws >= fs * 3 && fmin(ws, fs * 20) > fmin(side, fs * 20) * 1.15) {
                    *L = W;
                    L->wrap = k;
                    L->label_w = 0;
                    L->cw = gw;
                    L->group_gap = gg;
                    L->ch = avail_h / grows;
                    side = ws;
                    gap = wgap;
                    W = *L;
                    W.wrap = 0;
                }
            }
        }
        if (side > fs * 20) side = fs * 20;
        L->map_w = L->map_h = side;
        /* shrink cells to the maps so the grid is compact, centred */
        int gcols = L->wrap > 1 ? L->wrap * L->max_cols : L->cols;
        L->cw = side + (L->beside ? L->tag_w : 0) + fmax(gap, fs * 0.4);
        double room = L->wrap > 1 ? full_w - (L->wrap - 1) * L->group_gap : avail_w;
        if (L->cw * gcols > room) L->cw = room / gcols;
        L->ch = side + L->tag_h + gap + (L->beside ? fs * 0.5 : 0);
        if (L->wrap > 1) {                           /* centred over the full width */
            L->x0 = pad + fmax(0, (room - L->cw * gcols) / 2);
            L->y0 = top + pad * 0.5;
            L->legend_y = fmin(L->y0 + L->ch * ((L->n_layers + L->wrap - 1) / L->wrap) + pad,
                               c->height - legend_h);
            return;
        }
    }
    if (L->wrap > 1) L->x0 = 0;
    else L->x0 = L->label_w + (c->is_text ? 0 : pad);
    if (!c->is_text) L->x0 += fmax(0, (avail_w - L->cw * L->cols) / 2);
    L->y0 = top + (c->is_text ? 0 : pad * 0.5);
    L->legend_y = c->is_text ? c->height - 1 : fmin(L->y0 + L->ch * L->rows + pad,
                                                     c->height - legend_h);
}

static int cell_pos(const heads_layout *L, const hs_view_input *in, int i, double *x, double *y) {
    int r = head_layer(in, i) - L->row0, k = head_col(in, i) - L->col0;
    if (r < 0 || r >= L->rows || k < 0 || k >= L->cols) return 0;
    double gx = 0;
    if (L->wrap > 1) {                               /* layers side by side */
        gx = (r % L->wrap) * L->group_gap;
        k += (r % L->wrap) * L->max_cols;
        r /= L->wrap;
    }
    *x = L->x0 + k * L->cw + gx;
    *y = L->y0 + r * L->ch;
    return 1;
}

/* "0.94" -> ".94" so two numbers fit under a narrow map; 1.00 stays "1.00". */
static const char *short_num(char *out, size_t n, double v) {
    snprintf(out, n, "%.2f", v);
    return v < 1 && v >= 0 ? out + 1 : out;
}

/* "GLA h0", or "L3 GLA h0" when layers sit side by side (no layer label column). */
static void pixel_tag_name(char *buf, size_t n, const heads_layout *L, const hs_view_input *in,
                           int i, const hs_head_stat *st, const char *lab) {
    int hn = st ? st->head : in->maps[i].head.head;
    if (L->wrap > 1) snprintf(buf, n, "L%d %s h%d", head_layer(in, i), lab, hn);
    else snprintf(buf, n, "%s h%d", lab, hn);
}

static double title_of(hs_canvas *c, const hs_view_input *in) {
    return hs_vc_title(c, in, c->is_text && c->width < 70 ? "Heads" : "Heads: pooled attention");
}

void hs_view_heads_draw(hs_canvas *c, const hs_view_input *in) {
    int dark = c->dark;
    double top = title_of(c, in);
    double fs = hs_vc_font(c);
    if (head_count(in) == 0) {
        hs_vc_placeholder(c, 0, top, c->width, c->height - top,
                          "no probe yet: press Enter to run one");
        return;
    }
    heads_layout L;
    layout(&L, c, in, top);
    hs_rgba fg = hs_theme_fg(dark), mu = hs_vc_muted(dark);
    char buf[96], fit[96];

    /* layer labels (wrapped text layouts name the layer in each tag instead) */
    for (int r = 0; r < (L.wrap > 1 ? 0 : L.rows); r++) {
        int l = L.row0 + r;
        int hh = in->cfg && l < in->cfg->num_layers ? in->cfg->layers[l].n_mixers == 2 : 0;
        double cy = L.y0 + r * L.ch + (c->is_text ? 0.5 : L.map_h / 2);
        double lx = c->is_text ? 0 : L.x0 - L.label_w;
        if (!c->is_text && L.ch < fs * 2.6) {          /* short rows: one line "L18 HH" */
            snprintf(buf, sizeof buf, "L%d%s", l, in->cfg ? (hh ? " HH" : " LH") : "");
            c->text(c, lx, cy, buf, fs * 0.8, fg, HS_ALIGN_LEFT, 0);
            continue;
        }
        snprintf(buf, sizeof buf, "L%d", l);
        c->text(c, lx, cy, buf, fs, fg, HS_ALIGN_LEFT, 1);
        if (in->cfg) {
            c->text(c, lx, cy + (c->is_text ? 1 : fs * 1.2),
                    hh ? "HH" : "LH", fs * 0.8, mu, HS_ALIGN_LEFT, 0);
        }
    }
    for (int i = 0; i < L.n; i++) {
        double x, y;
        if (!cell_pos(&L, in, i, &x, &y)) continue;
        hs_mixer_type t = head_type(in, i);
        hs_rgba bc = hs_branch_color(t, dark);
        double mx = x + (c->is_text ? 1 : 0), my = y;
        const hs_pooled_map *m = head_map(in, i);
        if (m) hs_vc_heatmap(c, mx, my, L.map_w, L.map_h, m, in->log_color, NULL);
        else if (!c->is_text) c->fill_rect(c, mx, my, L.map_w, L.map_h, hs_vc_nan(dark));
        int sel = i == in->sel_head;
        if (!c->is_text) {
            c->fill_rect(c, mx, my - 2.5, L.map_w, 2.5, bc);          /* branch band */
            if (sel)
                c->stroke_rect(c, mx - 2.5, my - 5, L.map_w + 5 + (L.beside ? L.tag_w - fs * 0.2 : 0), L.map_h + L.tag_h + 5,
                               hs_vc_accent(dark), 2.2);
        } else {
            c->fill_rect(c, x, my, 1, L.map_h, sel ? hs_vc_accent(dark) : bc);
        }
        /* tag: branch label, then entropy / hit rate */
        const hs_head_stat *st = in->probe && i < in->probe->n_heads ? &in->probe->heads[i] : NULL;
        const char *lab = hs_vc_branch_label(t);
        if (!L.tags) continue;
        double ty = my + L.map_h + (c->is_text ? 0.5 : fs * 0.85 * 0.65);
        double avail = L.map_w + (c->is_text ? 1 : 0);
        if (c->is_text && L.wrap > 1) {
            double tx = x + 1, tw = L.cw - 1;
            int hl = head_layer(in, i), hn = st ? st->head : in->maps[i].head.head;
            snprintf(buf, sizeof buf, "L%d %s h%d", hl, lab, hn);
            if (c->text_width(c, buf, 1) > tw) snprintf(buf, sizeof buf, "L%dh%d %s", hl, hn, lab);
            hs_vc_fit(c, fit, sizeof fit, buf, 1, tw);
            if (sel) c->fill_rect(c, tx, my + L.map_h, tw, 1, hs_vc_accent(dark));
            c->text(c, tx, my + L.map_h + 0.5, fit, 1, sel ? hs_theme_bg(dark) : bc, HS_ALIGN_LEFT, 1);
            if (st) {
                char e[16], h[16];
                snprintf(buf, sizeof buf, "%s %s", short_num(e, sizeof e, st->entropy),
                         short_num(h, sizeof h, st->hit_rate));
                hs_vc_fit(c, fit, sizeof fit, buf, 1, tw);
                c->text(c, tx, my + L.map_h + 1.5, fit, 1, mu, HS_ALIGN_LEFT, 0);
            }
        } else if (c->is_text && L.beside) {
            double tx = mx + L.map_w + 1;
            snprintf(buf, sizeof buf, "%s h%d", lab, st ? st->head : in->maps[i].head.head);
            if (sel) c->fill_rect(c, tx, my, L.tag_w, 1, hs_vc_accent(dark));
            c->text(c, tx, my + 0.5, buf, 1, sel ? hs_theme_bg(dark) : bc, HS_ALIGN_LEFT, 1);
            if (st) {
                snprintf(buf, sizeof buf, "%.2f %.2f", st->entropy, st->hit_rate);
                c->text(c, tx, my + 1.5, buf, 1, mu, HS_ALIGN_LEFT, 0);
            }
        } else if (c->is_text) {
            char ent[16] = "", hit[16] = "";
            if (st) {
                snprintf(ent, sizeof ent, "%.2f", st->entropy);
                snprintf(hit, sizeof hit, "%.2f", st->hit_rate);
            }
            /* "NoPE .82 .41" when it fits, else "N.82" */
            if (st) snprintf(buf, sizeof buf, "%s %s %s", lab, ent + (st->entropy < 1), hit + (st->hit_rate < 1));
            else snprintf(buf, sizeof buf, "%s", lab);
            if (c->text_width(c, buf, 1) > avail && st)
                snprintf(buf, sizeof buf, "%c%s %s", lab[0], ent + (st->entropy < 1), hit + (st->hit_rate < 1));
            if (c->text_width(c, buf, 1) > avail && st)
                snprintf(buf, sizeof buf, "%c%s", lab[0], ent + (st->entropy < 1));
            hs_vc_fit(c, fit, sizeof fit, buf, 1, avail);
            if (sel) c->fill_rect(c, x, floor(ty), avail, 1, hs_vc_accent(dark));
            c->text(c, x, ty, fit, 1, sel ? hs_theme_bg(dark) : bc, HS_ALIGN_LEFT, 1);
        } else if (L.beside) {
            double tfs = fs * 0.8, tx = mx + L.map_w + fs * 0.4, ty0 = my + tfs * 0.6;
            pixel_tag_name(buf, sizeof buf, &L, in, i, st, lab);
            c->text(c, tx, ty0, buf, tfs, bc, HS_ALIGN_LEFT, 1);
            if (st) {
                snprintf(buf, sizeof buf, "H %.2f", st->entropy);
                c->text(c, tx, ty0 + tfs * 1.3, buf, tfs, mu, HS_ALIGN_LEFT, 0);
                snprintf(buf, sizeof buf, "hit %.2f", st->hit_rate);
                c->text(c, tx, ty0 + tfs * 2.6, buf, tfs, mu, HS_ALIGN_LEFT, 0);
            }
        } else {
            double tfs = fs * 0.8;
            pixel_tag_name(buf, sizeof buf, &L, in, i, st, lab);
            hs_vc_fit(c, fit, sizeof fit, buf, tfs, avail);
            c->text(c, mx, ty, fit, tfs, bc, HS_ALIGN_LEFT, 1);
            if (st) {
                snprintf(buf, sizeof buf, "H %.2f  hit %.2f", st->entropy, st->hit_rate);
                if (c->text_width(c, buf, tfs * 0.95) > avail)
                    snprintf(buf, sizeof buf, "H%.2f hit%.2f", st->entropy, st->hit_rate);
                if (c->text_width(c, buf, tfs * 0.95) > avail)
                    snprintf(buf, sizeof buf, "%.2f/%.2f", st->entropy, st->hit_rate);
                hs_vc_fit(c, fit, sizeof fit, buf, tfs * 0.95, avail);
                c->text(c, mx, ty + tfs * 1.15, fit, tfs * 0.95, mu, HS_ALIGN_LEFT, 0);
            }
        }
    }
    /* footer: which part is shown, what the tags mean, branch colours */
    char foot[256];
    int shown_all = L.rows == L.n_layers && L.cols == L.max_cols;
    char part[96] = "";
    if (!shown_all)
        snprintf(part, sizeof part, c->is_text ? "L%d-%d/%d H%d-%d/%d  " : "layers %d-%d of %d, heads %d-%d of %d  ",
                 L.row0, L.row0 + L.rows - 1, L.n_layers, L.col0, L.col0 + L.cols - 1, L.max_cols);
    const char *pooled = in->maps && in->n_maps > 0 && in->maps[0].agg == HS_POOL_MAX ? "max" : "mean";
    if (!L.tags)
        snprintf(foot, sizeof foot, "%sband = branch type; hover a map for entropy and hit rate; %s-pooled",
                 part, pooled);
    else if (c->is_text)
        snprintf(foot, sizeof foot, "%stags: entropy, top-%d hit rate; %s-pooled", part,
                 in->probe ? in->probe->topk : in->topk, pooled);
    else
        snprintf(foot, sizeof foot, "%sH = normalised entropy, hit = top-%d hit rate; %s-pooled, each map on its own %sscale",
                 part, in->probe ? in->probe->topk : in->topk, pooled, in->log_color ? "log " : "");
    /* branch colours present */
    int present[HS_MIXER_TYPES] = { 0 };
    for (int i = 0; i < L.n; i++) {
        int t = head_type(in, i);
        if (t >= 0 && t < HS_MIXER_TYPES) present[t] = 1;
    }
    double x = c->is_text ? 0 : hs_vc_pad(c) * 1.5;
    double cy = c->is_text ? L.legend_y + 0.5 : L.legend_y + hs_vc_line(c) * 0.6;
    for (int t = 0; t < HS_MIXER_TYPES; t++) {
        if (!present[t]) continue;
        hs_rgba bc = hs_branch_color((hs_mixer_type)t, dark);
        if (c->is_text) {
            c->fill_rect(c, x, floor(cy), 1, 1, bc);
            x += 1;
        } else {
            c->fill_rect(c, x, cy - fs * 0.4, fs * 0.8, fs * 0.8, bc);
            x += fs * 1.1;
        }
        c->text(c, x, cy, hs_vc_branch_label((hs_mixer_type)t), fs * 0.9, fg, HS_ALIGN_LEFT, 0);
        x += c->text_width(c, hs_vc_branch_label((hs_mixer_type)t), fs * 0.9) + (c->is_text ? 1 : fs);
    }
    hs_vc_fit(c, fit, sizeof fit, foot, fs * 0.85, c->width - x - hs_vc_pad(c));
    c->text(c, x, cy, fit, fs * 0.85, mu, HS_ALIGN_LEFT, 0);
}

int hs_view_heads_hit(hs_view_hit *out, hs_canvas *c, const hs_view_input *in, double x,
                      double y) {
    if (head_count(in) == 0) return HS_HIT_NONE;
    double top = hs_vc_title_height(c);
    heads_layout L;
    layout(&L, c, in, top);
    for (int i = 0; i < L.n; i++) {
        double cx, cy;
        if (!cell_pos(&L, in, i, &cx, &cy)) continue;
        if (x >= cx && x < cx + L.cw && y >= cy - (c->is_text ? 0 : 5) && y < cy + L.ch) {
            out->what = HS_HIT_HEAD;
            out->head = i;
            hs_mixer_type t = head_type(in, i);
            if (in->probe && i < in->probe->n_heads) {
                const hs_head_stat *s = &in->probe->heads[i];
                snprintf(out->text, sizeof out->text,
                         "L%d.M%d.H%d %s  entropy %.3f  hit %.3f  retrieval %.3f", s->layer,
                         s->mixer, s->head, hs_vc_branch_label(t), s->entropy, s->hit_rate,
                         s->retrieval);
            } else {
                const hs_pooled_map *m = &in->maps[i];
                snprintf(out->text, sizeof out->text, "L%d.M%d.H%d %s", m->head.layer,
                         m->head.mixer, m->head.head, hs_vc_branch_label(t));
            }
            return out->what;
        }
    }
    return HS_HIT_NONE;
}
