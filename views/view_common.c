/* Shared drawing pieces of the views: theme, sizes, number formats, axes, heatmaps, colour
 * bars, legends and placeholders (see view_common.h). */
#include "view_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hs_rgba rgb(unsigned v, float a) {
    hs_rgba c = { ((v >> 16) & 255) / 255.0f, ((v >> 8) & 255) / 255.0f, (v & 255) / 255.0f, a };
    return c;
}

hs_rgba hs_vc_muted(int dark) { return rgb(dark ? 0xa0a4ad : 0x5c6068, 1); }
hs_rgba hs_vc_grid(int dark) { return rgb(dark ? 0x4a4d55 : 0xc8cad0, 1); }
hs_rgba hs_vc_panel(int dark) { return rgb(dark ? 0x2a2c33 : 0xf0f1f4, 1); }
hs_rgba hs_vc_nan(int dark) { return rgb(dark ? 0x25262c : 0xf4f4f6, 1); }
hs_rgba hs_vc_accent(int dark) { return rgb(dark ? 0xffffff : 0x000000, 1); }

hs_rgba hs_vc_alpha(hs_rgba c, float a) {
    c.a = a;
    return c;
}

hs_rgba hs_vc_mix(hs_rgba a, hs_rgba b, double t) {
    hs_rgba c = { (float)(a.r + (b.r - a.r) * t), (float)(a.g + (b.g - a.g) * t),
                  (float)(a.b + (b.b - a.b) * t), 1 };
    return c;
}

double hs_vc_font(hs_canvas *c) {
    if (c->is_text) return 1;
    double f = fmin(c->width / 90.0, c->height / 55.0);
    return f < 10 ? 10 : f > 36 ? 36 : f;
}

double hs_vc_line(hs_canvas *c) { return c->is_text ? 1 : hs_vc_font(c) * 1.35; }
double hs_vc_pad(hs_canvas *c) { return c->is_text ? 1 : hs_vc_font(c) * 0.5; }


int hs_vc_ascii(hs_canvas *c) {
    return c->is_text && c->text_width(c, "\xe2\x80\xa6", 1) > 1;
}

const char *hs_vc_branch_label(hs_mixer_type t) {
    static const char *const l[] = { "NoPE", "RoPE", "SWA", "GLA", "GDN" };
    return (int)t >= 0 && t < HS_MIXER_TYPES ? l[t] : "?";
}

void hs_vc_fmt_tokens(char *out, size_t n, double v) {
    long long k = llround(v);
    if (k != 0 && k % 1048576 == 0) snprintf(out, n, "%lldM", k / 1048576);
    else if (k != 0 && k % 1024 == 0) snprintf(out, n, "%lldK", k / 1024);
    else snprintf(out, n, "%lld", k);
}

void hs_vc_fmt_num(char *out, size_t n, double v) {
    double a = fabs(v);
    if (v == 0) snprintf(out, n, "0");
    else if (a >= 1e5 || a < 1e-3) {
        int e = (int)floor(log10(a) + 1e-9);
        double m = v / pow(10, e);
        if (fabs(m - lrint(m)) < 1e-6) snprintf(out, n, "%.0fe%d", m, e);
        else snprintf(out, n, "%.1fe%d", m, e);
    } else if (a >= 100 || fabs(v - lrint(v)) < 1e-9) snprintf(out, n, "%.0f", v);
    else if (a >= 10) snprintf(out, n, "%.1f", v);
    else {
        snprintf(out, n, "%.3g", v);
    }
}

void hs_vc_fmt_bytes(char *out, size_t n, double v) {
    static const char *const u[] = { "B", "KB", "MB", "GB", "TB", "PB" };
    int i = 0;
    while (v >= 1024 && i < 5) { v /= 1024; i++; }
    if (i == 0 || v >= 100) snprintf(out, n, "%.0f %s", v, u[i]);
    else snprintf(out, n, "%.3g %s", v, u[i]);
}

/* ---- axes ---- */

