/* The cairo painter (see paint_cairo.h): pixel buffers for the SDL window, and PNG/SVG/PDF
 * export through a temporary file that is renamed into place only when complete. */
#include "paint_cairo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ext_of(const char *path) {
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    return (dot && (!slash || dot > slash)) ? dot + 1 : "";
}

int hs_export_format_known(const char *path) {
    const char *e = ext_of(path);
    return !strcasecmp(e, "png") || !strcasecmp(e, "svg") || !strcasecmp(e, "pdf");
}

#ifdef HS_HAVE_CAIRO
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>

/* cairo and fontconfig keep font caches for the life of the process; release them at exit so
 * leak checkers (ASan on quit) see only our own allocations. FcFini is looked up at run
 * time: fontconfig is loaded as cairo's dependency, and we do not link it ourselves. */
static void release_font_caches(void) {
    cairo_debug_reset_static_data();
    void (*fc_fini)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "FcFini");
    if (fc_fini) fc_fini();
}

static void register_release(void) { atexit(release_font_caches); }
static pthread_once_t release_once = PTHREAD_ONCE_INIT;

typedef struct {
    cairo_t *cr;
    cairo_surface_t *owned;     /* pixel canvases own their surface */
    int vector;                 /* SVG/PDF target: images are upscaled so viewers keep them crisp */
    cairo_font_face_t *regular, *bold;
    int clip_depth;
} cairo_impl;

static void set_col(cairo_t *cr, hs_rgba c) { cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a); }

static void c_fill_rect(hs_canvas *c, double x, double y, double w, double h, hs_rgba col) {
    cairo_impl *p = c->impl;
    if (w <= 0 || h <= 0) return;
    set_col(p->cr, col);
    cairo_rectangle(p->cr, x, y, w, h);
    cairo_fill(p->cr);
}

static void c_stroke_rect(hs_canvas *c, double x, double y, double w, double h, hs_rgba col,
                          double lw) {
    cairo_impl *p = c->impl;
    set_col(p->cr, col);
    cairo_set_line_width(p->cr, lw);
    cairo_set_line_join(p->cr, CAIRO_LINE_JOIN_MITER);
    cairo_rectangle(p->cr, x, y, w, h);
    cairo_stroke(p->cr);
}

static void c_line(hs_canvas *c, double x0, double y0, double x1, double y1, hs_rgba col,
                   double lw) {
    cairo_impl *p = c->impl;
    set_col(p->cr, col);
    cairo_set_line_width(p->cr, lw);
    cairo_set_line_cap(p->cr, CAIRO_LINE_CAP_BUTT);
    cairo_move_to(p->cr, x0, y0);
    cairo_line_to(p->cr, x1, y1);
    cairo_stroke(p->cr);
}

static void c_arrow(hs_canvas *c, double x0, double y0, double x1, double y1, hs_rgba col,
                    double lw) {
    cairo_impl *p = c->impl;
    double dx = x1 - x0, dy = y1 - y0, len = hypot(dx, dy);
    if (len < 1e-6) return;
    double head = fmax(5.0, 3.5 * lw);
    if (head > len * 0.6) head = len * 0.6;
    double ux = dx / len, uy = dy / len;
    double bx = x1 - ux * head, by = y1 - uy * head;
    set_col(p->cr, col);
    cairo_set_line_width(p->cr, lw);
    cairo_set_line_cap(p->cr, CAIRO_LINE_CAP_ROUND);
    cairo_move_to(p->cr, x0, y0);
    cairo_line_to(p->cr, bx, by);
    cairo_stroke(p->cr);
    cairo_move_to(p->cr, x1, y1);
    cairo_line_to(p->cr, bx - uy * head * 0.45, by + ux * head * 0.45);
    cairo_line_to(p->cr, bx + uy * head * 0.45, by - ux * head * 0.45);
    cairo_close_path(p->cr);
    cairo_fill(p->cr);
}

