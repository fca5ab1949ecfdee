/* The text-cell painter (see paint_text.h). Canvas units are cells; a cell (col, row) covers
 * [col, col+1) x [row, row+1). Colours with alpha < 1 are blended over what the cell shows. */
#include "paint_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define BRAILLE_BASE 0x2800u
#define UPPER_HALF 0x2580u
#define BOX_H 0x2500u
#define BOX_V 0x2502u
#define BOX_CROSS 0x253cu

/* The canvas impl is the grid itself (the clip lives in it). */
typedef hs_text_grid text_impl;

static uint8_t to8(float v) {
    if (!(v > 0)) return 0;
    if (v >= 1) return 255;
    return (uint8_t)lrintf(v * 255.0f);
}

static void rgb_of(uint8_t out[3], hs_rgba c) { out[0] = to8(c.r); out[1] = to8(c.g); out[2] = to8(c.b); }

/* c blended over the existing colour `under` */
static void blend(uint8_t out[3], const uint8_t under[3], hs_rgba c) {
    float a = c.a < 0 ? 0 : c.a > 1 ? 1 : c.a;
    float src[3] = { c.r, c.g, c.b };
    for (int i = 0; i < 3; i++) {
        float v = src[i] * a + (under[i] / 255.0f) * (1 - a);
        out[i] = to8(v);
    }
}

static void fill_cell_default(hs_text_grid *g, hs_text_cell *cell) {
    hs_rgba bg = hs_theme_bg(g->dark), fg = hs_theme_fg(g->dark);
    cell->ch = ' ';
    rgb_of(cell->fg, fg);
    rgb_of(cell->bg, bg);
    cell->bold = 0;
}

int hs_text_grid_init(hs_text_grid *g, int cols, int rows, hs_text_charset cs, int colors,
                      int dark) {
    memset(g, 0, sizeof *g);
    g->charset = cs;
    g->colors = colors;
    g->dark = dark;
    return hs_text_grid_resize(g, cols, rows);
}

int hs_text_grid_resize(hs_text_grid *g, int cols, int rows) {
    if (cols <= 0 || rows <= 0 || cols > 10000 || rows > 10000) return -1;
    hs_text_cell *cells = malloc((size_t)cols * (size_t)rows * sizeof *cells);
    if (!cells) return -1;
    free(g->cells);
    g->cells = cells;
    g->cols = cols;
    g->rows = rows;
    g->clip_x0 = g->clip_y0 = 0;
    g->clip_x1 = cols;
    g->clip_y1 = rows;
    hs_text_grid_clear(g);
    return 0;
}

void hs_text_grid_clear(hs_text_grid *g) {
    for (int i = 0; i < g->cols * g->rows; i++) fill_cell_default(g, &g->cells[i]);
}

void hs_text_grid_free(hs_text_grid *g) {
    free(g->cells);
    g->cells = NULL;
    g->cols = g->rows = 0;
}

int hs_text_utf8_encode(char *out, uint32_t cp) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

size_t hs_text_grid_row_utf8(const hs_text_grid *g, int row, char *out, size_t n) {
    size_t k = 0;
    if (n == 0) return 0;
    if (row >= 0 && row < g->rows) {
        for (int c = 0; c < g->cols; c++) {
            char buf[4];
            int m = hs_text_utf8_encode(buf, g->cells[(size_t)row * g->cols + c].ch);
            if (k + (size_t)m + 1 > n) break;
            memcpy(out + k, buf, (size_t)m);
            k += (size_t)m;
        }
    }
    out[k] = 0;
    return k;
}

char *hs_text_grid_to_utf8(const hs_text_grid *g) {
    size_t line = (size_t)g->cols * 4 + 1;
    char *s = malloc(line * (size_t)g->rows + 1);
    if (!s) return NULL;
    size_t k = 0;
    for (int r = 0; r < g->rows; r++) {
        k += hs_text_grid_row_utf8(g, r, s + k, line);
        s[k++] = '\n';
    }
    s[k] = 0;
    return s;
}

