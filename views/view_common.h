/* Shared pieces of the views (internal to views/): theme colours, font sizes that adapt to
 * the canvas, axes with ticks, colour bars, legends, placeholders and heatmap images. Every
 * function draws through hs_canvas only, so it works on both painters. */
#ifndef HS_VIEW_COMMON_H
#define HS_VIEW_COMMON_H

#include <stddef.h>

#include "views.h"

/* ---- theme ---- */
hs_rgba hs_vc_muted(int dark);          /* secondary text, ticks */
hs_rgba hs_vc_grid(int dark);           /* grid lines, frames */
hs_rgba hs_vc_panel(int dark);          /* panels, tab bars */
hs_rgba hs_vc_nan(int dark);            /* background of cells with no causal entry */
hs_rgba hs_vc_accent(int dark);         /* selection outline */
hs_rgba hs_vc_alpha(hs_rgba c, float a);
hs_rgba hs_vc_mix(hs_rgba a, hs_rgba b, double t);  /* (1-t) a + t b, opaque */

/* ---- sizes ---- */
double hs_vc_font(hs_canvas *c);        /* body text size (1 on text cells) */
double hs_vc_line(hs_canvas *c);        /* line height */
double hs_vc_pad(hs_canvas *c);         /* a small gap */

/* 1 on an ASCII-only text canvas. The canvas interface has no charset field; the text
 * painter transliterates an ellipsis to two dots in ASCII mode, which is what this asks. */
int hs_vc_ascii(hs_canvas *c);

/* Branch label "NoPE" ... (does not depend on the engine's tables). */
const char *hs_vc_branch_label(hs_mixer_type t);

/* Token counts and positions: 4096 -> "4K" (multiples of 1024), 1500 -> "1500",
 * 65536 -> "64K", 1048576 -> "1M". */
void hs_vc_fmt_tokens(char *out, size_t n, double v);
/* Compact number for ticks: 0.25, 1e-3, 120. */
void hs_vc_fmt_num(char *out, size_t n, double v);
void hs_vc_fmt_bytes(char *out, size_t n, double v);   /* "12.5 MB" */

/* ---- axes ---- */
typedef struct {
    double v0, v1;              /* data range */
    double p0, p1;              /* canvas range (p1 < p0 for a y axis going up) */
    int log;                    /* log10 scale (v0, v1 > 0) */
} hs_axis;
double hs_axis_map(const hs_axis *a, double v);
double hs_axis_unmap(const hs_axis *a, double p);

/* Nice tick values in [v0, v1]: at most max_ticks (>= 2) on a linear axis; powers of 10 (and
 * 2, 5 between them when room allows) on a log axis; powers of two when pow2 is set. Returns
 * the count written (<= cap). */
int hs_vc_ticks(const hs_axis *a, int max_ticks, int pow2, double *out, int cap);

enum { HS_TICK_NUM = 0, HS_TICK_TOKENS, HS_TICK_PERCENT, HS_TICK_BYTES };
/* Frame of the plot rect plus ticks and labels on the bottom (ax) and left (ay) axes and the
 * axis titles (either may be NULL). fmt_x / fmt_y: HS_TICK_*. flags: HS_AXES_*. */
enum { HS_AXES_GRID = 1, HS_AXES_NOFRAME = 2 };
void hs_vc_axes(hs_canvas *c, double x, double y, double w, double h, const hs_axis *ax,
                const hs_axis *ay, int fmt_x, int fmt_y, int pow2_x, int pow2_y,
                const char *title_x, const char *title_y, int flags);
/* Space the left tick labels and bottom labels need (canvas units). */
double hs_vc_axis_left_room(hs_canvas *c);
double hs_vc_axis_bottom_room(hs_canvas *c, int with_title);

/* ---- heatmaps ---- */
/* Turns a bins_t x bins_s map into RGBA pixels with viridis: linear (v / vmax) or log
 * (log10 v over `decades` below vmax); NaN cells transparent. vmax <= 0 => the map's max.
 * Returns the vmax used. rgba must hold bins_t * bins_s * 4 bytes. */
double hs_vc_map_rgba(uint8_t *rgba, const hs_pooled_map *m, int log_color, double decades,
                      double vmax);
/* Draws the map into the rect: NaN background (hatched on pixel canvases), then the image. */
void hs_vc_heatmap(hs_canvas *c, double x, double y, double w, double h, const hs_pooled_map *m,
                   int log_color, double *vmax_out);
/* Vertical colour bar with ticks for [vmax*10^-decades, vmax] (log) or [0, vmax] (linear). */
void hs_vc_colorbar(hs_canvas *c, double x, double y, double w, double h, double vmax,
                    int log_color, double decades, const char *title);
#define HS_VC_LOG_DECADES 4.0

/* ---- legend ---- */
typedef struct {
    const char *label;
    hs_rgba color;
    int kind;                   /* 0 marker, 1 line, 2 swatch */
    hs_marker marker;
    int dashed;
} hs_legend_item;
/* Size of the legend box hs_vc_legend would draw. */
void hs_vc_legend_size(hs_canvas *c, const hs_legend_item *it, int n, double max_w, double *w,
                       double *h);
/* The corner of the plot rect (x, y, w, h) where an lw x lh legend covers the fewest of the
 * np points (px, py); returns the legend's top-right corner. */
void hs_vc_legend_corner(hs_canvas *c, double x, double y, double w, double h, double lw,
                         double lh, const double *px, const double *py, int np, double *x_right,
                         double *y_top);
/* Draws a legend box with its top-right corner at (x_right, y_top); returns its height.
 * max_w > 0 limits the width. */
double hs_vc_legend(hs_canvas *c, double x_right, double y_top, const hs_legend_item *it,
                    int n, double max_w);

/* ---- text helpers ---- */
/* A message centred in the rect, e.g. "no probe yet: press Enter to run". */
void hs_vc_placeholder(hs_canvas *c, double x, double y, double w, double h, const char *msg);
/* Title line at the top of a view; returns the height used. */
double hs_vc_title(hs_canvas *c, const hs_view_input *in, const char *title);
double hs_vc_title_height(hs_canvas *c);
/* Width of bold text: the canvas measures the regular face; DejaVu bold runs up to ~15% wider. */
double hs_vc_bold_width(hs_canvas *c, const char *s, double size);
/* Shortens s to fit max_w (ending in "..") into out. */
void hs_vc_fit(hs_canvas *c, char *out, size_t n, const char *s, double size, double max_w);

/* Per-view entry points (view_*.c). */
void hs_view_heads_draw(hs_canvas *c, const hs_view_input *in);
int hs_view_heads_hit(hs_view_hit *out, hs_canvas *c, const hs_view_input *in, double x, double y);
void hs_view_head_draw(hs_canvas *c, const hs_view_input *in);
int hs_view_head_hit(hs_view_hit *out, hs_canvas *c, const hs_view_input *in, double x, double y);
int hs_view_head_rect(hs_canvas *c, const hs_view_input *in, double *x, double *y, double *w,
                      double *h);
void hs_view_tidal_draw(hs_canvas *c, const hs_view_input *in);
int hs_view_tidal_hit(hs_view_hit *out, hs_canvas *c, const hs_view_input *in, double x, double y);
void hs_view_needle_draw(hs_canvas *c, const hs_view_input *in);
int hs_view_needle_hit(hs_view_hit *out, hs_canvas *c, const hs_view_input *in, double x,
                       double y);
void hs_view_ppl_draw(hs_canvas *c, const hs_view_input *in);
void hs_view_model_draw(hs_canvas *c, const hs_view_input *in);

#endif
