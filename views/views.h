/* Views: drawn once, through hs_canvas, from plain result structs. Both front ends (SDL2 +
 * cairo, ncurses text cells) and headless export call these and nothing else to draw. */
#ifndef HS_VIEWS_H
#define HS_VIEWS_H

#include "canvas.h"
#include "../engine/config.h"
#include "../engine/knobs.h"
#include "../engine/analysis.h"

typedef enum { HS_VIEW_HEADS = 0, HS_VIEW_HEAD, HS_VIEW_TIDAL, HS_VIEW_NEEDLE, HS_VIEW_PPL,
               HS_VIEW_MODEL, HS_VIEW_COUNT } hs_view_kind;

const char *hs_view_name(hs_view_kind v);          /* "heads", "head", ... */
int hs_view_parse(const char *s);                  /* -1 if unknown */

/* Everything a view may draw. Pointers may be NULL when that result is not (yet) computed;
 * a view then draws a placeholder saying what is pending. Nothing here is owned by views. */
typedef struct {
    const hs_config *cfg;
    const char *model_name;
    const hs_knobs *knobs;
    int length, depth_pct, topk;                   /* the current settings, for captions */
    hs_needle_task task;

    /* heads + tidal + head */
    const hs_probe_result *probe;                  /* per-head statistics, tokens, span */
    const hs_pooled_map *maps;                     /* [n_maps] one small map per head, same
                                                      order as probe->heads */
    int n_maps;
    int sel_head;                                  /* index into probe->heads / maps */
    const hs_probe_result *ghost;                  /* tidal: previous knob setting (faint) */
    const char *ghost_label;

    /* head view: the selected head's map, possibly zoomed (map->t0.. describe the window) */
    const hs_pooled_map *head_map;
    int log_color;                                 /* colour bar: 0 linear, 1 log */

    /* needle view */
    const hs_niah_result *niah;
    int sel_task, sel_length, sel_depth;           /* selected cell (-1 = none) */

    /* perplexity view: pinned curves first, the live one last */
    const hs_ppl_result *ppl;
    int n_ppl;

    /* model view: cache/state memory is drawn for lengths up to this */
    int max_length;
} hs_view_input;

/* Draws view v filling the canvas (minus nothing: the front end gives a canvas sized to the
 * view area). */
void hs_view_draw(hs_canvas *c, hs_view_kind v, const hs_view_input *in);

/* What is under (x, y) in view v, for hover text and clicks. */
typedef struct {
    int what;                 /* HS_HIT_NONE, ... */
    int head;                 /* index into probe->heads (heads, tidal) */
    int t, s;                 /* token positions (head view) */
    int task, length, depth;  /* needle cell indices */
    char text[256];           /* hover text, one line */
} hs_view_hit;
enum { HS_HIT_NONE = 0, HS_HIT_HEAD, HS_HIT_CELL, HS_HIT_NEEDLE };
int hs_view_hit_test(hs_view_hit *out, hs_canvas *c, hs_view_kind v, const hs_view_input *in,
                     double x, double y);
/* For the head view: the map-area rectangle (canvas units), so front ends can turn drags and
 * wheel events into zoom windows. Returns 0 when the view has no map area. */
int hs_view_head_map_rect(hs_canvas *c, const hs_view_input *in, double *x, double *y,
                          double *w, double *h);

/* Chrome shared by both front ends: the status line (model, device, knobs, progress), the
 * bottom key bar, the view tabs and the help overlay listing every key. */
typedef struct {
    const char *model_name;
    const char *device;
    const char *knobs;        /* hs_knobs_describe() text */
    const char *job;          /* running job description or NULL */
    double progress;          /* 0..1, < 0 = none */
    const char *message;      /* last message (errors, "saved to ...") or NULL */
    hs_view_kind view;
} hs_chrome_input;
/* Heights in canvas units of the top tab bar and the bottom status + key bars. */
double hs_chrome_top_height(hs_canvas *c);
double hs_chrome_bottom_height(hs_canvas *c);
void hs_chrome_draw(hs_canvas *c, const hs_chrome_input *in);
/* The view whose tab is under (x, y) (canvas coordinates of the whole frame), or -1. */
int hs_chrome_tab_at(hs_canvas *c, double x, double y);
void hs_help_overlay_draw(hs_canvas *c);

/* The key map (one table; both front ends translate their events to these and the help
 * overlay and key bar list them). */
typedef struct { const char *keys; const char *action; } hs_key_help;
extern const hs_key_help hs_key_map[];
extern const int hs_key_map_len;

/* Colour maps (colour-blind safe) and themes. t in [0,1]. */
hs_rgba hs_cmap_viridis(double t);
hs_rgba hs_cmap_niah(double acc);                  /* red-yellow-green accuracy scale */
hs_rgba hs_branch_color(hs_mixer_type t, int dark);/* Okabe-Ito per branch type */
hs_rgba hs_theme_bg(int dark);
hs_rgba hs_theme_fg(int dark);

/* A canvas that draws into the rectangle (x, y, w, h) of another one, e.g. the view area
 * between the chrome bars; coordinates on it start at (0,0). The struct is the caller's (no
 * allocation); the parent must outlive it. Hit tests take coordinates relative to the area. */
typedef struct { hs_canvas c; hs_canvas *parent; double ox, oy; } hs_canvas_area;
void hs_canvas_area_init(hs_canvas_area *a, hs_canvas *parent, double x, double y, double w,
                         double h);
/* Paints the whole canvas with the theme background. */
void hs_canvas_clear(hs_canvas *c);

#endif
