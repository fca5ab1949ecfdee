/* The drawing surface every view draws through, with two painters: cairo (window, PNG, SVG,
 * PDF) and text cells (ncurses). A view is written once against this interface. Coordinates
 * are in canvas units: pixels for cairo, cells for the text painter (cell_w x cell_h units
 * per cell lets a view size fonts and gaps for both). */
#ifndef HS_CANVAS_H
#define HS_CANVAS_H

#include <stdint.h>

typedef struct { float r, g, b, a; } hs_rgba;

typedef enum { HS_ALIGN_LEFT = 0, HS_ALIGN_CENTER, HS_ALIGN_RIGHT } hs_align;
typedef enum { HS_MARK_CIRCLE = 0, HS_MARK_SQUARE, HS_MARK_TRIANGLE, HS_MARK_DIAMOND,
               HS_MARK_CROSS } hs_marker;

typedef struct hs_canvas hs_canvas;
struct hs_canvas {
    double width, height;      /* in canvas units */
    double cell_w, cell_h;     /* size of one text cell in canvas units (1,1 for text) */
    int is_text;               /* 1 for the text-cell painter */
    int dark;                  /* theme */
    void *impl;
    void (*fill_rect)(hs_canvas *c, double x, double y, double w, double h, hs_rgba col);
    void (*stroke_rect)(hs_canvas *c, double x, double y, double w, double h, hs_rgba col, double lw);
    void (*line)(hs_canvas *c, double x0, double y0, double x1, double y1, hs_rgba col, double lw);
    void (*arrow)(hs_canvas *c, double x0, double y0, double x1, double y1, hs_rgba col, double lw);
    void (*marker)(hs_canvas *c, double x, double y, double size, hs_marker m, hs_rgba fill,
                   hs_rgba edge);
    /* Text with its baseline-centre at y (vertically centred on y). size in canvas units. */
    void (*text)(hs_canvas *c, double x, double y, const char *s, double size, hs_rgba col,
                 hs_align align, int bold);
    double (*text_width)(hs_canvas *c, const char *s, double size);
    /* An image of w x h RGBA pixels (row-major, 8-bit straight alpha) scaled into the rect;
     * nearest-neighbour, so heatmap cells stay crisp. Embedded as an image in SVG/PDF. */
    void (*image)(hs_canvas *c, double x, double y, double w, double h, const uint8_t *rgba,
                  int iw, int ih);
    void (*clip)(hs_canvas *c, double x, double y, double w, double h);
    void (*unclip)(hs_canvas *c);
};

#endif