double hs_axis_map(const hs_axis *a, double v) {
    double u;
    if (a->log) {
        if (!(v > 0)) v = a->v0;
        u = (log10(v) - log10(a->v0)) / (log10(a->v1) - log10(a->v0));
    } else u = (v - a->v0) / (a->v1 - a->v0);
    if (!isfinite(u)) u = 0;
    return a->p0 + (a->p1 - a->p0) * u;
}

double hs_axis_unmap(const hs_axis *a, double p) {
    double u = (p - a->p0) / (a->p1 - a->p0);
    if (!isfinite(u)) u = 0;
    if (a->log) return pow(10, log10(a->v0) + u * (log10(a->v1) - log10(a->v0)));
    return a->v0 + u * (a->v1 - a->v0);
}

int hs_vc_ticks(const hs_axis *a, int max_ticks, int pow2, double *out, int cap) {
    double lo = fmin(a->v0, a->v1), hi = fmax(a->v0, a->v1);
    if (max_ticks < 2) max_ticks = 2;
    if (!(hi > lo)) {
        if (cap > 0) out[0] = lo;
        return cap > 0 ? 1 : 0;
    }
    int n = 0;
    if (a->log && lo > 0) {
        double base = pow2 ? 2 : 10;
        int e0 = (int)ceil(log(lo) / log(base) - 1e-9), e1 = (int)floor(log(hi) / log(base) + 1e-9);
        int count = e1 - e0 + 1, every = 1;
        while (count / every > max_ticks) every++;
        for (int e = e0; e <= e1 && n < cap; e++)
            if ((e - e0) % every == 0) out[n++] = pow(base, e);
        if (!pow2 && count <= 2 && max_ticks >= 4) {  /* short decade span: add 2 and 5 */
            for (int e = e0 - 1; e <= e1 && n < cap; e++)
                for (int m = 2; m <= 5; m += 3) {
                    double v = m * pow(10, e);
                    if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9) && n < cap) out[n++] = v;
                }
            /* sort */
            for (int i = 1; i < n; i++)
                for (int j = i; j > 0 && out[j] < out[j - 1]; j--) {
                    double t = out[j]; out[j] = out[j - 1]; out[j - 1] = t;
                }
        }
        if (n == 0 && cap >= 2) { out[0] = lo; out[1] = hi; n = 2; }
        return n;
    }
    double raw = (hi - lo) / (max_ticks - 1), step;
    if (pow2 && raw >= 1) {
        step = 1;
        while (step < raw) step *= 2;
    } else {
        double mag = pow(10, floor(log10(raw)));
        double f = raw / mag;
        step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
    }
    double first = ceil(lo / step - 1e-9) * step;
    for (double v = first; v <= hi + step * 1e-9 && n < cap; v += step) out[n++] = fabs(v) < step * 1e-9 ? 0 : v;
    return n;
}

static void fmt_tick(char *out, size_t n, double v, int fmt) {
    switch (fmt) {
    case HS_TICK_TOKENS: hs_vc_fmt_tokens(out, n, v); break;
    case HS_TICK_PERCENT: snprintf(out, n, "%.0f%%", v * 100); break;
    case HS_TICK_BYTES: hs_vc_fmt_bytes(out, n, v); break;
    default: hs_vc_fmt_num(out, n, v); break;
    }
}

double hs_vc_axis_left_room(hs_canvas *c) {
    return c->is_text ? 6 : hs_vc_font(c) * 3.6;
}

double hs_vc_axis_bottom_room(hs_canvas *c, int with_title) {
    double l = hs_vc_line(c);
    return c->is_text ? 1 + with_title : l * 1.3 + (with_title ? l * 1.1 : 0);
}

