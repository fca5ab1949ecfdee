/* The desktop front end: the views drawn by the cairo painter into a pixel buffer, shown
 * through an SDL2 streaming texture. HiDPI aware (drawable size / window size), resizable,
 * mouse (hover values, click selects, wheel zooms and drag pans the head view) and the same
 * keys as the terminal. `--script` feeds scripted events (tests; works with
 * SDL_VIDEODRIVER=offscreen or dummy). */
#include "controller.h"

#if defined(HS_HAVE_SDL2) && defined(HS_HAVE_CAIRO)

#include <SDL.h>
#include <cairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../views/paint_cairo.h"
#include "script.h"

typedef struct {
    SDL_Window *win;
    SDL_Renderer *ren;
    SDL_Texture *tex;
    uint8_t *pixels;
    int pw, ph;                /* drawable size, device pixels */
    int ww, wh;                /* window size, logical pixels */
    double scale;
    /* pointer */
    double mx, my;             /* logical pixels */
    int hover;                 /* pointer inside the window */
    int dragging;
    double drag_x, drag_y;     /* last applied drag position */
    /* script */
    hs_script script;
    int has_script;
    double wait_until, sleep_until;
    int waiting;
    int script_failed;
    char title_model[128];     /* model named in the window title */
} gui;

static int gui_resize_buffers(gui *g, char *err, size_t errlen) {
    SDL_GetWindowSize(g->win, &g->ww, &g->wh);
    int pw = 0, ph = 0;
    if (SDL_GetRendererOutputSize(g->ren, &pw, &ph) != 0 || pw <= 0 || ph <= 0) { pw = g->ww; ph = g->wh; }
    if (g->tex && pw == g->pw && ph == g->ph) return 0;
    if (g->tex) SDL_DestroyTexture(g->tex);
    free(g->pixels);
    g->pw = pw;
    g->ph = ph;
    g->scale = g->ww > 0 ? (double)pw / g->ww : 1.0;
    if (g->scale < 1.0) g->scale = 1.0;
    g->tex = SDL_CreateTexture(g->ren, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STREAMING, pw, ph);
    g->pixels = malloc((size_t)pw * (size_t)ph * 4);
    if (!g->tex || !g->pixels) {
        snprintf(err, errlen, "cannot allocate a %dx%d frame: %s", pw, ph, SDL_GetError());
        return -1;
    }
    return 0;
}

/* View area of the frame (logical pixels) and, for hit tests, a canvas over it. */
typedef struct { hs_canvas *cv; hs_canvas_area area; double top, bottom; } frame_layout;

static void layout(frame_layout *f, hs_canvas *cv) {
    f->cv = cv;
    f->top = hs_chrome_top_height(cv);
    f->bottom = hs_chrome_bottom_height(cv);
    hs_canvas_area_init(&f->area, cv, 0, f->top, cv->width, cv->height - f->top - f->bottom);
}

/* A small box with the hover text next to the pointer. */
static void draw_tooltip(hs_canvas *cv, double x, double y, const char *text) {
    double size = 12, pad = 5;
    double w = cv->text_width(cv, text, size) + 2 * pad, h = size + 2 * pad;
    double bx = x + 14, by = y + 14;
    if (bx + w > cv->width) bx = x - w - 6;
    if (by + h > cv->height) by = y - h - 6;
    if (bx < 0) bx = 0;
    if (by < 0) by = 0;
    hs_rgba bg = hs_theme_bg(cv->dark), fg = hs_theme_fg(cv->dark);
    bg.a = 0.94f;
    cv->fill_rect(cv, bx, by, w, h, bg);
    cv->stroke_rect(cv, bx, by, w, h, fg, 1);
    cv->text(cv, bx + pad, by + h / 2, text, size, fg, HS_ALIGN_LEFT, 0);
}

