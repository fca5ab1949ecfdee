/* The terminal front end: the views drawn by the text-cell painter into a grid, blitted with
 * ncursesw. Works at 80x24 and larger, redraws on resize, 256-colour half blocks and braille
 * with 8-colour and ASCII fallbacks, mouse where the terminal reports it. */
#include "controller.h"

#ifdef HS_HAVE_NCURSES

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "../views/paint_text.h"

typedef struct {
    int colors;                /* 256, 8 or 0 */
    int utf8;
    int *pair_of;              /* [256 * 256] colour pair per (fg, bg) index; 0 = none yet */
    int next_pair;
} tui;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A colour pair for (fg, bg); pairs are recycled when the table fills (only at frame
 * starts, see begin_frame, so cells of one frame never share a recycled pair). */
static int pair_for(tui *t, const uint8_t fg[3], const uint8_t bg[3]) {
    if (!t->colors) return 0;
    int fi = t->colors >= 256 ? hs_text_rgb_to_256(fg) : hs_text_rgb_to_8(fg);
    int bi = t->colors >= 256 ? hs_text_rgb_to_256(bg) : hs_text_rgb_to_8(bg);
    int key = fi * 256 + bi;
    if (t->pair_of[key]) return t->pair_of[key];
    if (t->next_pair >= COLOR_PAIRS) return 0;
    int p = t->next_pair++;
#if defined(NCURSES_EXT_COLORS) && NCURSES_EXT_COLORS
    init_extended_pair(p, fi, bi);
#else
    init_pair((short)p, (short)fi, (short)bi);
#endif
    t->pair_of[key] = p;
    return p;
}

static void begin_frame(tui *t, int cells) {
    if (t->colors && t->next_pair + cells >= COLOR_PAIRS) {
        memset(t->pair_of, 0, sizeof(int) * 256 * 256);
        t->next_pair = 1;
    }
}

static void blit(tui *t, hs_text_grid *g) {
    begin_frame(t, g->cols * g->rows);
    for (int row = 0; row < g->rows && row < LINES; row++) {
        for (int col = 0; col < g->cols && col < COLS; col++) {
            const hs_text_cell *cell = hs_text_grid_at(g, col, row);
            uint32_t ch = cell->ch;
            if (ch < 32) ch = ' ';
            if (!t->utf8 && ch > 126) ch = '?';
            wchar_t w[2] = { (wchar_t)ch, 0 };
            int pair = pair_for(t, cell->fg, cell->bg);
            attr_t attr = cell->bold ? A_BOLD : A_NORMAL;
            if (!t->colors && cell->bold) attr |= A_REVERSE;
            cchar_t cc;
            setcchar(&cc, w, attr, 0, &pair);
            mvadd_wch(row, col, &cc);
        }
    }
}

static void draw(tui *t, hs_controller *c, hs_text_grid *g) {
    hs_ctl_lock(c);
    g->dark = c->s.dark;
    hs_text_grid_clear(g);
    hs_canvas cv;
    hs_canvas_text_init(&cv, g);
    hs_chrome_input ch;
    hs_ctl_chrome_input(c, &ch);
    double top = hs_chrome_top_height(&cv), bottom = hs_chrome_bottom_height(&cv);
    hs_canvas_area area;
    hs_canvas_area_init(&area, &cv, 0, top, cv.width, cv.height - top - bottom);
    hs_view_input in;
    hs_ctl_view_input(c, &in);
    hs_view_draw(&area.c, c->s.view, &in);
    hs_chrome_draw(&cv, &ch);
    if (c->help) hs_help_overlay_draw(&cv);
    hs_ctl_unlock(c);
    blit(t, g);
    refresh();
}

static int translate_key(wint_t ch, int is_code) {
    if (is_code) {
        switch (ch) {
        case KEY_UP: return HS_KEY_UP;
        case KEY_DOWN: return HS_KEY_DOWN;
        case KEY_LEFT: return HS_KEY_LEFT;
        case KEY_RIGHT: return HS_KEY_RIGHT;
        case KEY_PPAGE: return HS_KEY_PGUP;
        case KEY_NPAGE: return HS_KEY_PGDN;
        case KEY_HOME: return HS_KEY_HOME;
        case KEY_BTAB: return HS_KEY_BTAB;
        case KEY_ENTER: return HS_KEY_ENTER;
        default:
            if (ch == KEY_F(1)) return HS_KEY_F1;
            return -1;
        }
    }
    if (ch == '\t') return HS_KEY_TAB;
    if (ch == '\n' || ch == '\r') return HS_KEY_ENTER;
    if (ch == 27) return HS_KEY_ESC;
    if (ch >= 32 && ch < 127) return (int)ch;
    return -1;
}

/* Mouse: a click on a tab switches view, on a head or needle cell selects it; the wheel zooms
 * the head view. */
