/* The cairo painter: an hs_canvas over a cairo_t, plus the two things front ends need from it:
 * drawing into a caller-owned ARGB32 pixel buffer (SDL streaming texture) and headless export
 * to PNG/SVG/PDF. Canvas units are logical pixels (device pixels / scale) for raster targets
 * and points for SVG/PDF. Heatmaps go through canvas->image, so vector files embed them as
 * images while text, lines and markers stay vector. Font: "DejaVu Sans".
 *
 * The functions that take no cairo types are declared in every build; without cairo they
 * fail with a message, so callers need no #ifdef. */
#ifndef HS_PAINT_CAIRO_H
#define HS_PAINT_CAIRO_H

#include <stddef.h>
#include <stdint.h>

#include "canvas.h"
#include "views.h"

/* Canvas over a premultiplied ARGB32 buffer (cairo's and SDL_PIXELFORMAT_ARGB8888's native
 * layout on little-endian machines) of pw x ph device pixels with `stride` bytes per row.
 * `scale` is device pixels per canvas unit (HiDPI: 2), so c->width = pw / scale. The buffer
 * must outlive the canvas. Returns NULL (message in err) on failure; free with
 * hs_canvas_cairo_free (which flushes the drawing into the buffer). */
hs_canvas *hs_canvas_cairo_pixels(uint8_t *pixels, int pw, int ph, int stride, double scale,
                                  int dark, char *err, size_t errlen);
void hs_canvas_cairo_free(hs_canvas *c);

/* Renders view v alone into an image file chosen by the extension of `path`: .png (width x
 * height canvas units, times `scale` device pixels), .svg or .pdf (width x height points,
 * vector). Writes to a temporary file next to `path` and renames it, so a failed export never
 * leaves a partial file. Returns 0, or -1 with a one-line message in err naming the path. */
int hs_export_view(const char *path, int width, int height, double scale, int dark,
                   hs_view_kind v, const hs_view_input *in, char *err, size_t errlen);

/* 1 when `path` ends in an extension hs_export_view understands. */
int hs_export_format_known(const char *path);

#ifdef HS_HAVE_CAIRO
#include <cairo.h>
/* Canvas over an existing cairo context; (0,0)-(width,height) in the context's user space.
 * The context is borrowed (not destroyed by hs_canvas_cairo_free). */
hs_canvas *hs_canvas_cairo_new(cairo_t *cr, double width, double height, int dark);
#endif

#endif