static int render(gui *g, hs_controller *c) {
    char err[256];
    hs_ctl_lock(c);
    if (strcmp(g->title_model, c->s.model_name)) {   /* the ratio switch changes the model */
        snprintf(g->title_model, sizeof g->title_model, "%s", c->s.model_name);
        char title[200];
        snprintf(title, sizeof title, "hybridscope - %s", g->title_model);
        SDL_SetWindowTitle(g->win, title);
    }
    hs_canvas *cv = hs_canvas_cairo_pixels(g->pixels, g->pw, g->ph, g->pw * 4, g->scale,
                                           c->s.dark, err, sizeof err);
    if (!cv) { hs_ctl_unlock(c); fprintf(stderr, "gui: %s\n", err); return -1; }
    hs_canvas_clear(cv);
    frame_layout f;
    layout(&f, cv);
    hs_view_input in;
    hs_ctl_view_input(c, &in);
    hs_chrome_input ch;
    hs_ctl_chrome_input(c, &ch);
    hs_view_draw(&f.area.c, c->s.view, &in);
    hs_chrome_draw(cv, &ch);
    if (c->help) {
        hs_help_overlay_draw(cv);
    } else if (g->hover && !g->dragging && g->my >= f.top && g->my < cv->height - f.bottom) {
        hs_view_hit hit;
        memset(&hit, 0, sizeof hit);
        if (hs_view_hit_test(&hit, &f.area.c, c->s.view, &in, g->mx, g->my - f.top) && hit.text[0])
            draw_tooltip(cv, g->mx, g->my, hit.text);
    }
    hs_ctl_unlock(c);
    hs_canvas_cairo_free(cv);
    SDL_UpdateTexture(g->tex, NULL, g->pixels, g->pw * 4);
    SDL_RenderClear(g->ren);
    SDL_RenderCopy(g->ren, g->tex, NULL, NULL);
    SDL_RenderPresent(g->ren);
    return 0;
}

/* The frame on screen as a PNG (tmp file, then rename). */
static int screenshot(gui *g, const char *path, char *err, size_t errlen) {
    cairo_surface_t *s = cairo_image_surface_create_for_data(g->pixels, CAIRO_FORMAT_ARGB32,
                                                              g->pw, g->ph, g->pw * 4);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    cairo_status_t st = cairo_surface_write_to_png(s, tmp);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS || rename(tmp, path) != 0) {
        unlink(tmp);
        snprintf(err, errlen, "screenshot %s: cannot write (%s)", path, cairo_status_to_string(st));
        return -1;
    }
    return 0;
}

/* Head view geometry under the lock: the map rectangle (logical pixels, frame coordinates)
 * and the token window it shows. Returns 0 when there is no map. */
typedef struct { double x, y, w, h; int t0, t1, s0, s1; } map_geom;

static int head_map_geom(gui *g, hs_controller *c, map_geom *m) {
    char err[256];
    int ok = 0;
    hs_ctl_lock(c);
    if (c->s.view == HS_VIEW_HEAD && c->head_map) {
        hs_canvas *cv = hs_canvas_cairo_pixels(g->pixels, g->pw, g->ph, g->pw * 4, g->scale,
                                               c->s.dark, err, sizeof err);
        if (cv) {
            frame_layout f;
            layout(&f, cv);
            hs_view_input in;
            hs_ctl_view_input(c, &in);
            if (hs_view_head_map_rect(&f.area.c, &in, &m->x, &m->y, &m->w, &m->h) && m->w > 0 && m->h > 0) {
                m->y += f.top;
                m->t0 = c->head_map->t0; m->t1 = c->head_map->t1;
                m->s0 = c->head_map->s0; m->s1 = c->head_map->s1;
                ok = 1;
            }
            /* nothing was drawn: freeing flushes the untouched buffer */
            hs_canvas_cairo_free(cv);
        }
    }
    hs_ctl_unlock(c);
    return ok;
}

static void on_wheel(gui *g, hs_controller *c, double x, double y, double notches) {
    map_geom m;
    if (!head_map_geom(g, c, &m)) return;
    if (x < m.x || x > m.x + m.w || y < m.y || y > m.y + m.h) return;
    double t = m.t0 + (y - m.y) / m.h * (m.t1 - m.t0);
    double s = m.s0 + (x - m.x) / m.w * (m.s1 - m.s0);
    double factor = 1.0;
    for (int i = 0; i < (notches > 0 ? notches : -notches); i++) factor *= 1.5;
    hs_ctl_zoom_at(c, notches > 0 ? factor : 1.0 / factor, t, s);
}

