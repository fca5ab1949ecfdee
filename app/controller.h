/* The explorer's controller: one session (settings + results) shared by the SDL2 window, the
 * ncurses terminal and headless export. Engine jobs run on a worker thread (app/worker.c);
 * results are versioned, so a job started for older settings never overwrites newer ones, and
 * the UI thread never waits for the engine: it reads results under the lock each frame. Every
 * key action is a controller function, so both front ends behave the same. */
#ifndef HS_CONTROLLER_H
#define HS_CONTROLLER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../engine/analysis.h"
#include "../engine/knobs.h"
#include "../engine/model.h"
#include "../views/views.h"

/* Engine jobs. Each view needs a subset (hs_ctl_view_jobs). */
typedef enum { HS_JOB_PROBE = 0, HS_JOB_HEADMAP, HS_JOB_NIAH, HS_JOB_PPL, HS_JOB_KINDS } hs_job_kind;

#define HS_CTL_MAX_SWEEP 16
#define HS_CTL_MAX_PINS 8
#define HS_CTL_MIN_LENGTH 256

/* Everything the user can set. Plain data: jobs run on a copy. */
typedef struct {
    char model[1024];               /* resolved model directory */
    char model_name[128];           /* shown in the status line */
    int device;                     /* requested hs_device (AUTO/CPU/CUDA) */
    hs_knobs knobs;
    hs_needle_task task;
    int length;                     /* probe / head map prompt length, tokens */
    int depth_pct;                  /* needle depth, percent */
    int topk;                       /* 0 = the engine's default for the length */
    uint64_t seed;
    int bins;                       /* small multiples: bins per side */
    int head_bins;                  /* the large head map: bins per side */
    int zoom_t0, zoom_t1, zoom_s0, zoom_s1; /* head view window; t1 == 0 => whole sequence */
    /* needle sweep */
    int n_sweep_lengths, sweep_lengths[HS_CTL_MAX_SWEEP];
    int n_sweep_depths;  double sweep_depths[HS_CTL_MAX_SWEEP];
    int sweep_samples;
    int n_sweep_tasks;   hs_needle_task sweep_tasks[HS_NEEDLE_TASKS];
    /* perplexity */
    int ppl_length;
    /* presentation */
    hs_view_kind view;
    int sel_head;                   /* index into the head list (layer-major, mixer, head) */
    int sel_task, sel_length, sel_depth; /* needle cell, -1 = none */
    int log_color, dark;
    int max_length;                 /* longest context offered (memory cap) */
    /* --head L.M.H from the command line, resolved against the model in hs_ctl_init */
    int head_given; hs_head_ref head_ref;
    int depth_given;                /* --depth given (0 is a valid depth) */
} hs_settings;

/* One sibling in a model family (families.json): same efficient type and layout, another
 * ratio. */
typedef struct { char ratio[16]; char dir[1024]; char name[128]; } hs_sibling;

typedef struct hs_controller hs_controller;

/* What the worker fills: one slot per job kind, tagged with the version it was computed for. */
typedef struct {
    unsigned want;                  /* bumped by every settings change the job depends on */
    unsigned have;                  /* version of the result installed (0 = none) */
    unsigned running;               /* version of the job in flight (0 = none) */
    unsigned failed;                /* version whose job failed (not retried) */
    char error[HS_ERR_LEN];         /* last failure for the current version */
} hs_job_slot;

struct hs_controller {
    pthread_mutex_t mu;
    pthread_cond_t wake;            /* worker waits on it for new work */
    pthread_t thread;
    int thread_started, quit;

    hs_settings s;                  /* current settings (UI thread writes under mu) */
    hs_model *model;                /* loaded model; swapped by the ratio switch under mu */
    unsigned model_version;         /* bumped on every model swap */
    int device_resolved;            /* HS_DEVICE_CPU / HS_DEVICE_CUDA */