int hs_text_rgb_to_256(const uint8_t rgb[3]) {
    static const int lv[6] = { 0, 95, 135, 175, 215, 255 };
    int idx[3];
    for (int i = 0; i < 3; i++) {
        int best = 0;
        for (int j = 1; j < 6; j++)
            if (abs(lv[j] - rgb[i]) < abs(lv[best] - rgb[i])) best = j;
        idx[i] = best;
    }
    int cube = 16 + 36 * idx[0] + 6 * idx[1] + idx[2];
    long dc = 0;
    for (int i = 0; i < 3; i++) dc += (long)(lv[idx[i]] - rgb[i]) * (lv[idx[i]] - rgb[i]);
    int mean = (rgb[0] + rgb[1] + rgb[2]) / 3;
    int gi = (mean - 8 + 5) / 10;
    if (gi < 0) gi = 0;
    if (gi > 23) gi = 23;
    int gv = 8 + 10 * gi;
    long dg = 0;
    for (int i = 0; i < 3; i++) dg += (long)(gv - rgb[i]) * (gv - rgb[i]);
    return dg < dc ? 232 + gi : cube;
}

int hs_text_rgb_to_8(const uint8_t rgb[3]) {
    /* nearest of the 8 ANSI colours, with the chromatic ones at full-ish saturation */
    static const int pal[8][3] = { { 0, 0, 0 }, { 205, 49, 49 }, { 13, 188, 121 },
                                   { 229, 229, 16 }, { 36, 114, 200 }, { 188, 63, 188 },
                                   { 17, 168, 205 }, { 229, 229, 229 } };
    int best = 0;
    long bd = -1;
    for (int k = 0; k < 8; k++) {
        long d = 0;
        for (int i = 0; i < 3; i++) d += (long)(pal[k][i] - rgb[i]) * (pal[k][i] - rgb[i]);
        if (bd < 0 || d < bd) { bd = d; best = k; }
    }
    return best;
}

/* ---- painter ---- */

static hs_text_cell *cell_at(text_impl *t, int col, int row) {
    if (col < t->clip_x0 || col >= t->clip_x1 || row < t->clip_y0 || row >= t->clip_y1) return NULL;
    return hs_text_grid_at(t, col, row);
}

static int ascii_mode(text_impl *t) { return t->charset == HS_TEXT_ASCII; }

/* Cells covered by [x, x+w): those whose centre lies inside; at least one when w > 0. */
static void span(double x, double w, int *a, int *b) {
    *a = (int)floor(x + 0.5);
    *b = (int)floor(x + w + 0.5);
    if (w > 0 && *b <= *a) *b = *a + 1;
}

static void t_fill_rect(hs_canvas *c, double x, double y, double w, double h, hs_rgba col) {
    text_impl *t = c->impl;
    int c0, c1, r0, r1;
    span(x, w, &c0, &c1);
    span(y, h, &r0, &r1);
    for (int r = r0; r < r1; r++)
        for (int k = c0; k < c1; k++) {
            hs_text_cell *cell = cell_at(t, k, r);
            if (!cell) continue;
            blend(cell->bg, cell->bg, col);
            cell->ch = ' ';
            cell->bold = 0;
        }
}

static uint32_t box_merge(uint32_t old, uint32_t add) {
    if ((old == BOX_H && add == BOX_V) || (old == BOX_V && add == BOX_H)) return BOX_CROSS;
    if ((old == '-' && add == '|') || (old == '|' && add == '-')) return '+';
    return add;
}

static void put_glyph(text_impl *t, int col, int row, uint32_t ch, hs_rgba col_rgba, int bold) {
    hs_text_cell *cell = cell_at(t, col, row);
    if (!cell) return;
    cell->ch = box_merge(cell->ch, ch);
    blend(cell->fg, cell->bg, col_rgba);
    cell->bold = (uint8_t)bold;
}

static void t_stroke_rect(hs_canvas *c, double x, double y, double w, double h, hs_rgba col,
                          double lw) {
    (void)lw;
    text_impl *t = c->impl;
    int c0, c1, r0, r1;
    span(x, w, &c0, &c1);
    span(y, h, &r0, &r1);
    c1--;
    r1--;
    int a = ascii_mode(t);
    for (int k = c0 + 1; k < c1; k++) {
        put_glyph(t, k, r0, a ? '-' : BOX_H, col, 0);
        put_glyph(t, k, r1, a ? '-' : BOX_H, col, 0);
    }
    for (int r = r0 + 1; r < r1; r++) {
        put_glyph(t, c0, r, a ? '|' : BOX_V, col, 0);
        put_glyph(t, c1, r, a ? '|' : BOX_V, col, 0);
    }
    put_glyph(t, c0, r0, a ? '+' : 0x250c, col, 0);
    put_glyph(t, c1, r0, a ? '+' : 0x2510, col, 0);
    put_glyph(t, c0, r1, a ? '+' : 0x2514, col, 0);
    put_glyph(t, c1, r1, a ? '+' : 0x2518, col, 0);
}