static void on_mouse(hs_controller *c, hs_text_grid *g) {
    MEVENT ev;
    if (getmouse(&ev) != OK) return;
    hs_canvas cv;
    hs_ctl_lock(c);
    hs_canvas_text_init(&cv, g);
    double top = hs_chrome_top_height(&cv), bottom = hs_chrome_bottom_height(&cv);
    hs_canvas_area area;
    hs_canvas_area_init(&area, &cv, 0, top, cv.width, cv.height - top - bottom);
    hs_view_input in;
    hs_ctl_view_input(c, &in);
    hs_view_kind v = c->s.view;
    double x = ev.x + 0.5, y = ev.y - top + 0.5;
    int tab = hs_chrome_tab_at(&cv, x, ev.y + 0.5);
    hs_view_hit hit;
    memset(&hit, 0, sizeof hit);
    int got = y >= 0 && y < area.c.height && hs_view_hit_test(&hit, &area.c, v, &in, x, y);
    double rx, ry, rw, rh;
    int has_map = v == HS_VIEW_HEAD && in.head_map && hs_view_head_map_rect(&area.c, &in, &rx, &ry, &rw, &rh);
    int t0 = 0, t1 = 0, s0 = 0, s1 = 0;
    if (has_map) { t0 = in.head_map->t0; t1 = in.head_map->t1; s0 = in.head_map->s0; s1 = in.head_map->s1; }
    hs_ctl_unlock(c);
#ifdef BUTTON5_PRESSED
    if ((ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) && has_map && rw > 0 && rh > 0) {
        double t = t0 + (y - ry) / rh * (t1 - t0), s = s0 + (x - rx) / rw * (s1 - s0);
        hs_ctl_zoom_at(c, (ev.bstate & BUTTON4_PRESSED) ? 2.0 : 0.5, t, s);
        return;
    }
#endif
    if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED))) return;
    if (tab >= 0) {                                  /* a click on a tab switches view */
        if (tab != (int)v) hs_ctl_set_view(c, (hs_view_kind)tab);
        return;
    }
    if (!got) return;
    if (hit.what == HS_HIT_HEAD) hs_ctl_select_head(c, hit.head);
    else if (hit.what == HS_HIT_NEEDLE) hs_ctl_select_cell(c, hit.task, hit.length, hit.depth);
    hs_ctl_lock(c);
    if (hit.text[0]) hs_ctl_set_message(c, "%s", hit.text);
    hs_ctl_unlock(c);
}

int hs_tui_run(hs_controller *c, int ascii) {
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "hybridscope tui: needs a terminal on stdin and stdout (for images "
                        "without one, use 'hybridscope export')\n");
        return 1;
    }
    setlocale(LC_ALL, "");
    tui t;
    memset(&t, 0, sizeof t);
    const char *cs = nl_langinfo(CODESET);
    t.utf8 = !ascii && cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
    t.pair_of = calloc(256 * 256, sizeof(int));
    if (!t.pair_of) { fprintf(stderr, "tui: out of memory\n"); return 1; }
    if (!initscr()) { fprintf(stderr, "tui: cannot initialise the terminal (TERM=%s)\n",
                              getenv("TERM") ? getenv("TERM") : ""); free(t.pair_of); return 1; }
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    timeout(100);
    if (has_colors()) {
        start_color();
        t.colors = COLORS >= 256 ? 256 : COLORS >= 8 ? 8 : 0;
    }
    t.next_pair = 1;
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED
#ifdef BUTTON5_PRESSED
              | BUTTON4_PRESSED | BUTTON5_PRESSED
#endif
              , NULL);
    mouseinterval(0);

    hs_text_grid g;
    if (hs_text_grid_init(&g, COLS > 0 ? COLS : 80, LINES > 0 ? LINES : 24,
                          t.utf8 ? HS_TEXT_UTF8 : HS_TEXT_ASCII, t.colors, c->s.dark) != 0) {
        endwin();
        fprintf(stderr, "tui: cannot allocate a %dx%d screen\n", COLS, LINES);
        free(t.pair_of);
        return 1;
    }
    int rc = 0, running = 1, dirty = 1;
    double last = 0;
    while (running) {
        double now = now_s();
        hs_ctl_lock(c);
        int busy = c->busy || hs_ctl_pending(c);
        hs_ctl_unlock(c);
        if (dirty || now - last > (busy ? 0.15 : 0.5)) {
            draw(&t, c, &g);
            last = now;
            dirty = 0;
        }
        wint_t ch;
        int r = get_wch(&ch);
        if (r == ERR) continue;
        dirty = 1;
        if (r == KEY_CODE_YES && ch == KEY_RESIZE) {
            hs_text_grid_resize(&g, COLS, LINES);
            clear();
            continue;
        }
        if (r == KEY_CODE_YES && ch == KEY_MOUSE) { on_mouse(c, &g); continue; }
        int key = translate_key(ch, r == KEY_CODE_YES);
        if (key < 0) continue;
        int act = hs_ctl_key(c, key);
        if (act == HS_ACT_QUIT) running = 0;
        else if (act == HS_ACT_SAVE) hs_ctl_save_view(c, NULL, 1200, 800, 2.0);
    }
    endwin();
    hs_text_grid_free(&g);
    free(t.pair_of);
    return rc;
}

#else

#include <stdio.h>

int hs_tui_run(hs_controller *c, int ascii) {
    (void)c; (void)ascii;
    fprintf(stderr, "tui: this build has no terminal mode (ncursesw was missing at build time)\n");
    return 1;
}

#endif