    hs_job_slot jobs[HS_JOB_KINDS];
    /* results, owned, replaced as a whole by the worker under mu */
    hs_probe_result *probe;
    hs_pooled_map *maps; int n_maps;
    hs_pooled_map *head_map;
    hs_niah_result *niah;           /* live: filled during the sweep */
    hs_ppl_result *ppl;             /* live curve */
    hs_ppl_result pins[HS_CTL_MAX_PINS]; int n_pins; /* pinned curves (deep copies) */
    hs_probe_result *ghost;         /* tidal: the probe under the previous knobs */
    char ghost_label[160];

    /* progress of the job in flight */
    hs_job_kind cur_job; int busy;
    double progress;
    char job_text[96];
    /* Optional: called on every progress report (export's progress bar). */
    void (*on_progress)(void *ctx, const char *job, double fraction);
    void *on_progress_ctx;

    char message[256];              /* status-line message (saved, errors) */
    int help;                       /* help overlay shown */

    hs_sibling siblings[16]; int n_siblings; int sibling; /* family (ratio switch) */
    char pending_model[1024];       /* ratio switch: the worker loads it next */
    int pending_load;
    void *worker;                   /* app/worker.c's private state (assets) */
    int min_length[HS_NEEDLE_TASKS];/* shortest prompt each needle task fits in */

    /* scratch strings for the chrome, valid until the next hs_ctl_chrome_input call */
    char knobs_text[256], device_text[64], job_line[160];
};

/* Command-line flags shared by gui, tui and export: --device, every knob flag
 * (hs_knobs_parse_arg), --task --length --depth --seed --topk --head L.M.H --zoom t0:t1,s0:s1
 * --bins --head-bins --tasks --lengths --depths --samples --ppl-length --theme --log-color.
 * Returns 1 with *i on the last argument consumed (the caller's loop steps on), 0 when
 * argv[*i] is not one of these, -1 on a bad value (err names the flag). */
int hs_settings_parse_arg(hs_settings *s, int argc, char **argv, int *i, char *err, size_t errlen);
extern const char hs_settings_help[];
/* Positive integer with an optional k/K (x1024) or m/M suffix; -1 when malformed. */
long hs_parse_count(const char *s);

/* Sets defaults for a model: length = L0, depth 50, sweep L0/2..4L0 capped by max_length. */
void hs_settings_defaults(hs_settings *s, const hs_config *cfg);

/* Loads the model (synchronously: a bad path is reported before any window opens) and fills
 * the family siblings. `s` holds the model directory and the user's settings; any field left
 * 0 by the caller is defaulted from the model's config. Returns 0 or -1 with err. */
int hs_ctl_init(hs_controller *c, const hs_settings *s, char *err, size_t errlen);
/* Starts the worker thread (the interactive front ends). */
int hs_ctl_start(hs_controller *c, char *err, size_t errlen);
/* Stops the worker (cancelling the job in flight) and frees everything. */
void hs_ctl_free(hs_controller *c);

void hs_ctl_lock(hs_controller *c);
void hs_ctl_unlock(hs_controller *c);

/* Jobs view v needs, as a bit mask of (1 << hs_job_kind). */
unsigned hs_ctl_view_jobs(hs_view_kind v);
/* 1 while a job the current view needs is missing or stale (caller holds the lock). */
int hs_ctl_pending(const hs_controller *c);
/* Runs, in the calling thread, every job view v needs that is not current (export, tests).
 * Without a worker thread only. Returns 0 or -1 with err. */
int hs_ctl_compute_sync(hs_controller *c, hs_view_kind v, char *err, size_t errlen);

/* Fills the view and chrome inputs from the current state (caller holds the lock; pointers
 * stay valid while it is held). */
void hs_ctl_view_input(hs_controller *c, hs_view_input *in);
void hs_ctl_chrome_input(hs_controller *c, hs_chrome_input *in);

/* ---- actions (each takes the lock itself) ---- */
/* Keys shared by both front ends: printable characters as themselves, others below. */
enum { HS_KEY_UP = 0x10000, HS_KEY_DOWN, HS_KEY_LEFT, HS_KEY_RIGHT, HS_KEY_PGUP, HS_KEY_PGDN,
       HS_KEY_HOME, HS_KEY_TAB, HS_KEY_BTAB, HS_KEY_F1, HS_KEY_ESC, HS_KEY_ENTER };