void hs_vc_axes(hs_canvas *c, double x, double y, double w, double h, const hs_axis *ax,
                const hs_axis *ay, int fmt_x, int fmt_y, int pow2_x, int pow2_y,
                const char *title_x, const char *title_y, int flags) {
    int grid = flags & HS_AXES_GRID;
    int dark = c->dark;
    double fs = hs_vc_font(c), ln = hs_vc_line(c);
    hs_rgba fg = hs_theme_fg(dark), mu = hs_vc_muted(dark), gr = hs_vc_grid(dark);
    double ticks[64];
    char lab[48];
    double tick_len = c->is_text ? 0 : fs * 0.35;
    if (ax) {
        /* as many ticks as labels fit */
        double lw = c->is_text ? 6 : fs * 3.5;
        int maxt = (int)(w / lw);
        if (maxt > 10) maxt = 10;
        int n = hs_vc_ticks(ax, maxt, pow2_x, ticks, 64);
        double last_end = -1e30;
        for (int i = 0; i < n; i++) {
            double px = hs_axis_map(ax, ticks[i]);
            if (px < x - 0.5 || px > x + w + 0.5) continue;
            if (grid && !c->is_text) c->line(c, px, y, px, y + h, hs_vc_alpha(gr, 0.6f), 0.6);
            if (!c->is_text) c->line(c, px, y + h, px, y + h + tick_len, fg, 1);
            fmt_tick(lab, sizeof lab, ticks[i], fmt_x);
            double tw = c->text_width(c, lab, fs * 0.9);
            if (px - tw / 2 < last_end + (c->is_text ? 1 : fs * 0.4)) continue;
            double lx = px;
            if (lx + tw / 2 > c->width) lx = c->width - tw / 2;
            c->text(c, lx, c->is_text ? y + h + 1.5 : y + h + tick_len + ln * 0.55, lab,
                    fs * 0.9, mu, HS_ALIGN_CENTER, 0);
            last_end = lx + tw / 2;
        }
        if (title_x)
            c->text(c, x + w / 2, c->is_text ? y + h + 2.5 : y + h + tick_len + ln * 1.6,
                    title_x, fs, fg, HS_ALIGN_CENTER, 0);
    }
    if (ay) {
        int maxt = (int)(h / (c->is_text ? 2 : ln * 2.2));
        if (maxt > 8) maxt = 8;
        int n = hs_vc_ticks(ay, maxt, pow2_y, ticks, 64);
        for (int i = 0; i < n; i++) {
            double py = hs_axis_map(ay, ticks[i]);
            if (py < y - 0.5 || py > y + h + 0.5) continue;
            if (grid && !c->is_text) c->line(c, x, py, x + w, py, hs_vc_alpha(gr, 0.6f), 0.6);
            if (!c->is_text) c->line(c, x - tick_len, py, x, py, fg, 1);
            fmt_tick(lab, sizeof lab, ticks[i], fmt_y);
            double ty = c->is_text ? floor(py) + 0.5 : py;
            if (c->is_text && ty > y + h) ty = floor(y + h - 1) + 0.5;
            c->text(c, x - (c->is_text ? 1 : tick_len + fs * 0.3), ty, lab, fs * 0.9, mu,
                    HS_ALIGN_RIGHT, 0);
        }
        if (title_y)
            c->text(c, c->is_text ? x - 1 : x - tick_len, c->is_text ? y - 0.5 : y - ln * 0.7,
                    title_y, fs, fg, HS_ALIGN_LEFT, 0);
    }
    /* frame (pixel canvases) or the two axis lines outside the plot (text cells) */
    if (c->is_text) {
        if (ay) c->line(c, x - 0.5, y, x - 0.5, y + h, gr, 1);
        if (ax) c->line(c, x, y + h + 0.5, x + w, y + h + 0.5, gr, 1);
    } else if (!(flags & HS_AXES_NOFRAME)) {
        c->stroke_rect(c, x, y, w, h, fg, 1);
    }
}

/* ---- heatmaps ---- */

