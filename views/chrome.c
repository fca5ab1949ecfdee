/* Chrome shared by both front ends: view tabs (top), status line and key bar (bottom), the
 * help overlay, and the one key map table they all list. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_common.h"

/* Actions stay short (<= 26 characters) so the help fits two columns at 80x24. */
const hs_key_help hs_key_map[] = {
    { "1-6 Tab", "switch view (or click tab)" },
    { "arrows", "select head/cell; pan zoom" },
    { "PgUp PgDn", "needle task / head layer" },
    { "Enter", "run this view's job" },
    { "Esc", "cancel job, close help" },
    { "w", "SWLA off/exact/overlap" },
    { "[ ]", "SWLA window /2 x2" },
    { "g", "log scaling on/off" },
    { "{ }", "log-scaling L0 /2 x2" },
    { "a A", "SWA window /2 x2" },
    { "r R", "RoPE window /2 x2" },
    { "m", "hybrid ratio (sibling)" },
    { "< >", "context length /2 x2" },
    { "t", "task SK1/SK2/SK3" },
    { "d D", "needle depth -/+10%" },
    { "k K", "top-k /2 x2" },
    { "x", "ablate selected head" },
    { "c", "device cpu/cuda" },
    { "+ - wheel", "zoom head map; drag pans" },
    { "0", "reset zoom" },
    { "l", "colour bar linear/log" },
    { "p", "pin perplexity curve" },
    { "P", "clear pinned curves" },
    { "T", "light/dark theme" },
    { "s", "save view as image" },
    { "? F1", "this help" },
    { "q", "quit" },
};
const int hs_key_map_len = (int)(sizeof hs_key_map / sizeof hs_key_map[0]);

/* The key bar's short list, most important first (dropped from the end when narrow). */
static const struct { const char *key, *what; } bar[] = {
    { "?", "help" }, { "q", "quit" }, { "1-6", "view" }, { "Enter", "run" }, { "w", "SWLA" },
    { "g", "log" }, { "<>", "length" }, { "t", "task" }, { "x", "ablate" }, { "s", "save" },
    { "Esc", "cancel" },
};

static const char *const tab_names[HS_VIEW_COUNT] = { "Heads", "Head", "Tidal", "Needle",
                                                      "PPL", "Model" };

double hs_chrome_top_height(hs_canvas *c) { return c->is_text ? 1 : hs_vc_line(c) * 1.7; }
double hs_chrome_bottom_height(hs_canvas *c) { return c->is_text ? 2 : hs_vc_line(c) * 3.0; }

/* Tab i's label and its x extent; returns 0 when it does not fit. One geometry for drawing
 * and for clicks. */
static int tab_rect(hs_canvas *c, int i, char *lab, size_t n, double *x, double *w) {
    double fs = hs_vc_font(c), pad = hs_vc_pad(c);
    double tx = c->is_text ? 0 : pad;
    int narrow = c->is_text && c->width < 64;
    for (int k = 0; k <= i; k++) {
        if (narrow) snprintf(lab, n, "%d%.3s", k + 1, tab_names[k]);
        else snprintf(lab, n, "%d %s", k + 1, tab_names[k]);
        double tw = hs_vc_bold_width(c, lab, fs) + (c->is_text ? 2 : fs * 1.6);
        if (tx + tw > c->width) return 0;
        if (k == i) {
            *x = tx;
            *w = tw;
            return 1;
        }
        tx += tw + (c->is_text ? 0 : pad * 0.3);
    }
    return 0;
}

int hs_chrome_tab_at(hs_canvas *c, double x, double y) {
    if (y < 0 || y >= hs_chrome_top_height(c)) return -1;
    for (int i = 0; i < HS_VIEW_COUNT; i++) {
        char lab[32];
        double tx, tw;
        if (!tab_rect(c, i, lab, sizeof lab, &tx, &tw)) break;
        if (x >= tx && x < tx + tw) return i;
    }
    return -1;
}

