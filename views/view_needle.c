/* Needle view: for each task, a context length (x) by depth (y) grid coloured by accuracy on
 * the NIAH red-yellow-green scale. Cells fill in live: not started = empty outline, partial =
 * coloured by the accuracy so far with the count shown. Accuracy per length sits under each
 * grid; the selected cell's needle, question and the model's answer are shown below. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "view_common.h"

typedef struct {
    int n_tasks;
    double gx[HS_NEEDLE_TASKS], gy, gw, gh;  /* grid rects per task */
    double cw, ch;                           /* one cell */
    double panel_y, panel_h;                 /* text panel for the selected cell */
    double acc_y;                            /* per-length accuracy row */
    double left;
} needle_layout;

static const char *const task_names[HS_NEEDLE_TASKS] = { "SK1", "SK2", "SK3" };

static size_t cell_index(const hs_niah_result *r, int task, int l, int d) {
    return ((size_t)task * r->n_lengths + l) * r->n_depths + d;
}

/* Printable text of the sample's tokens [a, b) (byte tokenizer; newlines become spaces).
 * Returns 0 when the tokens are gone or the range is empty. */
static int sample_text(char *out, size_t n, const hs_needle_sample *s, int a, int b) {
    if (!s->tokens || a < 0 || b <= a || b > s->length || n == 0) return 0;
    size_t k = 0;
    for (int i = a; i < b && k + 1 < n; i++) {
        int32_t t = s->tokens[i];
        if (t < 0 || t > 255) continue;
        out[k++] = t >= 32 && t < 127 ? (char)t : t == '\n' || t == '\t' ? ' ' : '.';
    }
    out[k] = 0;
    return k > 0;
}

static int has_selection(const hs_view_input *in) {
    const hs_niah_result *r = in->niah;
    return r && in->sel_task >= 0 && in->sel_task < r->n_tasks && in->sel_length >= 0 &&
           in->sel_length < r->n_lengths && in->sel_depth >= 0 && in->sel_depth < r->n_depths;
}

static void layout(needle_layout *L, hs_canvas *c, const hs_view_input *in) {
    memset(L, 0, sizeof *L);
    const hs_niah_result *r = in->niah;
    double fs = hs_vc_font(c), ln = hs_vc_line(c), pad = hs_vc_pad(c);
    L->n_tasks = r->n_tasks;
    double top = hs_vc_title_height(c) + (c->is_text ? 1 : ln * 1.5);
    L->left = c->is_text ? 5 : fs * 3.4;
    L->panel_h = c->is_text ? 3 : ln * 3.6;
    double bottom = (c->is_text ? 2 : ln * 2.6) + L->panel_h + (c->is_text ? 0 : pad);
    double gap = c->is_text ? 2 : fs * 1.5;
    double aw = c->width - L->left - (c->is_text ? 0 : pad * 2) - gap * (r->n_tasks - 1);
    double ah = c->height - top - bottom;
    double cw = aw / (r->n_tasks * (r->n_lengths > 0 ? r->n_lengths : 1));
    double ch = ah / (r->n_depths > 0 ? r->n_depths : 1);
    if (c->is_text) {
        cw = floor(cw);
        ch = floor(ch);
        if (ch < 1) ch = 1;
        if (cw < 1) cw = 1;
        /* big terminals: bigger cells, roughly square (a cell is twice as tall as wide) */
        if (cw > 12) cw = 12;
        if (ch > fmax(3, floor(cw / 2))) ch = fmax(3, floor(cw / 2));
    } else {
        if (cw > fs * 10) cw = fs * 10;
        if (ch > cw * 0.85) ch = cw * 0.85;
        if (ch > fs * 7) ch = fs * 7;
    }
    L->cw = cw;
    L->ch = ch;
    L->gw = cw * r->n_lengths;
    L->gh = ch * r->n_depths;
    double total = L->gw * r->n_tasks + gap * (r->n_tasks - 1);
    double x = L->left + (c->is_text ? 0 : pad + fmax(0, (aw + gap * (r->n_tasks - 1) - total) / 2));
    for (int k = 0; k < r->n_tasks; k++) {
        L->gx[k] = x;
        x += L->gw + gap;
    }
    L->gy = top;
    if (!c->is_text) {   /* capped cells leave room: centre grid, accuracies and panel in it */
        double used = L->gh + ln * 1.35 + ln * 2.6 + L->panel_h;
        double room = c->height - top - pad - used;
        if (room > 0) L->gy += room / 2;
    }
    L->acc_y = L->gy + L->gh + (c->is_text ? 1 : ln * 1.35);
    L->panel_y = L->acc_y + (c->is_text ? 2 : ln * 2.6);
    if (L->panel_y + L->panel_h > c->height) L->panel_y = c->height - L->panel_h;
}

