/* View registry: names, dispatch to the view files, and the area sub-canvas. */
#include <string.h>

#include "view_common.h"

static const char *const names[HS_VIEW_COUNT] = { "heads", "head", "tidal", "needle", "ppl",
                                                  "model" };

const char *hs_view_name(hs_view_kind v) {
    return (int)v >= 0 && v < HS_VIEW_COUNT ? names[v] : "?";
}

int hs_view_parse(const char *s) {
    if (!s) return -1;
    for (int i = 0; i < HS_VIEW_COUNT; i++)
        if (!strcmp(s, names[i])) return i;
    if (!strcmp(s, "perplexity")) return HS_VIEW_PPL;
    return -1;
}

/* Below this a view has no room for its axes; it says so instead of drawing. */
static int too_small(hs_canvas *c) {
    return c->is_text ? (c->width < 20 || c->height < 6) : (c->width < 120 || c->height < 80);
}

void hs_view_draw(hs_canvas *c, hs_view_kind v, const hs_view_input *in) {
    if (too_small(c)) {
        hs_vc_placeholder(c, 0, 0, c->width, c->height, "too small");
        return;
    }
    switch (v) {
    case HS_VIEW_HEADS: hs_view_heads_draw(c, in); break;
    case HS_VIEW_HEAD: hs_view_head_draw(c, in); break;
    case HS_VIEW_TIDAL: hs_view_tidal_draw(c, in); break;
    case HS_VIEW_NEEDLE: hs_view_needle_draw(c, in); break;
    case HS_VIEW_PPL: hs_view_ppl_draw(c, in); break;
    case HS_VIEW_MODEL: hs_view_model_draw(c, in); break;
    default: hs_vc_placeholder(c, 0, 0, c->width, c->height, "unknown view"); break;
    }
}

int hs_view_hit_test(hs_view_hit *out, hs_canvas *c, hs_view_kind v, const hs_view_input *in,
                     double x, double y) {
    memset(out, 0, sizeof *out);
    out->what = HS_HIT_NONE;
    out->head = out->t = out->s = out->task = out->length = out->depth = -1;
    if (too_small(c)) return HS_HIT_NONE;
    switch (v) {
    case HS_VIEW_HEADS: return hs_view_heads_hit(out, c, in, x, y);
    case HS_VIEW_HEAD: return hs_view_head_hit(out, c, in, x, y);
    case HS_VIEW_TIDAL: return hs_view_tidal_hit(out, c, in, x, y);
    case HS_VIEW_NEEDLE: return hs_view_needle_hit(out, c, in, x, y);
    default: return HS_HIT_NONE;
    }
}

int hs_view_head_map_rect(hs_canvas *c, const hs_view_input *in, double *x, double *y,
                          double *w, double *h) {
    if (too_small(c)) return 0;
    return hs_view_head_rect(c, in, x, y, w, h);
}

void hs_canvas_clear(hs_canvas *c) {
    c->fill_rect(c, 0, 0, c->width, c->height, hs_theme_bg(c->dark));
}

/* ---- area sub-canvas: forwards every call to the parent, shifted ---- */

#define AREA(c) ((hs_canvas_area *)(c)->impl)

static void a_fill_rect(hs_canvas *c, double x, double y, double w, double h, hs_rgba col) {
    hs_canvas_area *a = AREA(c);
    a->parent->fill_rect(a->parent, x + a->ox, y + a->oy, w, h, col);
}
static void a_stroke_rect(hs_canvas *c, double x, double y, double w, double h, hs_rgba col,
                          double lw) {
    hs_canvas_area *a = AREA(c);
    a->parent->stroke_rect(a->parent, x + a->ox, y + a->oy, w, h, col, lw);
}
static void a_line(hs_canvas *c, double x0, double y0, double x1, double y1, hs_rgba col,
                   double lw) {
    hs_canvas_area *a = AREA(c);
    a->parent->line(a->parent, x0 + a->ox, y0 + a->oy, x1 + a->ox, y1 + a->oy, col, lw);
}
static void a_arrow(hs_canvas *c, double x0, double y0, double x1, double y1, hs_rgba col,
                    double lw) {
    hs_canvas_area *a = AREA(c);
    a->parent->arrow(a->parent, x0 + a->ox, y0 + a->oy, x1 + a->ox, y1 + a->oy, col, lw);
}
static void a_marker(hs_canvas *c, double x, double y, double size, hs_marker m, hs_rgba fill,
                     hs_rgba edge) {
    hs_canvas_area *a = AREA(c);
    a->parent->marker(a->parent, x + a->ox, y + a->oy, size, m, fill, edge);
}
static void a_text(hs_canvas *c, double x, double y, const char *s, double size, hs_rgba col,
                   hs_align align, int bold) {
    hs_canvas_area *a = AREA(c);
    a->parent->text(a->parent, x + a->ox, y + a->oy, s, size, col, align, bold);
}
static double a_text_width(hs_canvas *c, const char *s, double size) {
    hs_canvas_area *a = AREA(c);
    return a->parent->text_width(a->parent, s, size);
}
static void a_image(hs_canvas *c, double x, double y, double w, double h, const uint8_t *rgba,
                    int iw, int ih) {
    hs_canvas_area *a = AREA(c);
    a->parent->image(a->parent, x + a->ox, y + a->oy, w, h, rgba, iw, ih);
}
static void a_clip(hs_canvas *c, double x, double y, double w, double h) {
    hs_canvas_area *a = AREA(c);
    a->parent->clip(a->parent, x + a->ox, y + a->oy, w, h);
}
static void a_unclip(hs_canvas *c) {
    hs_canvas_area *a = AREA(c);
    a->parent->unclip(a->parent);
}

void hs_canvas_area_init(hs_canvas_area *a, hs_canvas *parent, double x, double y, double w,
                         double h) {
    memset(a, 0, sizeof *a);
    a->parent = parent;
    a->ox = x;
    a->oy = y;
    hs_canvas *c = &a->c;
    c->impl = a;
    c->width = w;
    c->height = h;
    c->cell_w = parent->cell_w;
    c->cell_h = parent->cell_h;
    c->is_text = parent->is_text;
    c->dark = parent->dark;
    c->fill_rect = a_fill_rect;
    c->stroke_rect = a_stroke_rect;
    c->line = a_line;
    c->arrow = a_arrow;
    c->marker = a_marker;
    c->text = a_text;
    c->text_width = a_text_width;
    c->image = a_image;
    c->clip = a_clip;
    c->unclip = a_unclip;
}
