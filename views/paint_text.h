/* The text-cell painter: an hs_canvas over a plain grid of cells (no ncurses here; the tui
 * blits the grid). Canvas units are cells (cell_w = cell_h = 1).
 *
 * Modes:
 *   HS_TEXT_UTF8 + 256 colours: heatmaps as half blocks (U+2580, each cell shows two vertical
 *     pixels: fg = upper, bg = lower), scatter markers as braille dots (U+2800..U+28FF, 2x4
 *     dots per cell), box-drawing lines.
 *   HS_TEXT_UTF8 + 8 colours: the same glyphs; the front end quantises colours with
 *     hs_text_rgb_to_8.
 *   HS_TEXT_ASCII: only bytes 32..126: heatmaps as a density ramp " .:-=+*#%@", markers as
 *     letters (o s a d x for circle square triangle diamond cross), lines as - | / \ +.
 * Cells always hold full RGB; quantising to the terminal's palette is the front end's job. */
#ifndef HS_PAINT_TEXT_H
#define HS_PAINT_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "canvas.h"

typedef enum { HS_TEXT_UTF8 = 0, HS_TEXT_ASCII = 1 } hs_text_charset;

typedef struct {
    uint32_t ch;               /* Unicode code point (ASCII only in HS_TEXT_ASCII) */
    uint8_t fg[3], bg[3];      /* RGB */
    uint8_t bold;
} hs_text_cell;

typedef struct {
    int cols, rows;
    hs_text_cell *cells;       /* [rows * cols], row-major */
    hs_text_charset charset;
    int colors;                /* 256 or 8: palette the front end will show (views may use
                                  it to pick more distinct colours); 0 = monochrome */
    int dark;
    int clip_x0, clip_y0, clip_x1, clip_y1;  /* painter state: current clip, half-open cells */
} hs_text_grid;

/* Allocates a cols x rows grid cleared to the theme background. Returns 0, -1 on bad size or
 * out of memory. */
int hs_text_grid_init(hs_text_grid *g, int cols, int rows, hs_text_charset cs, int colors,
                      int dark);
/* Resizes (content cleared). */
int hs_text_grid_resize(hs_text_grid *g, int cols, int rows);
void hs_text_grid_clear(hs_text_grid *g);
void hs_text_grid_free(hs_text_grid *g);
static inline hs_text_cell *hs_text_grid_at(hs_text_grid *g, int col, int row) {
    return &g->cells[(size_t)row * (size_t)g->cols + (size_t)col];
}

/* Canvas over the grid (the canvas struct is the caller's; no allocation). The grid must
 * outlive the canvas. */
void hs_canvas_text_init(hs_canvas *c, hs_text_grid *g);

/* One row as UTF-8 text (trailing spaces kept), NUL-terminated; returns bytes written
 * (excluding the NUL). `out` needs at most cols * 4 + 1 bytes. */
size_t hs_text_grid_row_utf8(const hs_text_grid *g, int row, char *out, size_t n);
/* The whole grid, rows joined by '\n' (malloc'd; free()). For tests and dumps. */
char *hs_text_grid_to_utf8(const hs_text_grid *g);

/* Palette quantisation for the blit: xterm-256 index (16..255) and ANSI 8-colour index
 * (0 black, 1 red, 2 green, 3 yellow, 4 blue, 5 magenta, 6 cyan, 7 white). */
int hs_text_rgb_to_256(const uint8_t rgb[3]);
int hs_text_rgb_to_8(const uint8_t rgb[3]);

/* Encodes one code point as UTF-8 into out (>= 4 bytes); returns bytes. */
int hs_text_utf8_encode(char *out, uint32_t cp);

#endif