static void on_drag(gui *g, hs_controller *c, double x0, double y0, double x1, double y1) {
    map_geom m;
    if (!head_map_geom(g, c, &m)) return;
    double dt = -(y1 - y0) / m.h * (m.t1 - m.t0);
    double ds = -(x1 - x0) / m.w * (m.s1 - m.s0);
    hs_ctl_pan(c, dt, ds);
}

static void on_click(gui *g, hs_controller *c, double x, double y, int double_click) {
    char err[256];
    hs_view_hit hit;
    memset(&hit, 0, sizeof hit);
    int got = 0, tab = -1;
    hs_ctl_lock(c);
    hs_canvas *cv = hs_canvas_cairo_pixels(g->pixels, g->pw, g->ph, g->pw * 4, g->scale,
                                           c->s.dark, err, sizeof err);
    hs_view_kind v = c->s.view;
    if (cv) {
        frame_layout f;
        layout(&f, cv);
        hs_view_input in;
        hs_ctl_view_input(c, &in);
        if (y >= f.top && y < cv->height - f.bottom)
            got = hs_view_hit_test(&hit, &f.area.c, v, &in, x, y - f.top);
        tab = hs_chrome_tab_at(cv, x, y);
        hs_canvas_cairo_free(cv);
    }
    if (c->help) { c->help = 0; got = 0; tab = -1; }
    hs_ctl_unlock(c);
    if (tab >= 0) {                                  /* a click on a tab switches view */
        if (tab != (int)v) hs_ctl_set_view(c, (hs_view_kind)tab);
        return;
    }
    if (!got) return;
    if (hit.what == HS_HIT_HEAD) {
        hs_ctl_select_head(c, hit.head);
        if (double_click && v != HS_VIEW_HEAD) hs_ctl_set_view(c, HS_VIEW_HEAD);
    } else if (hit.what == HS_HIT_NEEDLE) {
        hs_ctl_select_cell(c, hit.task, hit.length, hit.depth);
    }
}

static void do_action(gui *g, hs_controller *c, int act, int *running) {
    if (act == HS_ACT_QUIT) *running = 0;
    else if (act == HS_ACT_SAVE) hs_ctl_save_view(c, NULL, g->ww, g->wh, g->scale < 2 ? 2 : g->scale);
}

static int translate_key(const SDL_KeyboardEvent *k) {
    switch (k->keysym.sym) {
    case SDLK_UP: return HS_KEY_UP;
    case SDLK_DOWN: return HS_KEY_DOWN;
    case SDLK_LEFT: return HS_KEY_LEFT;
    case SDLK_RIGHT: return HS_KEY_RIGHT;
    case SDLK_PAGEUP: return HS_KEY_PGUP;
    case SDLK_PAGEDOWN: return HS_KEY_PGDN;
    case SDLK_HOME: return HS_KEY_HOME;
    case SDLK_TAB: return (k->keysym.mod & KMOD_SHIFT) ? HS_KEY_BTAB : HS_KEY_TAB;
    case SDLK_RETURN: case SDLK_KP_ENTER: return HS_KEY_ENTER;
    case SDLK_ESCAPE: return HS_KEY_ESC;
    case SDLK_F1: return HS_KEY_F1;
    default: return -1;   /* printable keys arrive as SDL_TEXTINPUT */
    }
}

static double now_ms(void) { return (double)SDL_GetTicks64(); }