static void c_marker(hs_canvas *c, double x, double y, double size, hs_marker m, hs_rgba fill,
                     hs_rgba edge) {
    cairo_impl *p = c->impl;
    cairo_t *cr = p->cr;
    double r = size / 2;
    cairo_new_path(cr);
    switch (m) {
    case HS_MARK_CIRCLE: cairo_arc(cr, x, y, r, 0, 2 * M_PI); break;
    case HS_MARK_SQUARE: r *= 0.88; cairo_rectangle(cr, x - r, y - r, 2 * r, 2 * r); break;
    case HS_MARK_TRIANGLE:
        r *= 1.15;
        cairo_move_to(cr, x, y - r);
        cairo_line_to(cr, x + r * 0.866, y + r * 0.5);
        cairo_line_to(cr, x - r * 0.866, y + r * 0.5);
        cairo_close_path(cr);
        break;
    case HS_MARK_DIAMOND:
        r *= 1.15;
        cairo_move_to(cr, x, y - r);
        cairo_line_to(cr, x + r, y);
        cairo_line_to(cr, x, y + r);
        cairo_line_to(cr, x - r, y);
        cairo_close_path(cr);
        break;
    case HS_MARK_CROSS:
        cairo_set_line_width(cr, fmax(1.0, size / 4));
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
        set_col(cr, fill.a > 0 ? fill : edge);
        cairo_move_to(cr, x - r * 0.8, y - r * 0.8);
        cairo_line_to(cr, x + r * 0.8, y + r * 0.8);
        cairo_move_to(cr, x - r * 0.8, y + r * 0.8);
        cairo_line_to(cr, x + r * 0.8, y - r * 0.8);
        cairo_stroke(cr);
        return;
    }
    set_col(cr, fill);
    cairo_fill_preserve(cr);
    set_col(cr, edge);
    cairo_set_line_width(cr, fmax(0.6, size / 10));
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_stroke(cr);
}

static void use_font(cairo_impl *p, double size, int bold) {
    cairo_set_font_face(p->cr, bold ? p->bold : p->regular);
    cairo_set_font_size(p->cr, size > 0.5 ? size : 0.5);
}

static double c_text_width(hs_canvas *c, const char *s, double size) {
    cairo_impl *p = c->impl;
    cairo_text_extents_t te;
    use_font(p, size, 0);
    cairo_text_extents(p->cr, s, &te);
    return te.x_advance;
}

static void c_text(hs_canvas *c, double x, double y, const char *s, double size, hs_rgba col,
                   hs_align align, int bold) {
    cairo_impl *p = c->impl;
    cairo_text_extents_t te;
    cairo_font_extents_t fe;
    use_font(p, size, bold);
    cairo_text_extents(p->cr, s, &te);
    cairo_font_extents(p->cr, &fe);
    double x0 = align == HS_ALIGN_LEFT ? x : align == HS_ALIGN_CENTER ? x - te.x_advance / 2
                                                                      : x - te.x_advance;
    set_col(p->cr, col);
    cairo_move_to(p->cr, x0, y + (fe.ascent - fe.descent) / 2);
    cairo_show_text(p->cr, s);
    cairo_new_path(p->cr);
}

static void c_image(hs_canvas *c, double x, double y, double w, double h, const uint8_t *rgba,
                    int iw, int ih) {
    cairo_impl *p = c->impl;
    if (iw <= 0 || ih <= 0 || w <= 0 || h <= 0) return;
    /* Vector targets: upscale by an integer factor so each cell is a block of pixels and
     * viewers that interpolate images still show crisp cells. */
    int f = 1;
    if (p->vector) {
        int big = iw > ih ? iw : ih;
        f = (int)ceil(fmax(w, h) * 3 / big);
        if (f < 1) f = 1;
        while (f > 1 && (long)big * f > 1536) f--;
    }
    int W = iw * f, H = ih * f;
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(img);
        return;
    }
    cairo_surface_flush(img);
    uint8_t *data = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    for (int yy = 0; yy < H; yy++) {
        uint32_t *row = (uint32_t *)(data + (size_t)yy * stride);
        const uint8_t *src = rgba + (size_t)(yy / f) * iw * 4;
        for (int xx = 0; xx < W; xx++) {
            const uint8_t *s = src + (size_t)(xx / f) * 4;
            uint32_t a = s[3];
            uint32_t r = (s[0] * a + 127) / 255, g = (s[1] * a + 127) / 255,
                     b = (s[2] * a + 127) / 255;
            row[xx] = (a << 24) | (r << 16) | (g << 8) | b;
        }
    }
    cairo_surface_mark_dirty(img);
    cairo_save(p->cr);
    cairo_rectangle(p->cr, x, y, w, h);
    cairo_clip(p->cr);
    cairo_translate(p->cr, x, y);
    cairo_scale(p->cr, w / W, h / H);
    cairo_set_source_surface(p->cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(p->cr), CAIRO_FILTER_NEAREST);
    cairo_pattern_set_extend(cairo_get_source(p->cr), CAIRO_EXTEND_PAD);
    cairo_paint(p->cr);
    cairo_restore(p->cr);
    cairo_surface_destroy(img);
}