double hs_vc_map_rgba(uint8_t *rgba, const hs_pooled_map *m, int log_color, double decades,
                      double vmax) {
    size_t n = (size_t)m->bins_t * (size_t)m->bins_s;
    if (!(vmax > 0)) {
        vmax = 0;
        for (size_t i = 0; i < n; i++)
            if (isfinite(m->cells[i]) && m->cells[i] > vmax) vmax = m->cells[i];
    }
    double lmax = vmax > 0 ? log10(vmax) : 0;
    for (size_t i = 0; i < n; i++) {
        float v = m->cells[i];
        uint8_t *p = rgba + i * 4;
        if (!isfinite(v)) {
            p[0] = p[1] = p[2] = p[3] = 0;
            continue;
        }
        double t;
        if (!(vmax > 0)) t = 0;
        else if (log_color) t = v > 0 ? (log10(v) - lmax + decades) / decades : 0;
        else t = v / vmax;
        hs_rgba c = hs_cmap_viridis(t);
        p[0] = (uint8_t)lrintf(c.r * 255);
        p[1] = (uint8_t)lrintf(c.g * 255);
        p[2] = (uint8_t)lrintf(c.b * 255);
        p[3] = 255;
    }
    return vmax;
}

void hs_vc_heatmap(hs_canvas *c, double x, double y, double w, double h, const hs_pooled_map *m,
                   int log_color, double *vmax_out) {
    int dark = c->dark;
    if (!c->is_text) {
        /* no-causal-entry region: a faint hatch, so it never reads as "attention zero" */
        c->fill_rect(c, x, y, w, h, hs_vc_nan(dark));
        c->clip(c, x, y, w, h);
        double step = fmax(4, hs_vc_font(c) * 0.6);
        hs_rgba hc = hs_vc_alpha(hs_vc_grid(dark), 0.8f);
        for (double d = -h; d < w; d += step) c->line(c, x + d, y + h, x + d + h, y, hc, 0.5);
        c->unclip(c);
    }
    double vmax = 0;
    if (m && m->cells && m->bins_t > 0 && m->bins_s > 0) {
        uint8_t *rgba = malloc((size_t)m->bins_t * m->bins_s * 4);
        if (rgba) {
            vmax = hs_vc_map_rgba(rgba, m, log_color, HS_VC_LOG_DECADES, 0);
            c->image(c, x, y, w, h, rgba, m->bins_s, m->bins_t);
            free(rgba);
        }
    }
    if (vmax_out) *vmax_out = vmax;
}

void hs_vc_colorbar(hs_canvas *c, double x, double y, double w, double h, double vmax,
                    int log_color, double decades, const char *title) {
    int dark = c->dark;
    double fs = hs_vc_font(c);
    enum { N = 128 };
    uint8_t px[N * 4];
    for (int i = 0; i < N; i++) {
        hs_rgba col = hs_cmap_viridis(1.0 - (i + 0.5) / N);
        px[i * 4 + 0] = (uint8_t)lrintf(col.r * 255);
        px[i * 4 + 1] = (uint8_t)lrintf(col.g * 255);
        px[i * 4 + 2] = (uint8_t)lrintf(col.b * 255);
        px[i * 4 + 3] = 255;
    }
    c->image(c, x, y, w, h, px, 1, N);
    if (!c->is_text) c->stroke_rect(c, x, y, w, h, hs_vc_grid(dark), 0.8);
    if (title)
        c->text(c, x, c->is_text ? y - 0.5 : y - hs_vc_line(c) * 0.7, title, fs * 0.9,
                hs_vc_muted(dark), HS_ALIGN_LEFT, 0);
    if (!(vmax > 0)) return;
    hs_axis a = { log_color ? vmax * pow(10, -decades) : 0, vmax, y + h, y, log_color };
    double ticks[16];
    int n = hs_vc_ticks(&a, c->is_text ? (int)(h / 2) + 1 : (int)(h / (fs * 5)) + 2, 0, ticks, 16);
    char lab[32];
    for (int i = 0; i < n; i++) {
        double py = hs_axis_map(&a, ticks[i]);
        if (!c->is_text) c->line(c, x + w, py, x + w + fs * 0.3, py, hs_theme_fg(dark), 0.8);
        hs_vc_fmt_num(lab, sizeof lab, ticks[i]);
        double ty = c->is_text ? floor(py < y + h ? py : y + h - 1) + 0.5 : py;
        c->text(c, x + w + (c->is_text ? 1 : fs * 0.5), ty, lab, fs * 0.85, hs_vc_muted(dark),
                HS_ALIGN_LEFT, 0);
    }
}