/* One braille dot at sub-cell resolution (2 x 4 dots per cell). */
static void braille_dot(text_impl *t, double x, double y, hs_rgba col) {
    static const uint8_t bit[4][2] = { { 0x01, 0x08 }, { 0x02, 0x10 }, { 0x04, 0x20 },
                                       { 0x40, 0x80 } };
    int col_i = (int)floor(x), row_i = (int)floor(y);
    hs_text_cell *cell = cell_at(t, col_i, row_i);
    if (!cell) return;
    int dx = (int)floor((x - col_i) * 2), dy = (int)floor((y - row_i) * 4);
    if (dx > 1) dx = 1;
    if (dy > 3) dy = 3;
    uint32_t base = (cell->ch >= BRAILLE_BASE && cell->ch <= BRAILLE_BASE + 0xff) ? cell->ch
                                                                                  : BRAILLE_BASE;
    cell->ch = base | bit[dy][dx];
    blend(cell->fg, cell->bg, col);
}

static void t_line(hs_canvas *c, double x0, double y0, double x1, double y1, hs_rgba col,
                   double lw) {
    (void)lw;
    text_impl *t = c->impl;
    int a = ascii_mode(t);
    if (fabs(y1 - y0) < 0.5) {                       /* horizontal */
        int row = (int)floor((y0 + y1) / 2);
        int k0 = (int)floor(fmin(x0, x1)), k1 = (int)ceil(fmax(x0, x1));
        if (k1 <= k0) k1 = k0 + 1;
        for (int k = k0; k < k1; k++) put_glyph(t, k, row, a ? '-' : BOX_H, col, 0);
        return;
    }
    if (fabs(x1 - x0) < 0.5) {                       /* vertical */
        int colx = (int)floor((x0 + x1) / 2);
        int r0 = (int)floor(fmin(y0, y1)), r1 = (int)ceil(fmax(y0, y1));
        for (int r = r0; r < r1; r++) put_glyph(t, colx, r, a ? '|' : BOX_V, col, 0);
        return;
    }
    double dx = x1 - x0, dy = y1 - y0;
    if (!a) {
        int n = (int)ceil(fmax(fabs(dx) * 2, fabs(dy) * 4)) + 1;
        if (n > 100000) n = 100000;
        for (int i = 0; i <= n; i++) {
            double u = (double)i / n;
            braille_dot(t, x0 + dx * u, y0 + dy * u, col);
        }
        return;
    }
    uint32_t ch = fabs(dx) > 2 * fabs(dy) ? '-' : fabs(dy) > 2 * fabs(dx) ? '|'
                  : (dx > 0) == (dy > 0) ? '\\' : '/';
    int n = (int)ceil(fmax(fabs(dx), fabs(dy))) + 1;
    if (n > 100000) n = 100000;
    for (int i = 0; i <= n; i++) {
        double u = (double)i / n;
        put_glyph(t, (int)floor(x0 + dx * u), (int)floor(y0 + dy * u), ch, col, 0);
    }
}

static void t_arrow(hs_canvas *c, double x0, double y0, double x1, double y1, hs_rgba col,
                    double lw) {
    text_impl *t = c->impl;
    double dx = x1 - x0, dy = y1 - y0;
    if (fabs(dx) < 1 && fabs(dy) < 1) return;        /* shorter than a cell: nothing to show */
    t_line(c, x0, y0, x1, y1, col, lw);
    /* head: the arrow glyph nearest the direction (y grows downwards) */
    double ang = atan2(-dy * 2, dx);                 /* cells are about twice as tall */
    int oct = (int)lrint(ang / (M_PI / 4));
    oct = ((oct % 8) + 8) % 8;
    static const uint32_t uni[8] = { 0x2192, 0x2197, 0x2191, 0x2196, 0x2190, 0x2199, 0x2193,
                                     0x2198 };
    static const char asc[8] = { '>', '/', '^', '\\', '<', '/', 'v', '\\' };
    put_glyph(t, (int)floor(x1), (int)floor(y1), ascii_mode(t) ? (uint32_t)asc[oct] : uni[oct],
              col, 1);
}