static void draw_tabs(hs_canvas *c, hs_view_kind sel) {
    int dark = c->dark;
    double fs = hs_vc_font(c), h = hs_chrome_top_height(c), pad = hs_vc_pad(c);
    hs_rgba panel = hs_vc_panel(dark), fg = hs_theme_fg(dark);
    c->fill_rect(c, 0, 0, c->width, h, panel);
    double x = c->is_text ? 0 : pad;
    double cy = c->is_text ? 0.5 : h / 2;
    for (int i = 0; i < HS_VIEW_COUNT; i++) {
        char lab[32];
        double w;
        if (!tab_rect(c, i, lab, sizeof lab, &x, &w)) break;
        if ((int)sel == i) {
            c->fill_rect(c, x, c->is_text ? 0 : h * 0.12, w, c->is_text ? 1 : h * 0.88,
                         hs_theme_bg(dark));
            if (!c->is_text) c->fill_rect(c, x, h - 2.5, w, 2.5, hs_branch_color(HS_ROPE, dark));
        }
        c->text(c, x + w / 2, cy, lab, fs, (int)sel == i ? fg : hs_vc_muted(dark),
                HS_ALIGN_CENTER, (int)sel == i);
        x += w + (c->is_text ? 0 : pad * 0.3);
    }
    const char *brand = "hybridscope";
    double bw = c->text_width(c, brand, fs);
    if (x + bw + pad * 2 < c->width)
        c->text(c, c->width - (c->is_text ? 1 : pad * 1.5), cy, brand, fs, hs_vc_muted(dark),
                HS_ALIGN_RIGHT, 1);
}

static void draw_status(hs_canvas *c, const hs_chrome_input *in, double y, double h) {
    int dark = c->dark;
    double fs = hs_vc_font(c) * (c->is_text ? 1 : 0.92), pad = hs_vc_pad(c);
    hs_rgba fg = hs_theme_fg(dark);
    c->fill_rect(c, 0, y, c->width, h, hs_vc_panel(dark));
    double cy = c->is_text ? y + 0.5 : y + h / 2;
    double x = c->is_text ? 0 : pad * 1.5;
    double right = c->width - (c->is_text ? 0 : pad * 1.5);

    /* right end: job and progress bar, or the last message */
    if (in->job || (in->progress >= 0 && in->progress <= 1)) {
        double barw = c->is_text ? 10 : fs * 8;
        char pct[16] = "";
        if (in->progress >= 0) snprintf(pct, sizeof pct, "%3.0f%%", in->progress * 100);
        double pw = c->text_width(c, pct, fs);
        double bx = right - pw - barw - (c->is_text ? 1 : pad);
        if (in->progress >= 0 && bx > c->width / 2) {
            c->text(c, right, cy, pct, fs, fg, HS_ALIGN_RIGHT, 0);
            double p = in->progress > 1 ? 1 : in->progress;
            if (c->is_text) {
                c->fill_rect(c, bx, y, barw, 1, hs_vc_grid(dark));
                c->fill_rect(c, bx, y, floor(barw * p + 1e-9), 1, hs_branch_color(HS_SWA, dark));
            } else {
                double bh = fs * 0.7;
                c->fill_rect(c, bx, cy - bh / 2, barw, bh, hs_vc_grid(dark));
                c->fill_rect(c, bx, cy - bh / 2, barw * p, bh, hs_branch_color(HS_SWA, dark));
            }
            right = bx - (c->is_text ? 1 : pad);
        }
        if (in->job) {
            char jb[160];
            hs_vc_fit(c, jb, sizeof jb, in->job, fs, fmax(0, (right - x) * 0.4));
            c->text(c, right, cy, jb, fs, fg, HS_ALIGN_RIGHT, 0);
            right -= c->text_width(c, jb, fs) + (c->is_text ? 1 : pad * 2);
        }
    } else if (in->message && in->message[0]) {
        char mb[256];
        hs_vc_fit(c, mb, sizeof mb, in->message, fs, fmax(0, (right - x) * 0.5));
        c->text(c, right, cy, mb, fs, hs_branch_color(HS_GDN, dark), HS_ALIGN_RIGHT, 0);
        right -= c->text_width(c, mb, fs) + (c->is_text ? 1 : pad * 2);
    }

    char left[512], fit[512];
    snprintf(left, sizeof left, "%s | %s | knobs: %s", in->model_name ? in->model_name : "(no model)",
             in->device ? in->device : "cpu", in->knobs && in->knobs[0] ? in->knobs : "off");
    hs_vc_fit(c, fit, sizeof fit, left, fs, right - x);
    c->text(c, x, cy, fit, fs, fg, HS_ALIGN_LEFT, 0);
}