void hs_view_needle_draw(hs_canvas *c, const hs_view_input *in) {
    int dark = c->dark;
    double top = hs_vc_title(c, in, c->is_text && c->width < 70 ? "Needle"
                                                                 : "Needle in a haystack");
    const hs_niah_result *r = in->niah;
    if (!r || r->n_tasks <= 0 || r->n_lengths <= 0 || r->n_depths <= 0) {
        hs_vc_placeholder(c, 0, top, c->width, c->height - top,
                          "no needle sweep yet: press Enter to run one");
        return;
    }
    double fs = hs_vc_font(c), ln = hs_vc_line(c), pad = hs_vc_pad(c);
    hs_rgba fg = hs_theme_fg(dark), mu = hs_vc_muted(dark), gr = hs_vc_grid(dark);
    needle_layout L;
    layout(&L, c, in);
    char buf[160];
    int total_done = 0, total_cells = 0;
    for (int k = 0; k < r->n_tasks; k++) {
        double gx = L.gx[k];
        int task = r->tasks[k];
        snprintf(buf, sizeof buf, "%s", task >= 0 && task < HS_NEEDLE_TASKS ? task_names[task] : "?");
        c->text(c, gx + L.gw / 2, c->is_text ? L.gy - 0.5 : L.gy - ln * 0.6, buf, fs, fg,
                HS_ALIGN_CENTER, 1);
        for (int l = 0; l < r->n_lengths; l++) {
            for (int d = 0; d < r->n_depths; d++) {
                size_t ci = cell_index(r, k, l, d);
                int done = r->done[ci], ok = r->correct[ci];
                double x = gx + l * L.cw, y = L.gy + d * L.ch;
                total_cells++;
                if (done <= 0) {                       /* not yet run */
                    if (c->is_text) c->text(c, x + L.cw / 2, floor(y + L.ch / 2) + 0.5, "\xc2\xb7", 1, gr, HS_ALIGN_CENTER, 0);
                    else c->stroke_rect(c, x + 1.5, y + 1.5, L.cw - 3, L.ch - 3, gr, 1);
                    continue;
                }
                total_done += done >= r->samples;
                double acc = (double)ok / done;
                hs_rgba col = hs_cmap_niah(acc);
                int partial = done < r->samples;
                if (c->is_text) c->fill_rect(c, x, y, L.cw, L.ch, partial ? hs_vc_mix(hs_theme_bg(dark), col, 0.6) : col);
                else if (!partial) c->fill_rect(c, x + 0.5, y + 0.5, L.cw - 1, L.ch - 1, col);
                else {
                    /* running: the cell fills from the bottom as its samples complete */
                    double f = (double)done / r->samples, ih = L.ch - 3;
                    c->fill_rect(c, x + 1.5, y + 1.5 + ih * (1 - f), L.cw - 3, ih * f, col);
                    c->stroke_rect(c, x + 1.5, y + 1.5, L.cw - 3, L.ch - 3, col, 1.2);
                }
                /* the number: accuracy % when finished, count so far while running */
                if (partial) snprintf(buf, sizeof buf, "%d/%d", ok, done);
                else snprintf(buf, sizeof buf, "%.0f", acc * 100);
                double tfs = fs * 0.8;
                if (c->text_width(c, buf, tfs) <= L.cw - (c->is_text ? 0 : 2) &&
                    (c->is_text || L.ch >= tfs * 1.1)) {
                    hs_rgba tc = { 0.08f, 0.08f, 0.08f, 1 };
                    if (partial && !c->is_text) tc = hs_theme_fg(dark);
                    c->text(c, x + L.cw / 2, c->is_text ? floor(y + L.ch / 2) + 0.5 : y + L.ch / 2,
                            buf, tfs, tc, HS_ALIGN_CENTER, 0);
                }
            }
        }
        if (!c->is_text) c->stroke_rect(c, gx, L.gy, L.gw, L.gh, gr, 0.8);
        /* depth labels on the first grid, length labels under each */
        if (k == 0) {
            int every = 1;
            while (every < r->n_depths && r->n_depths / every * (c->is_text ? 1 : fs * 1.1) > L.gh + 1e-9)
                every++;
            for (int d = 0; d < r->n_depths; d += every) {
                snprintf(buf, sizeof buf, "%.0f%%", r->depths[d]);
                double cy = L.gy + (d + 0.5) * L.ch;
                c->text(c, gx - (c->is_text ? 1 : fs * 0.4), c->is_text ? floor(cy) + 0.5 : cy,
                        buf, fs * 0.85, mu, HS_ALIGN_RIGHT, 0);
            }
            if (c->is_text) c->text(c, 0, L.gy - 0.5, "depth", 1, mu, HS_ALIGN_LEFT, 0);
            else c->text(c, gx - fs * 0.4, L.gy - ln * 0.6, "depth", fs * 0.85, mu, HS_ALIGN_RIGHT, 0);
        }
        double last = -1e9;
        for (int l = 0; l < r->n_lengths; l++) {
            hs_vc_fmt_tokens(buf, sizeof buf, r->lengths[l]);
            double cx = gx + (l + 0.5) * L.cw, tw = c->text_width(c, buf, fs * 0.85);
            if (cx - tw / 2 < last) continue;
            c->text(c, cx, c->is_text ? L.gy + L.gh + 0.5 : L.gy + L.gh + ln * 0.5, buf, fs * 0.85,
                    mu, HS_ALIGN_CENTER, 0);
            last = cx + tw / 2 + (c->is_text ? 1 : fs * 0.3);
        }
        /* accuracy per length (over the finished and partial cells of that column) */
        last = -1e9;
        for (int l = 0; l < r->n_lengths; l++) {
            int ok = 0, done = 0;
            for (int d = 0; d < r->n_depths; d++) {
                ok += r->correct[cell_index(r, k, l, d)];
                done += r->done[cell_index(r, k, l, d)];
            }
            if (done == 0) continue;
            snprintf(buf, sizeof buf, "%.0f%%", 100.0 * ok / done);
            double cx = gx + (l + 0.5) * L.cw, tw = c->text_width(c, buf, fs * 0.85);
            if (cx - tw / 2 < last) continue;
            hs_rgba col = hs_cmap_niah((double)ok / done);
            if (!dark) col = hs_vc_mix(col, fg, 0.35);  /* readable on white */
            c->text(c, cx, c->is_text ? L.acc_y + 0.5 : L.acc_y + ln * 0.5, buf, fs * 0.85, col,
                    HS_ALIGN_CENTER, 1);
            last = cx + tw / 2 + (c->is_text ? 1 : fs * 0.3);
        }
        if (k == 0)
            c->text(c, gx - (c->is_text ? 1 : fs * 0.4),
                    c->is_text ? L.acc_y + 0.5 : L.acc_y + ln * 0.5, "acc", fs * 0.85, mu,
                    HS_ALIGN_RIGHT, 0);
        /* selection outline */
        if (in->sel_task == k && in->sel_length >= 0 && in->sel_length < r->n_lengths &&
            in->sel_depth >= 0 && in->sel_depth < r->n_depths) {
            double x = gx + in->sel_length * L.cw, y = L.gy + in->sel_depth * L.ch;
            if (c->is_text) {
                c->text(c, x, floor(y + L.ch / 2) + 0.5, "[", 1, hs_vc_accent(dark), HS_ALIGN_LEFT, 1);
                c->text(c, x + L.cw - 1, floor(y + L.ch / 2) + 0.5, "]", 1, hs_vc_accent(dark),
                        HS_ALIGN_LEFT, 1);
            } else c->stroke_rect(c, x, y, L.cw, L.ch, hs_vc_accent(dark), 2.2);
        }
    }
    /* progress + scale note, right of the title */
    snprintf(buf, sizeof buf, "%d/%d cells, %d sample%s each", total_done, total_cells, r->samples,
             r->samples == 1 ? "" : "s");
    char fit[160];
    hs_vc_fit(c, fit, sizeof fit, buf, fs * 0.85, c->width * 0.45);
    double note_y = c->is_text ? L.acc_y + 1.5 : L.acc_y + ln * 1.5;
    double right = c->width - (c->is_text ? 0 : pad * 1.5);
    c->text(c, right, note_y, fit, fs * 0.85, mu, HS_ALIGN_RIGHT, 0);
    if (!c->is_text) {
        /* the colour scale, left of the note */
        enum { NS = 64 };
        uint8_t px[NS * 4];
        for (int i = 0; i < NS; i++) {
            hs_rgba col = hs_cmap_niah((i + 0.5) / NS);
            px[i * 4] = (uint8_t)lrintf(col.r * 255);
            px[i * 4 + 1] = (uint8_t)lrintf(col.g * 255);
            px[i * 4 + 2] = (uint8_t)lrintf(col.b * 255);
            px[i * 4 + 3] = 255;
        }
        double bw = fs * 7, bx = right - c->text_width(c, fit, fs * 0.85) - fs * 3.6 - bw;
        c->text(c, bx - fs * 0.3, note_y, "0%", fs * 0.8, mu, HS_ALIGN_RIGHT, 0);
        c->image(c, bx, note_y - fs * 0.4, bw, fs * 0.8, px, NS, 1);
        c->text(c, bx + bw + fs * 0.3, note_y, "100%", fs * 0.8, mu, HS_ALIGN_LEFT, 0);
    }

    /* selected cell: needle, question, answer */
    double py = L.panel_y, px = c->is_text ? 0 : pad * 1.5, pw = c->width - 2 * px;
    if (!c->is_text) c->fill_rect(c, px - pad * 0.5, py, pw + pad, L.panel_h, hs_vc_panel(dark));
    double row = c->is_text ? 1 : ln * 1.1;
    double ry = c->is_text ? py + 0.5 : py + pad * 0.5 + row * 0.5;
    if (!has_selection(in)) {
        c->text(c, px, ry, "select a cell (arrows or click) to see its needle and the answer",
                fs * 0.9, mu, HS_ALIGN_LEFT, 0);
        return;
    }
    size_t ci = cell_index(r, in->sel_task, in->sel_length, in->sel_depth);
    const hs_needle_sample *s = r->shown ? &r->shown[ci] : NULL;
    const hs_needle_outcome *o = r->shown_outcome ? &r->shown_outcome[ci] : NULL;
    char len[16];
    hs_vc_fmt_tokens(len, sizeof len, r->lengths[in->sel_length]);
    int task = r->tasks[in->sel_task];
    const char *tn = task >= 0 && task < HS_NEEDLE_TASKS ? task_names[task] : "?";
    if (r->done[ci] <= 0 || !s || !o) {
        snprintf(buf, sizeof buf, "%s L=%s depth %.0f%%: not run yet", tn, len, r->depths[in->sel_depth]);
        c->text(c, px, ry, buf, fs * 0.9, mu, HS_ALIGN_LEFT, 0);
        return;
    }
    char line[512];
    char nd[256];
    if (!sample_text(nd, sizeof nd, s, s->needle_start, s->needle_end))
        snprintf(nd, sizeof nd, "%s = %s", s->key, s->value);
    snprintf(line, sizeof line, "%s L=%s depth %.0f%%  %d/%d correct   needle: %s", tn, len,
             r->depths[in->sel_depth], r->correct[ci], r->done[ci], nd);
    hs_vc_fit(c, fit, sizeof fit, line, fs * 0.9, pw);
    c->text(c, px, ry, fit, fs * 0.9, fg, HS_ALIGN_LEFT, 0);
    /* the prompt's own words when its tokens were kept, else the spec's question */
    char q[256];
    if (!sample_text(q, sizeof q, s, s->probe_start, s->probe_end))
        snprintf(q, sizeof q, "What is the special magic %s for %s?", task == HS_SK3 ? "uuid" : "number",
                 s->key);
    snprintf(line, sizeof line, "question: %s", q);
    hs_vc_fit(c, fit, sizeof fit, line, fs * 0.9, pw);
    c->text(c, px, ry + row, fit, fs * 0.9, mu, HS_ALIGN_LEFT, 0);
    snprintf(line, sizeof line, "answer: %s  [%s]", o->answer[0] ? o->answer : "(empty)",
             o->correct ? "correct" : "wrong");
    hs_vc_fit(c, fit, sizeof fit, line, fs * 0.9, pw);
    hs_rgba ac = hs_cmap_niah(o->correct ? 1 : 0);
    if (!dark) ac = hs_vc_mix(ac, fg, 0.35);
    c->text(c, px, ry + 2 * row, fit, fs * 0.9, ac, HS_ALIGN_LEFT, 1);
}