static void c_clip(hs_canvas *c, double x, double y, double w, double h) {
    cairo_impl *p = c->impl;
    cairo_save(p->cr);
    p->clip_depth++;
    cairo_rectangle(p->cr, x, y, w, h);
    cairo_clip(p->cr);
}

static void c_unclip(hs_canvas *c) {
    cairo_impl *p = c->impl;
    if (p->clip_depth > 0) {
        cairo_restore(p->cr);
        p->clip_depth--;
    }
}

hs_canvas *hs_canvas_cairo_new(cairo_t *cr, double width, double height, int dark) {
    pthread_once(&release_once, register_release);
    hs_canvas *c = calloc(1, sizeof *c);
    cairo_impl *p = calloc(1, sizeof *p);
    if (!c || !p) {
        free(c);
        free(p);
        return NULL;
    }
    p->cr = cr;
    cairo_surface_type_t st = cairo_surface_get_type(cairo_get_target(cr));
    p->vector = st == CAIRO_SURFACE_TYPE_SVG || st == CAIRO_SURFACE_TYPE_PDF ||
                st == CAIRO_SURFACE_TYPE_PS;
    p->regular = cairo_toy_font_face_create("DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                                            CAIRO_FONT_WEIGHT_NORMAL);
    p->bold = cairo_toy_font_face_create("DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                                         CAIRO_FONT_WEIGHT_BOLD);
    c->impl = p;
    c->width = width;
    c->height = height;
    c->cell_w = 7;
    c->cell_h = 15;
    c->is_text = 0;
    c->dark = dark;
    c->fill_rect = c_fill_rect;
    c->stroke_rect = c_stroke_rect;
    c->line = c_line;
    c->arrow = c_arrow;
    c->marker = c_marker;
    c->text = c_text;
    c->text_width = c_text_width;
    c->image = c_image;
    c->clip = c_clip;
    c->unclip = c_unclip;
    return c;
}

hs_canvas *hs_canvas_cairo_pixels(uint8_t *pixels, int pw, int ph, int stride, double scale,
                                  int dark, char *err, size_t errlen) {
    if (pw <= 0 || ph <= 0 || !(scale > 0) ||
        stride < cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, pw) || stride % 4) {
        snprintf(err, errlen, "cairo canvas: bad size %dx%d stride %d scale %g", pw, ph, stride,
                 scale);
        return NULL;
    }
    cairo_surface_t *s = cairo_image_surface_create_for_data(pixels, CAIRO_FORMAT_ARGB32, pw, ph,
                                                             stride);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        snprintf(err, errlen, "cairo canvas: %s", cairo_status_to_string(cairo_surface_status(s)));
        cairo_surface_destroy(s);
        return NULL;
    }
    cairo_t *cr = cairo_create(s);
    cairo_scale(cr, scale, scale);
    hs_canvas *c = hs_canvas_cairo_new(cr, pw / scale, ph / scale, dark);
    if (!c) {
        cairo_destroy(cr);
        cairo_surface_destroy(s);
        snprintf(err, errlen, "cairo canvas: out of memory");
        return NULL;
    }
    ((cairo_impl *)c->impl)->owned = s;
    return c;
}

void hs_canvas_cairo_free(hs_canvas *c) {
    if (!c) return;
    cairo_impl *p = c->impl;
    while (p->clip_depth > 0) c_unclip(c);
    cairo_font_face_destroy(p->regular);
    cairo_font_face_destroy(p->bold);
    if (p->owned) {
        cairo_surface_flush(p->owned);
        cairo_destroy(p->cr);
        cairo_surface_destroy(p->owned);
    }
    free(p);
    free(c);
}