/* ---- legend ---- */

void hs_vc_legend_size(hs_canvas *c, const hs_legend_item *it, int n, double max_w, double *w,
                       double *h) {
    double fs = hs_vc_font(c) * (c->is_text ? 1 : 0.9), ln = c->is_text ? 1 : hs_vc_line(c) * 0.95;
    double pad = c->is_text ? 0 : fs * 0.5, sym = c->is_text ? 2 : fs * 1.8;
    double wmax = 0;
    for (int i = 0; i < n; i++) wmax = fmax(wmax, c->text_width(c, it[i].label, fs));
    *w = pad * 2 + sym + wmax + (c->is_text ? 0 : fs * 0.3);
    if (max_w > 0 && *w > max_w) *w = max_w;
    *h = n > 0 ? pad * 2 + ln * n : 0;
}

void hs_vc_legend_corner(hs_canvas *c, double x, double y, double w, double h, double lw,
                         double lh, const double *px, const double *py, int np, double *x_right,
                         double *y_top) {
    double m = c->is_text ? 0 : hs_vc_pad(c);
    double xr[4] = { x + w - m, x + lw + m, x + w - m, x + lw + m };
    double yt[4] = { y + m, y + m, y + h - lh - m, y + h - lh - m };
    int best = 0, best_n = -1;
    for (int k = 0; k < 4; k++) {
        int cnt = 0;
        for (int i = 0; i < np; i++)
            cnt += px[i] >= xr[k] - lw - m && px[i] <= xr[k] + m && py[i] >= yt[k] - m &&
                   py[i] <= yt[k] + lh + m;
        if (best_n < 0 || cnt < best_n) { best_n = cnt; best = k; }
    }
    *x_right = xr[best];
    *y_top = yt[best];
}

double hs_vc_legend(hs_canvas *c, double x_right, double y_top, const hs_legend_item *it,
                    int n, double max_w) {
    if (n <= 0) return 0;
    int dark = c->dark;
    double fs = hs_vc_font(c) * (c->is_text ? 1 : 0.9), ln = c->is_text ? 1 : hs_vc_line(c) * 0.95;
    double pad = c->is_text ? 0 : fs * 0.5, sym = c->is_text ? 2 : fs * 1.8;
    double w, h;
    hs_vc_legend_size(c, it, n, max_w, &w, &h);
    double x = x_right - w;
    if (!c->is_text) {
        c->fill_rect(c, x, y_top, w, h, hs_vc_alpha(hs_theme_bg(dark), 0.88f));
        c->stroke_rect(c, x, y_top, w, h, hs_vc_grid(dark), 0.8);
    } else {
        c->fill_rect(c, x, y_top, w, h, hs_theme_bg(dark));
    }
    char buf[128];
    for (int i = 0; i < n; i++) {
        double cy = y_top + pad + ln * (i + 0.5);
        double sx = x + pad + sym / 2;
        if (it[i].kind == 0) {
            c->marker(c, c->is_text ? x + 0.5 : sx, cy, c->is_text ? 1 : fs * 0.75, it[i].marker,
                      it[i].color, hs_vc_alpha(hs_theme_fg(dark), 0.7f));
        } else if (it[i].kind == 1) {
            if (c->is_text) c->text(c, x, cy, "--", 1, it[i].color, HS_ALIGN_LEFT, 1);
            else if (it[i].dashed) {
                for (int k = 0; k < 3; k++)
                    c->line(c, sx - sym / 2 + k * sym / 2.6, cy, sx - sym / 2 + k * sym / 2.6 + sym / 5,
                            cy, it[i].color, 2);
            } else c->line(c, sx - sym / 2, cy, sx + sym / 2, cy, it[i].color, 2);
        } else {
            if (c->is_text) c->fill_rect(c, x, cy - 0.5, 1, 1, it[i].color);
            else c->fill_rect(c, sx - fs * 0.45, cy - fs * 0.45, fs * 0.9, fs * 0.9, it[i].color);
        }
        hs_vc_fit(c, buf, sizeof buf, it[i].label, fs, w - pad * 2 - sym);
        c->text(c, x + pad + sym + (c->is_text ? 0 : fs * 0.2), cy, buf, fs, hs_theme_fg(dark),
                HS_ALIGN_LEFT, 0);
    }
    return h;
}