static void t_marker(hs_canvas *c, double x, double y, double size, hs_marker m, hs_rgba fill,
                     hs_rgba edge) {
    text_impl *t = c->impl;
    hs_rgba col = fill.a > 0.05f ? fill : edge;
    if (ascii_mode(t)) {
        static const char letters[] = { 'o', 's', 'a', 'd', 'x' };
        put_glyph(t, (int)floor(x), (int)floor(y), (uint32_t)letters[m], col, 1);
        return;
    }
    if (size >= 1.0) {
        static const uint32_t shapes[] = { 0x25cf, 0x25a0, 0x25b2, 0x25c6, 0x2715 };
        hs_text_cell *cell = cell_at(t, (int)floor(x), (int)floor(y));
        if (!cell) return;
        cell->ch = shapes[m];
        blend(cell->fg, cell->bg, col);
        return;
    }
    /* a 2 x 2 block of dots: visible, yet placed at sub-cell resolution */
    double hx = 0.25, hy = 0.125;                     /* half a dot */
    braille_dot(t, x - hx, y - hy, col);
    braille_dot(t, x + hx, y - hy, col);
    braille_dot(t, x - hx, y + hy, col);
    braille_dot(t, x + hx, y + hy, col);
}

/* Decodes UTF-8 into code points; in ASCII mode maps the few non-ASCII symbols views use to
 * ASCII and anything else to '?'. Returns the count (<= cap). */
static int decode(const char *s, uint32_t *out, int cap, int ascii) {
    int n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && n < cap) {
        uint32_t cp;
        int len;
        if (*p < 0x80) { cp = *p; len = 1; }
        else if ((*p & 0xe0) == 0xc0) { cp = *p & 0x1f; len = 2; }
        else if ((*p & 0xf0) == 0xe0) { cp = *p & 0x0f; len = 3; }
        else if ((*p & 0xf8) == 0xf0) { cp = *p & 0x07; len = 4; }
        else { cp = '?'; len = 1; }
        int ok = 1;
        for (int i = 1; i < len; i++) {
            if ((p[i] & 0xc0) != 0x80) { ok = 0; break; }
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if (!ok) { cp = '?'; len = 1; }
        p += len;
        if (cp < 32 || cp == 127) cp = ' ';
        if (ascii && cp >= 128) {
            const char *rep = "?";
            switch (cp) {
            case 0x2026: rep = ".."; break;           /* ellipsis */
            case 0x00d7: rep = "x"; break;            /* times */
            case 0x2013: case 0x2014: case 0x2212: rep = "-"; break;
            case 0x00b7: case 0x2022: rep = "."; break;
            case 0x2264: rep = "<="; break;
            case 0x2265: rep = ">="; break;
            case 0x2192: rep = "->"; break;
            case 0x2190: rep = "<-"; break;
            case 0x2191: rep = "^"; break;
            case 0x2193: rep = "v"; break;
            case 0x25cf: case 0x25cb: rep = "o"; break;
            case 0x25b2: rep = "^"; break;
            case 0x25a0: rep = "#"; break;
            }
            for (const char *r = rep; *r && n < cap; r++) out[n++] = (uint32_t)*r;
            continue;
        }
        out[n++] = cp;
    }
    return n;
}

#define TEXT_MAX 1024

static double t_text_width(hs_canvas *c, const char *s, double size) {
    (void)size;
    text_impl *t = c->impl;
    uint32_t buf[TEXT_MAX];
    return decode(s, buf, TEXT_MAX, ascii_mode(t));
}

static void t_text(hs_canvas *c, double x, double y, const char *s, double size, hs_rgba col,
                   hs_align align, int bold) {
    (void)size;
    text_impl *t = c->impl;
    uint32_t buf[TEXT_MAX];
    int n = decode(s, buf, TEXT_MAX, ascii_mode(t));
    double start = align == HS_ALIGN_LEFT ? x : align == HS_ALIGN_CENTER ? x - n / 2.0 : x - n;
    int c0 = (int)floor(start + 0.5), row = (int)floor(y);
    for (int i = 0; i < n; i++) {
        hs_text_cell *cell = cell_at(t, c0 + i, row);
        if (!cell) continue;
        cell->ch = buf[i];
        blend(cell->fg, cell->bg, col);
        cell->bold = (uint8_t)bold;
    }
}