static cairo_status_t write_fn(void *closure, const unsigned char *data, unsigned int len) {
    return fwrite(data, 1, len, (FILE *)closure) == len ? CAIRO_STATUS_SUCCESS
                                                        : CAIRO_STATUS_WRITE_ERROR;
}

static void draw_view(cairo_t *cr, double w, double h, int dark, hs_view_kind v,
                      const hs_view_input *in, int *oom) {
    hs_canvas *c = hs_canvas_cairo_new(cr, w, h, dark);
    if (!c) { *oom = 1; return; }
    hs_canvas_clear(c);
    hs_view_draw(c, v, in);
    hs_canvas_cairo_free(c);
}

int hs_export_view(const char *path, int width, int height, double scale, int dark,
                   hs_view_kind v, const hs_view_input *in, char *err, size_t errlen) {
    const char *e = ext_of(path);
    int png = !strcasecmp(e, "png"), svg = !strcasecmp(e, "svg"), pdf = !strcasecmp(e, "pdf");
    if (!png && !svg && !pdf) {
        snprintf(err, errlen, "%s: unknown image format (use .png, .svg or .pdf)", path);
        return -1;
    }
    if (width < 16 || height < 16 || width > 16384 || height > 16384) {
        snprintf(err, errlen, "%s: size %dx%d out of range (16..16384)", path, width, height);
        return -1;
    }
    if (!(scale > 0) || scale > 8 || (png && (double)width * height * scale * scale > 4e8)) {
        snprintf(err, errlen, "%s: scale %g out of range (0..8, at most 400M pixels)", path, scale);
        return -1;
    }
    if ((int)v < 0 || v >= HS_VIEW_COUNT) {
        snprintf(err, errlen, "%s: unknown view", path);
        return -1;
    }
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) { snprintf(err, errlen, "%s: out of memory", path); return -1; }
    snprintf(tmp, n, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    /* mkstemp makes the file 0600; give it the mode a plain fopen would have */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) { /* keep 0600: still a correct file */ }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    cairo_status_t st;
    int oom = 0;
    if (png) {
        int pw = (int)lrint(width * scale), ph = (int)lrint(height * scale);
        cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, pw, ph);
        cairo_t *cr = cairo_create(s);
        cairo_scale(cr, (double)pw / width, (double)ph / height);
        draw_view(cr, width, height, dark, v, in, &oom);
        cairo_destroy(cr);
        cairo_surface_flush(s);
        st = cairo_surface_status(s);
        if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_write_to_png_stream(s, write_fn, f);
        cairo_surface_destroy(s);
    } else {
        cairo_surface_t *s = svg ? cairo_svg_surface_create_for_stream(write_fn, f, width, height)
                                 : cairo_pdf_surface_create_for_stream(write_fn, f, width, height);
        if (pdf) cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "hybridscope");
        cairo_t *cr = cairo_create(s);
        draw_view(cr, width, height, dark, v, in, &oom);
        cairo_destroy(cr);
        cairo_surface_finish(s);
        st = cairo_surface_status(s);
        cairo_surface_destroy(s);
    }
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (st != CAIRO_STATUS_SUCCESS || bad || oom) {
        snprintf(err, errlen, "%s: cannot write: %s", path,
                 oom ? "out of memory" : st != CAIRO_STATUS_SUCCESS ? cairo_status_to_string(st)
                                                                 : strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

#else /* no cairo */

hs_canvas *hs_canvas_cairo_pixels(uint8_t *pixels, int pw, int ph, int stride, double scale,
                                  int dark, char *err, size_t errlen) {
    (void)pixels; (void)pw; (void)ph; (void)stride; (void)scale; (void)dark;
    snprintf(err, errlen, "built without cairo: no pixel rendering");
    return NULL;
}

void hs_canvas_cairo_free(hs_canvas *c) { (void)c; }

int hs_export_view(const char *path, int width, int height, double scale, int dark,
                   hs_view_kind v, const hs_view_input *in, char *err, size_t errlen) {
    (void)width; (void)height; (void)scale; (void)dark; (void)v; (void)in;
    snprintf(err, errlen, "%s: this build has no cairo, so it cannot export images", path);
    return -1;
}
#endif