int hs_view_needle_hit(hs_view_hit *out, hs_canvas *c, const hs_view_input *in, double x,
                       double y) {
    const hs_niah_result *r = in->niah;
    if (!r || r->n_tasks <= 0 || r->n_lengths <= 0 || r->n_depths <= 0) return HS_HIT_NONE;
    needle_layout L;
    layout(&L, c, in);
    for (int k = 0; k < r->n_tasks; k++) {
        if (x < L.gx[k] || x >= L.gx[k] + L.gw || y < L.gy || y >= L.gy + L.gh) continue;
        int l = (int)((x - L.gx[k]) / L.cw), d = (int)((y - L.gy) / L.ch);
        if (l >= r->n_lengths) l = r->n_lengths - 1;
        if (d >= r->n_depths) d = r->n_depths - 1;
        size_t ci = cell_index(r, k, l, d);
        out->what = HS_HIT_NEEDLE;
        out->task = k;
        out->length = l;
        out->depth = d;
        char len[16];
        hs_vc_fmt_tokens(len, sizeof len, r->lengths[l]);
        int task = r->tasks[k];
        const char *tn = task >= 0 && task < HS_NEEDLE_TASKS ? task_names[task] : "?";
        if (r->done[ci] > 0)
            snprintf(out->text, sizeof out->text, "%s L=%s depth %.0f%%: %d/%d correct (%.0f%%)%s", tn,
                     len, r->depths[d], r->correct[ci], r->done[ci],
                     100.0 * r->correct[ci] / r->done[ci], r->done[ci] < r->samples ? ", running" : "");
        else snprintf(out->text, sizeof out->text, "%s L=%s depth %.0f%%: not run yet", tn, len, r->depths[d]);
        return out->what;
    }
    return HS_HIT_NONE;
}