/* ---- text helpers ---- */

double hs_vc_bold_width(hs_canvas *c, const char *s, double size) {
    return c->text_width(c, s, size) * (c->is_text ? 1 : 1.16);
}

void hs_vc_fit(hs_canvas *c, char *out, size_t n, const char *s, double size, double max_w) {
    snprintf(out, n, "%s", s);
    if (c->text_width(c, out, size) <= max_w) return;
    size_t len = strlen(out);
    while (len > 0) {
        len--;
        while (len > 0 && ((unsigned char)out[len] & 0xc0) == 0x80) len--;  /* UTF-8 boundary */
        if (len + 3 > n) continue;
        memcpy(out + len, "..", 3);
        if (c->text_width(c, out, size) <= max_w) return;
    }
    out[0] = 0;
}

void hs_vc_placeholder(hs_canvas *c, double x, double y, double w, double h, const char *msg) {
    char buf[256];
    double fs = hs_vc_font(c);
    hs_vc_fit(c, buf, sizeof buf, msg, fs, w - 2 * hs_vc_pad(c));
    if (!c->is_text)
        c->stroke_rect(c, x + hs_vc_pad(c), y + hs_vc_pad(c), w - 2 * hs_vc_pad(c),
                       h - 2 * hs_vc_pad(c), hs_vc_grid(c->dark), 1);
    c->text(c, x + w / 2, c->is_text ? floor(y + h / 2) + 0.5 : y + h / 2, buf, fs,
            hs_vc_muted(c->dark), HS_ALIGN_CENTER, 0);
}

double hs_vc_title_height(hs_canvas *c) {
    return c->is_text ? 1 : hs_vc_pad(c) + hs_vc_line(c) * 1.3;
}

double hs_vc_title(hs_canvas *c, const hs_view_input *in, const char *title) {
    int dark = c->dark;
    double fs = hs_vc_font(c), ln = hs_vc_line(c), pad = hs_vc_pad(c);
    double y = c->is_text ? 0.5 : pad + ln * 0.55;
    double x = c->is_text ? 0 : pad * 1.5;
    c->text(c, x, y, title, fs * (c->is_text ? 1 : 1.15), hs_theme_fg(dark), HS_ALIGN_LEFT, 1);
    double tw = hs_vc_bold_width(c, title, fs * (c->is_text ? 1 : 1.15));
    char sub[384], kn[256] = "";
    if (in && in->knobs) hs_knobs_describe(kn, sizeof kn, in->knobs);
    char len[32] = "";
    if (in && in->length > 0) hs_vc_fmt_tokens(len, sizeof len, in->length);
    snprintf(sub, sizeof sub, "%s%s%s%s%s%s", in && in->model_name ? in->model_name : "",
             kn[0] ? "  knobs: " : "", kn, len[0] ? "  L=" : "", len, "");
    char fit[384];
    double sx = x + tw + (c->is_text ? 2 : fs);
    hs_vc_fit(c, fit, sizeof fit, sub, fs * 0.9, c->width - sx - pad);
    if (fit[0]) c->text(c, sx, y, fit, fs * 0.9, hs_vc_muted(dark), HS_ALIGN_LEFT, 0);
    return hs_vc_title_height(c);
}