static void sample(const uint8_t *rgba, int iw, int ih, double u, double v, float out[4]) {
    int ix = (int)floor(u * iw), iy = (int)floor(v * ih);
    if (ix < 0) ix = 0;
    if (ix >= iw) ix = iw - 1;
    if (iy < 0) iy = 0;
    if (iy >= ih) iy = ih - 1;
    const uint8_t *p = rgba + ((size_t)iy * iw + ix) * 4;
    for (int i = 0; i < 4; i++) out[i] = p[i] / 255.0f;
}

static void t_image(hs_canvas *c, double x, double y, double w, double h, const uint8_t *rgba,
                    int iw, int ih) {
    text_impl *t = c->impl;
    if (iw <= 0 || ih <= 0 || w <= 0 || h <= 0) return;
    int c0, c1, r0, r1;
    span(x, w, &c0, &c1);
    span(y, h, &r0, &r1);
    static const char ramp[] = " .:-=+*#%@";
    for (int r = r0; r < r1; r++)
        for (int k = c0; k < c1; k++) {
            hs_text_cell *cell = cell_at(t, k, r);
            if (!cell) continue;
            double u = (k + 0.5 - x) / w;
            float up[4], lo[4];
            sample(rgba, iw, ih, u, (r + 0.25 - y) / h, up);
            sample(rgba, iw, ih, u, (r + 0.75 - y) / h, lo);
            hs_rgba cu = { up[0], up[1], up[2], up[3] }, cl = { lo[0], lo[1], lo[2], lo[3] };
            if (ascii_mode(t)) {
                float a = (up[3] + lo[3]) / 2;
                if (a < 0.5f) continue;              /* transparent: keep the background */
                hs_rgba avg = { (up[0] + lo[0]) / 2, (up[1] + lo[1]) / 2, (up[2] + lo[2]) / 2, 1 };
                double lum = 0.2126 * avg.r + 0.7152 * avg.g + 0.0722 * avg.b;
                int idx = (int)lrint(lum * 9);
                if (idx < 1) idx = 1;                /* a finite cell is never blank */
                if (idx > 9) idx = 9;
                cell->ch = (uint32_t)ramp[idx];
                rgb_of(cell->fg, avg);
                cell->bold = 0;
                continue;
            }
            uint8_t top[3], bot[3];
            blend(top, cell->bg, cu);
            blend(bot, cell->bg, cl);
            if (!memcmp(top, bot, 3)) {
                cell->ch = ' ';
                memcpy(cell->bg, top, 3);
            } else {
                cell->ch = UPPER_HALF;
                memcpy(cell->fg, top, 3);
                memcpy(cell->bg, bot, 3);
            }
            cell->bold = 0;
        }
}

static void t_clip(hs_canvas *c, double x, double y, double w, double h) {
    text_impl *t = c->impl;
    int c0, c1, r0, r1;
    span(x, w, &c0, &c1);
    span(y, h, &r0, &r1);
    t->clip_x0 = c0 < 0 ? 0 : c0;
    t->clip_y0 = r0 < 0 ? 0 : r0;
    t->clip_x1 = c1 > t->cols ? t->cols : c1;
    t->clip_y1 = r1 > t->rows ? t->rows : r1;
}

static void t_unclip(hs_canvas *c) {
    text_impl *t = c->impl;
    t->clip_x0 = t->clip_y0 = 0;
    t->clip_x1 = t->cols;
    t->clip_y1 = t->rows;
}

void hs_canvas_text_init(hs_canvas *c, hs_text_grid *g) {
    text_impl *t = g;
    memset(c, 0, sizeof *c);
    c->impl = t;
    t_unclip(c);
    c->width = g->cols;
    c->height = g->rows;
    c->cell_w = c->cell_h = 1;
    c->is_text = 1;
    c->dark = g->dark;
    c->fill_rect = t_fill_rect;
    c->stroke_rect = t_stroke_rect;
    c->line = t_line;
    c->arrow = t_arrow;
    c->marker = t_marker;
    c->text = t_text;
    c->text_width = t_text_width;
    c->image = t_image;
    c->clip = t_clip;
    c->unclip = t_unclip;
}