/* Runs script events until one has to wait. Returns 0 to continue, 1 when the script quit. */
static int run_script(gui *g, hs_controller *c, int *running) {
    while (g->script.pos < g->script.n) {
        hs_script_event *e = &g->script.ev[g->script.pos];
        double now = now_ms();
        if (g->waiting) {
            hs_ctl_lock(c);
            int pending = c->busy || hs_ctl_pending(c);
            hs_ctl_unlock(c);
            if (pending) {
                if (now > g->wait_until) {
                    fprintf(stderr, "gui: %s:%d: wait timed out after %.0f s\n", g->script.file,
                            e->line, e->value);
                    g->script_failed = 1;
                    *running = 0;
                    return 1;
                }
                return 0;
            }
            g->waiting = 0;
            g->script.pos++;
            render(g, c);
            continue;
        }
        if (g->sleep_until > 0) {
            if (now < g->sleep_until) return 0;
            g->sleep_until = 0;
            g->script.pos++;
            continue;
        }
        char err[600];
        switch (e->op) {
        case HS_EV_KEY: do_action(g, c, hs_ctl_key(c, e->key), running); break;
        case HS_EV_CLICK: on_click(g, c, e->x0, e->y0, 0); break;
        case HS_EV_MOVE: g->mx = e->x0; g->my = e->y0; g->hover = 1; break;
        case HS_EV_WHEEL: on_wheel(g, c, e->x0, e->y0, e->x1); break;
        case HS_EV_DRAG: on_drag(g, c, e->x0, e->y0, e->x1, e->y1); break;
        case HS_EV_WAIT:
            g->waiting = 1;
            g->wait_until = now + e->value * 1000;
            return 0;
        case HS_EV_SLEEP:
            g->sleep_until = now + e->value;
            return 0;
        case HS_EV_SCREENSHOT:
            render(g, c);
            if (screenshot(g, e->path, err, sizeof err) != 0) {
                fprintf(stderr, "gui: %s:%d: %s\n", g->script.file, e->line, err);
                g->script_failed = 1;
                *running = 0;
                return 1;
            }
            break;
        case HS_EV_RESIZE:
            SDL_SetWindowSize(g->win, (int)e->x0, (int)e->y0);
            if (gui_resize_buffers(g, err, sizeof err) != 0) {
                fprintf(stderr, "gui: %s\n", err);
                g->script_failed = 1;
                *running = 0;
                return 1;
            }
            break;
        case HS_EV_QUIT: *running = 0; g->script.pos++; return 1;
        }
        g->script.pos++;
        if (!*running) return 1;
    }
    *running = 0;   /* a script that ends without quit still ends the session */
    return 1;
}