/* What a key did, for the front end. */
enum { HS_ACT_NONE = 0, HS_ACT_REDRAW, HS_ACT_QUIT, HS_ACT_SAVE };
int hs_ctl_key(hs_controller *c, int key);

void hs_ctl_set_view(hs_controller *c, hs_view_kind v);
void hs_ctl_select_head(hs_controller *c, int head);
void hs_ctl_move_head(hs_controller *c, int dlayer, int dhead);
void hs_ctl_select_cell(hs_controller *c, int task, int length, int depth);
void hs_ctl_set_length(hs_controller *c, int length);
void hs_ctl_set_depth(hs_controller *c, int depth_pct);
void hs_ctl_set_topk(hs_controller *c, int topk);
void hs_ctl_cycle_task(hs_controller *c);
void hs_ctl_set_knobs(hs_controller *c, const hs_knobs *k);
void hs_ctl_cycle_swla(hs_controller *c);
void hs_ctl_scale_swla_window(hs_controller *c, int up);
void hs_ctl_toggle_log_scale(hs_controller *c);
void hs_ctl_scale_swa_window(hs_controller *c, int up);
void hs_ctl_scale_rope_window(hs_controller *c, int up);
void hs_ctl_scale_log_L0(hs_controller *c, int up);
void hs_ctl_cancel(hs_controller *c);
void hs_ctl_run_view(hs_controller *c);
void hs_ctl_toggle_ablate_selected(hs_controller *c);
/* Next sibling in the family (hybrid ratio); keeps every other setting. */
int hs_ctl_cycle_ratio(hs_controller *c);
int hs_ctl_switch_model(hs_controller *c, const char *dir, char *err, size_t errlen);
void hs_ctl_cycle_device(hs_controller *c);
/* Head view zoom: window in token positions; zoom by factor around (t, s); pan by deltas. */
void hs_ctl_set_zoom(hs_controller *c, int t0, int t1, int s0, int s1);
void hs_ctl_zoom_at(hs_controller *c, double factor, double t, double s);
void hs_ctl_pan(hs_controller *c, double dt, double ds);
void hs_ctl_pin_ppl(hs_controller *c);
void hs_ctl_clear_pins(hs_controller *c);
void hs_ctl_toggle_log_color(hs_controller *c);
void hs_ctl_toggle_theme(hs_controller *c);
void hs_ctl_set_message(hs_controller *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Head list helpers over the config (layer-major, mixer, head), valid without a probe. */
int hs_ctl_head_count(const hs_config *cfg);
int hs_ctl_head_ref(const hs_config *cfg, int index, hs_head_ref *out);

/* Saves the current view to `path` (png/svg/pdf), or to an auto-named PNG in the current
 * directory when path is NULL; writes the path or the error to the status message.
 * Returns 0 or -1. */
int hs_ctl_save_view(hs_controller *c, const char *path, int width, int height, double scale);

/* The default model when none is given: sample-models/families.json "default", looked up
 * beside the program and in the current directory. Returns 0 and the directory, or -1 with a
 * message that tells the user what to pass. */
int hs_ctl_default_model(char *dir, size_t n, char *err, size_t errlen);
/* MODEL as the user typed it (a checkpoint directory or a sample model name), or the default
 * model when arg is NULL. Returns 0, or -1 with a message naming arg. */
int hs_ctl_resolve_model(char *dir, size_t n, const char *arg, char *err, size_t errlen);

/* The interactive front ends (app/tui_curses.c, app/gui_sdl.c). Return an exit code. */
int hs_tui_run(hs_controller *c, int ascii);
typedef struct { int width, height; const char *script; } hs_gui_opts;
/* HS_GUI_NO_DISPLAY when no window can be opened (the caller may fall back to the tui). */
int hs_gui_run(hs_controller *c, const hs_gui_opts *o);
#define HS_GUI_NO_DISPLAY (-2)

/* Internals shared with app/worker.c. */
int hs_ctl_job_progress(hs_controller *c, hs_job_kind k, unsigned version, double fraction);
int hs_ctl_job_should_stop(const hs_controller *c, hs_job_kind k, unsigned version);
void hs_ctl_bump(hs_controller *c, unsigned mask);

#endif