static void draw_keybar(hs_canvas *c, double y, double h) {
    int dark = c->dark;
    double fs = hs_vc_font(c) * (c->is_text ? 1 : 0.88), pad = hs_vc_pad(c);
    double cy = c->is_text ? y + 0.5 : y + h / 2;
    double x = c->is_text ? 0 : pad * 1.5;
    hs_rgba key_bg = hs_vc_grid(dark), fg = hs_theme_fg(dark), mu = hs_vc_muted(dark);
    for (size_t i = 0; i < sizeof bar / sizeof bar[0]; i++) {
        double kw = hs_vc_bold_width(c, bar[i].key, fs), ww = c->text_width(c, bar[i].what, fs);
        double need = kw + ww + (c->is_text ? 3 : fs * 1.6);
        if (x + need > c->width) break;
        if (c->is_text) {
            c->fill_rect(c, x, y, kw, 1, key_bg);
            c->text(c, x, cy, bar[i].key, fs, fg, HS_ALIGN_LEFT, 1);
            c->text(c, x + kw + 1, cy, bar[i].what, fs, mu, HS_ALIGN_LEFT, 0);
        } else {
            c->fill_rect(c, x - fs * 0.25, cy - fs * 0.7, kw + fs * 0.5, fs * 1.4, key_bg);
            c->text(c, x, cy, bar[i].key, fs, fg, HS_ALIGN_LEFT, 1);
            c->text(c, x + kw + fs * 0.45, cy, bar[i].what, fs, mu, HS_ALIGN_LEFT, 0);
        }
        x += need + (c->is_text ? 0 : fs * 0.2);
    }
}

void hs_chrome_draw(hs_canvas *c, const hs_chrome_input *in) {
    draw_tabs(c, in->view);
    double bh = hs_chrome_bottom_height(c);
    double y = c->height - bh;
    double row = c->is_text ? 1 : bh / 2;
    draw_status(c, in, y, row);
    draw_keybar(c, y + row, row);
}

void hs_help_overlay_draw(hs_canvas *c) {
    int dark = c->dark;
    double fs = hs_vc_font(c), ln = c->is_text ? 1 : hs_vc_line(c) * 1.05, pad = hs_vc_pad(c);
    double keyw = 0, actw = 0;
    for (int i = 0; i < hs_key_map_len; i++) {
        keyw = fmax(keyw, hs_vc_bold_width(c, hs_key_map[i].keys, fs));
        actw = fmax(actw, c->text_width(c, hs_key_map[i].action, fs));
    }
    double gap = c->is_text ? 2 : fs;
    double colw = keyw + gap + actw;
    double avail_w = c->width - (c->is_text ? 2 : pad * 4);
    double avail_h = c->height - (c->is_text ? 4 : ln * 4);
    int ncol = 1;
    if (ln * (hs_key_map_len + 2) > avail_h) ncol = 2;   /* actions shorten to fit if need be */
    int rows = (hs_key_map_len + ncol - 1) / ncol;
    if (ncol == 2 && colw * 2 + gap > avail_w) colw = (avail_w - gap) / 2;
    if (ncol == 1 && colw > avail_w) colw = avail_w;
    double w = colw * ncol + gap * (ncol - 1) + (c->is_text ? 2 : pad * 4);
    double h = c->is_text ? rows + 4 : ln * (rows + 2) + pad * 3;  /* borders, title, gap */
    if (h > c->height) h = c->height;
    double x = floor((c->width - w) / 2), y = floor((c->height - h) / 2);
    if (x < 0) x = 0;
    if (y < 0) y = 0;
    c->fill_rect(c, x, y, w, h, hs_vc_panel(dark));
    c->stroke_rect(c, x, y, w, h, hs_theme_fg(dark), 1.2);
    double ty = c->is_text ? y + 1.5 : y + pad * 1.5 + ln * 0.5;
    double tx = x + (c->is_text ? 1 : pad * 2);
    c->text(c, tx, ty, "Keys (? or Esc closes)", fs * (c->is_text ? 1 : 1.1), hs_theme_fg(dark),
            HS_ALIGN_LEFT, 1);
    char buf[160];
    for (int i = 0; i < hs_key_map_len; i++) {
        int col = i / rows, r = i % rows;
        double cx = tx + col * (colw + gap);
        double cy = ty + ln * (r + 1.3);
        if (c->is_text) cy = floor(ty) + r + 2 + 0.5;
        if (cy > y + h - (c->is_text ? 0.5 : pad)) break;
        hs_vc_fit(c, buf, sizeof buf, hs_key_map[i].keys, fs, keyw);
        c->text(c, cx, cy, buf, fs, hs_branch_color(HS_NOPE, dark), HS_ALIGN_LEFT, 1);
        hs_vc_fit(c, buf, sizeof buf, hs_key_map[i].action, fs, colw - keyw - gap);
        c->text(c, cx + keyw + gap, cy, buf, fs, hs_theme_fg(dark), HS_ALIGN_LEFT, 0);
    }
}