int hs_gui_run(hs_controller *c, const hs_gui_opts *o) {
    gui g;
    memset(&g, 0, sizeof g);
    char err[600];
    if (o->script) {
        if (hs_script_load(&g.script, o->script, err, sizeof err) != 0) {
            fprintf(stderr, "hybridscope gui: %s\n", err);
            return 2;
        }
        g.has_script = 1;
    }
    SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0");
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "hybridscope gui: no display (%s)\n", SDL_GetError());
        hs_script_free(&g.script);
        return HS_GUI_NO_DISPLAY;
    }
    /* SDL falls back to an invisible offscreen/dummy display when there is none; only a
     * caller who asked for one (tests: SDL_VIDEODRIVER=dummy) gets it. */
    const char *driver = SDL_GetCurrentVideoDriver(), *asked = getenv("SDL_VIDEODRIVER");
    if (driver && (!strcmp(driver, "offscreen") || !strcmp(driver, "dummy")) && !(asked && asked[0])) {
        fprintf(stderr, "hybridscope gui: no display (set DISPLAY or WAYLAND_DISPLAY)\n");
        SDL_Quit();
        hs_script_free(&g.script);
        return HS_GUI_NO_DISPLAY;
    }
    g.win = SDL_CreateWindow("hybridscope", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, o->width,
                             o->height, SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (g.win) g.ren = SDL_CreateRenderer(g.win, -1, SDL_RENDERER_PRESENTVSYNC);
    if (g.win && !g.ren) g.ren = SDL_CreateRenderer(g.win, -1, SDL_RENDERER_SOFTWARE);
    int rc = 0;
    if (!g.win || !g.ren || gui_resize_buffers(&g, err, sizeof err) != 0) {
        fprintf(stderr, "hybridscope gui: cannot open a window: %s\n", g.win && g.ren ? err : SDL_GetError());
        rc = 1;
        goto done;
    }
    SDL_SetWindowMinimumSize(g.win, 480, 320);
    SDL_StartTextInput();
    int running = 1, dirty = 1;
    double last = 0;
    while (running) {
        SDL_Event ev;
        int got = SDL_WaitEventTimeout(&ev, g.has_script ? 5 : 30);
        while (got) {
            dirty = 1;
            switch (ev.type) {
            case SDL_QUIT: running = 0; break;
            case SDL_WINDOWEVENT:
                if (ev.window.event == SDL_WINDOWEVENT_SIZE_CHANGED ||
                    ev.window.event == SDL_WINDOWEVENT_RESIZED) {
                    if (gui_resize_buffers(&g, err, sizeof err) != 0) {
                        fprintf(stderr, "hybridscope gui: %s\n", err);
                        running = 0;
                        rc = 1;
                    }
                } else if (ev.window.event == SDL_WINDOWEVENT_LEAVE) {
                    g.hover = 0;
                }
                break;
            case SDL_TEXTINPUT: {
                unsigned char ch = (unsigned char)ev.text.text[0];
                if (ch >= 32 && ch < 127 && !ev.text.text[1]) do_action(&g, c, hs_ctl_key(c, ch), &running);
                break;
            }
            case SDL_KEYDOWN: {
                int key = translate_key(&ev.key);
                if (key >= 0) do_action(&g, c, hs_ctl_key(c, key), &running);
                break;
            }
            case SDL_MOUSEMOTION:
                g.mx = ev.motion.x; g.my = ev.motion.y; g.hover = 1;
                if (g.dragging && (ev.motion.state & SDL_BUTTON_LMASK)) {
                    double dx = g.mx - g.drag_x, dy = g.my - g.drag_y;
                    if (dx * dx + dy * dy >= 64) {   /* pan in steps: each re-queries the engine */
                        on_drag(&g, c, g.drag_x, g.drag_y, g.mx, g.my);
                        g.drag_x = g.mx; g.drag_y = g.my;
                        g.dragging = 2;
                    }
                }
                break;
            case SDL_MOUSEBUTTONDOWN:
                if (ev.button.button == SDL_BUTTON_LEFT) {
                    g.dragging = 1;
                    g.drag_x = ev.button.x; g.drag_y = ev.button.y;
                }
                break;
            case SDL_MOUSEBUTTONUP:
                if (ev.button.button == SDL_BUTTON_LEFT) {
                    if (g.dragging == 1) on_click(&g, c, ev.button.x, ev.button.y, ev.button.clicks >= 2);
                    else if (g.dragging == 2) on_drag(&g, c, g.drag_x, g.drag_y, ev.button.x, ev.button.y);
                    g.dragging = 0;
                }
                break;
            case SDL_MOUSEWHEEL: {
                int x, y;
                SDL_GetMouseState(&x, &y);
                on_wheel(&g, c, x, y, ev.wheel.y);
                break;
            }
            default: break;
            }
            got = SDL_PollEvent(&ev);
        }
        if (g.has_script && running) {
            if (run_script(&g, c, &running)) dirty = 1;
        }
        hs_ctl_lock(c);
        int busy = c->busy || hs_ctl_pending(c);
        hs_ctl_unlock(c);
        double now = now_ms();
        if (running && (dirty || (busy && now - last > 100) || now - last > 500)) {
            if (render(&g, c) != 0) { rc = 1; break; }
            last = now;
            dirty = 0;
        }
    }
    if (g.script_failed) rc = 1;
done:
    if (g.tex) SDL_DestroyTexture(g.tex);
    if (g.ren) SDL_DestroyRenderer(g.ren);
    if (g.win) SDL_DestroyWindow(g.win);
    free(g.pixels);
    hs_script_free(&g.script);
    SDL_Quit();
    return rc;
}

#else

#include <stdio.h>

int hs_gui_run(hs_controller *c, const hs_gui_opts *o) {
    (void)c; (void)o;
    fprintf(stderr, "hybridscope gui: this build has no window mode (SDL2 and cairo were missing at "
                    "build time)\n");
    return HS_GUI_NO_DISPLAY;
}

#endif
