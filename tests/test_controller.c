/* The explorer's controller on tiny random checkpoints: settings and key actions, result
 * versioning (a stale result is dropped), cancel, the hybrid-ratio switch, device messages,
 * zoom/pan clamping, command-line settings and scripted input parsing. Numbers are checked
 * against direct engine calls (the controller must add none of its own). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../app/controller.h"
#include "../app/script.h"
#include "../engine/analysis_api.h"
#include "../engine/assets.h"
#include "../engine/cuda_backend.h"
#include "../engine/needle.h"
#include "../engine/presets.h"
#include "test.h"

/* A tiny head-wise gla/NoPE checkpoint at dir with L0 = 512. */
static int make_model(const char *dir, int ra, int rb, uint64_t seed, char *err, size_t n) {
    hs_preset_args a;
    hs_preset_args_init(&a);
    a.preset = "tiny";
    a.layout_hh = 1;
    a.ratio_a = ra;
    a.ratio_b = rb;
    a.train_context = 512;
    hs_model *m = calloc(1, sizeof *m);
    if (!m) return -1;
    int rc = hs_preset_build(&m->cfg, &a, err, n);
    if (rc == 0) rc = hs_model_alloc(m, err, n);
    if (rc == 0) {
        hs_model_init_random(m, seed);
        rc = hs_model_save(m, dir, 0, NULL, err, n);
    }
    hs_model_free(m);
    free(m);
    return rc;
}

/* tmp/fam/{m31,m11} and tmp/fam/families.json, made once per test run. */
static const char *family_dir(void) {
    static char dir[1024];
    static int made;
    if (made) return made > 0 ? dir : NULL;
    snprintf(dir, sizeof dir, "%s/fam", hs_test_tmpdir());
    mkdir(dir, 0755);
    char p[1300], err[256];
    snprintf(p, sizeof p, "%s/m31", dir);
    if (make_model(p, 3, 1, 7, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); made = -1; return NULL; }
    snprintf(p, sizeof p, "%s/m11", dir);
    if (make_model(p, 1, 1, 8, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); made = -1; return NULL; }
    snprintf(p, sizeof p, "%s/families.json", dir);
    FILE *f = fopen(p, "w");
    if (!f) { made = -1; return NULL; }
    fprintf(f, "{\"default\": \"m31\", \"families\": [{\"name\": \"gla-nope-hh\", \"efficient\": \"gla\","
               " \"layout\": \"HH\", \"members\": [{\"model\": \"m31\", \"ratio\": \"3:1\"},"
               " {\"model\": \"m11\", \"ratio\": \"1:1\"}]}]}\n");
    fclose(f);
    made = 1;
    return dir;
}

/* Small sweep settings so jobs stay fast. */
static void small_settings(hs_settings *s, const char *model) {
    memset(s, 0, sizeof *s);
    snprintf(s->model, sizeof s->model, "%.1000s", model);
    s->device = HS_DEVICE_CPU;
    s->n_sweep_lengths = 1; s->sweep_lengths[0] = 512;
    s->n_sweep_depths = 2; s->sweep_depths[0] = 0; s->sweep_depths[1] = 100;
    s->n_sweep_tasks = 1; s->sweep_tasks[0] = HS_SK1;
    s->sweep_samples = 1;
    s->ppl_length = 256;
    s->bins = 8;
    s->head_bins = 32;
}

static hs_controller *open_ctl(const char *name, char *err, size_t n) {
    const char *fam = family_dir();
    if (!fam) { snprintf(err, n, "cannot make the test models"); return NULL; }
    char model[1200];
    snprintf(model, sizeof model, "%s/%s", fam, name);
    hs_settings s;
    small_settings(&s, model);
    hs_controller *c = calloc(1, sizeof *c);
    if (hs_ctl_init(c, &s, err, n) != 0) { hs_ctl_free(c); free(c); return NULL; }
    return c;
}

static void close_ctl(hs_controller *c) { if (c) { hs_ctl_free(c); free(c); } }

static int assets_available(void) {
    char dir[1024], err[512];
    return hs_assets_find(dir, sizeof dir, NULL, err, sizeof err) == 0;
}

TEST(controller_defaults_and_keys) {
    char err[256];
    hs_controller *c = open_ctl("m31", err, sizeof err);
    CHECK(c, "%s", err);
    CHECK(c->s.length == 512 && c->s.depth_pct == 50, "defaults: length %d depth %d", c->s.length, c->s.depth_pct);
    CHECK(c->n_siblings == 2 && !strcmp(c->siblings[c->sibling].ratio, "3:1"), "family: %d siblings", c->n_siblings);
    unsigned p0 = c->jobs[HS_JOB_PROBE].want, n0 = c->jobs[HS_JOB_NIAH].want;
    CHECK(hs_ctl_key(c, '>') == HS_ACT_REDRAW && c->s.length == 1024, "> doubles: %d", c->s.length);
    CHECK(c->jobs[HS_JOB_PROBE].want == p0 + 1 && c->jobs[HS_JOB_NIAH].want == n0,
          "length bumps the probe only (%u %u)", c->jobs[HS_JOB_PROBE].want, c->jobs[HS_JOB_NIAH].want);
    hs_ctl_key(c, '<');
    hs_ctl_key(c, '<');
    CHECK(c->s.length == 512 && strstr(c->message, "at least"), "< halves, floor at the sk1 minimum: %d", c->s.length);
    hs_ctl_key(c, '2');
    CHECK(c->s.view == HS_VIEW_HEAD, "2 -> head view");
    hs_ctl_key(c, HS_KEY_TAB);
    CHECK(c->s.view == HS_VIEW_TIDAL, "tab -> tidal");
    hs_ctl_key(c, HS_KEY_BTAB);
    hs_ctl_key(c, HS_KEY_BTAB);
    CHECK(c->s.view == HS_VIEW_HEADS, "btab back to heads");
    hs_ctl_key(c, 'w');
    CHECK(c->s.knobs.swla == HS_SWLA_EXACT && c->jobs[HS_JOB_NIAH].want == n0 + 1, "w -> swla exact, bumps niah");
    hs_ctl_key(c, 'w');
    CHECK(c->s.knobs.swla == HS_SWLA_OVERLAP, "w -> overlap");
    hs_ctl_key(c, 'w');
    CHECK(c->s.knobs.swla == HS_SWLA_OFF, "w -> off");
    hs_ctl_key(c, 'g');
    CHECK(c->s.knobs.log_scale == 1, "g -> log scale");
    /* at length 512 = L0 log scaling is a no-op: the status line says so */
    CHECK(strstr(c->message, "log scaling changes nothing on prompts of 512 <= 512"),
          "inert knob hint: '%s'", c->message);
    hs_ctl_key(c, '}');
    CHECK(c->s.knobs.log_scale_L0 == 1024, "} -> log L0 x2 (%d)", c->s.knobs.log_scale_L0);
    hs_ctl_key(c, 'l');
    CHECK(c->s.log_color == 1 && c->s.knobs.log_scale == 1, "l -> colour scale only");
    hs_ctl_key(c, ']');
    CHECK(c->s.knobs.swla_window == 1024 && c->s.knobs.swla == HS_SWLA_EXACT, "] -> swla window 2 L0 (%d)", c->s.knobs.swla_window);
    hs_ctl_key(c, 'r');
    CHECK(c->s.knobs.rope_window == 512, "r -> rope window L0");
    hs_ctl_key(c, 'r');
    hs_ctl_key(c, 'r');
    hs_ctl_key(c, 'r');
    CHECK(c->s.knobs.rope_window == 64, "r r -> 64 (%d)", c->s.knobs.rope_window);
    hs_ctl_key(c, 'r');
    CHECK(c->s.knobs.rope_window == 0, "below 64: off");
    hs_ctl_key(c, HS_KEY_RIGHT);
    hs_ctl_key(c, HS_KEY_DOWN);
    hs_head_ref r;
    CHECK(hs_ctl_head_ref(&c->model->cfg, c->s.sel_head, &r) == 0 && r.layer == 1, "down -> layer 1 (got %d)", r.layer);
    int col = r.head + (r.mixer ? c->model->cfg.layers[1].mixers[0].num_heads : 0);
    CHECK(col == 1, "right -> column 1 (got %d)", col);
    hs_ctl_key(c, 'x');
    CHECK(c->s.knobs.n_ablate == 1 && c->s.knobs.ablate[0].layer == r.layer &&
          c->s.knobs.ablate[0].mixer == r.mixer && c->s.knobs.ablate[0].head == r.head, "a ablates the selected head");
    hs_ctl_key(c, 'x');
    CHECK(c->s.knobs.n_ablate == 0, "x again restores it");
    hs_ctl_key(c, 'D');
    CHECK(c->s.depth_pct == 60, "D -> depth 60");
    hs_ctl_key(c, 'd');
    hs_ctl_key(c, 'd');
    CHECK(c->s.depth_pct == 40, "d d -> depth 40");
    hs_ctl_key(c, 'T');
    CHECK(c->s.dark == 1, "T -> dark");
    hs_ctl_key(c, 't');
    CHECK(c->s.task == HS_SK2, "t -> sk2");
    hs_ctl_key(c, '?');
    CHECK(c->help == 1, "? opens help");
    CHECK(hs_ctl_key(c, 'j') == HS_ACT_REDRAW && c->help == 0, "any key closes help");
    CHECK(hs_ctl_key(c, 's') == HS_ACT_SAVE, "s saves");
    CHECK(hs_ctl_key(c, 'q') == HS_ACT_QUIT, "q quits");
    /* swa window knob on a model without swa: a message, no change */
    hs_ctl_key(c, 'A');
    CHECK(c->s.knobs.swa_window == 0 && strstr(c->message, "no SWA"), "swa on a gla model: %s", c->message);
    close_ctl(c);
}

TEST(controller_probe_matches_engine) {
    if (!assets_available()) SKIP("assets/ not found");
    char err[256];
    hs_controller *c = open_ctl("m31", err, sizeof err);
    CHECK(c, "%s", err);
    hs_ctl_key(c, 'g');   /* a knob on, so it must reach the engine */
    CHECK(hs_ctl_compute_sync(c, HS_VIEW_HEADS, err, sizeof err) == 0, "compute: %s", err);
    int nh = hs_ctl_head_count(&c->model->cfg);
    CHECK(c->probe && c->probe->n_heads == nh && c->n_maps == nh, "probe with %d heads and maps", nh);
    CHECK(c->jobs[HS_JOB_PROBE].have == c->jobs[HS_JOB_PROBE].want, "probe current");
    CHECK(c->maps[0].bins_t == 8 && c->maps[0].bins_s == 8 && c->maps[0].T == 512, "small map 8x8 over 512");
    /* the same probe straight from the engine */
    const hs_assets *a = NULL;
    hs_assets as;
    char dir[1024];
    CHECK(hs_assets_find(dir, sizeof dir, NULL, err, sizeof err) == 0 && hs_assets_load(&as, dir, err, sizeof err) == 0, "%s", err);
    a = &as;
    hs_needle_sample smp;
    CHECK(hs_needle_generate(&smp, a, HS_SK1, 512, 50, 1, err, sizeof err) == 0, "%s", err);
    int n_probe = smp.probe_end - smp.probe_start;
    int *pos = malloc(sizeof(int) * (size_t)n_probe);
    for (int i = 0; i < n_probe; i++) pos[i] = smp.probe_start + i;
    hs_probe_opts o;
    memset(&o, 0, sizeof o);
    o.tokens = smp.tokens; o.T = smp.length; o.probe_pos = pos; o.n_probe = n_probe;
    o.span_start = smp.span_start; o.span_end = smp.span_end;
    o.max_new = hs_needle_max_new(&smp); o.expect = smp.value;
    hs_probe_result ref;
    memset(&ref, 0, sizeof ref);
    hs_knobs k;
    memset(&k, 0, sizeof k);
    k.log_scale = 1;
    int rc = hs_probe_run(&ref, c->model, &k, &o, NULL, NULL, err, sizeof err);
    free(pos);
    hs_needle_sample_free(&smp);
    hs_assets_free(&as);
    CHECK(rc == 0, "engine probe: %s", err);
    double worst = 0;
    for (int i = 0; i < nh; i++) {
        double d = fabs(ref.heads[i].entropy - c->probe->heads[i].entropy) +
                   fabs(ref.heads[i].hit_rate - c->probe->heads[i].hit_rate);
        if (worst == worst && !(d <= worst)) worst = d; /* a NaN sticks */
    }
    int same_answer = !strcmp(ref.answer, c->probe->answer);
    hs_probe_result_free(&ref);
    CHECK(worst < 1e-12, "controller probe differs from the engine's by %g", worst);
    CHECK(same_answer, "answers differ");
    /* the view input hands those results over unchanged */
    hs_view_input in;
    hs_ctl_view_input(c, &in);
    CHECK(in.probe == c->probe && in.maps == c->maps && in.n_maps == nh && in.length == 512, "view input");
    close_ctl(c);
}

/* Changes the depth from inside the job's first progress report: the job must give up and
 * its result must not be installed. */
static void bump_on_progress(void *ctx, const char *job, double f) {
    (void)job; (void)f;
    hs_controller *c = ctx;
    if (c->s.depth_pct == 50) hs_ctl_set_depth(c, 10);
}

TEST(controller_stale_result_dropped) {
    if (!assets_available()) SKIP("assets/ not found");
    char err[256];
    hs_controller *c = open_ctl("m31", err, sizeof err);
    CHECK(c, "%s", err);
    c->on_progress = bump_on_progress;
    c->on_progress_ctx = c;
    unsigned v0 = c->jobs[HS_JOB_PROBE].want;
    int rc = hs_ctl_compute_sync(c, HS_VIEW_TIDAL, err, sizeof err);
    CHECK(rc != 0 && c->probe == NULL && c->jobs[HS_JOB_PROBE].have == 0,
          "stale probe installed (rc %d, probe %p)", rc, (void *)c->probe);
    CHECK(c->jobs[HS_JOB_PROBE].want == v0 + 1 && c->s.depth_pct == 10, "bumped once");
    c->on_progress = NULL;
    CHECK(hs_ctl_compute_sync(c, HS_VIEW_TIDAL, err, sizeof err) == 0 && c->probe, "recompute: %s", err);
    /* the installed probe is the depth-10 prompt: its span sits before the depth-50 one */
    int span10 = c->probe->span_start;
    hs_ctl_set_depth(c, 90);
    CHECK(hs_ctl_compute_sync(c, HS_VIEW_TIDAL, err, sizeof err) == 0, "%s", err);
    CHECK(span10 < c->probe->span_start, "depth 10 span %d vs depth 90 span %d", span10, c->probe->span_start);
    close_ctl(c);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int wait_idle(hs_controller *c, double timeout) {
    double t0 = now_s();
    for (;;) {
        hs_ctl_lock(c);
        int busy = c->busy || hs_ctl_pending(c);
        hs_ctl_unlock(c);
        if (!busy) return 0;
        if (now_s() - t0 > timeout) return -1;
        usleep(5000);
    }
}

/* the status-line message, copied under the controller's lock (the worker may set it) */
static void status_message(char *out, size_t n, hs_controller *c) {
    hs_ctl_lock(c);
    snprintf(out, n, "%s", c->message);
    hs_ctl_unlock(c);
}

/* Enter while the view's job is in flight: the status line shows the job itself, and nothing
 * of it is left behind once the job is done (a "running" message stayed until the next key) */
TEST(controller_enter_while_running_leaves_no_message) {
    if (!assets_available()) SKIP("assets/ not found");
    char err[256];
    hs_controller *c = open_ctl("m31", err, sizeof err);
    CHECK(c, "%s", err);
    CHECK(hs_ctl_start(c, err, sizeof err) == 0, "%s", err);
    CHECK(wait_idle(c, 60) == 0, "first probe never finished");
    hs_ctl_toggle_log_scale(c);           /* a knob change: the probe runs again */
    hs_ctl_key(c, HS_KEY_ENTER);
    CHECK(wait_idle(c, 60) == 0, "probe never finished");
    char msg[sizeof c->message];
    status_message(msg, sizeof msg, c);
    CHECK(!strstr(msg, "running"), "message after the job: '%s'", msg);
    hs_ctl_key(c, HS_KEY_ENTER);          /* nothing to run: says so */
    status_message(msg, sizeof msg, c);
    CHECK(!strcmp(msg, "up to date"), "message when idle: '%s'", msg);
    close_ctl(c);
}

TEST(controller_worker_newest_wins_and_cancels) {
    if (!assets_available()) SKIP("assets/ not found");
    char err[256];
    hs_controller *c = open_ctl("m31", err, sizeof err);
    CHECK(c, "%s", err);
    CHECK(hs_ctl_start(c, err, sizeof err) == 0, "%s", err);
    CHECK(wait_idle(c, 60) == 0, "first probe never finished");
    /* several changes in a row: only the last one's result may end up installed */
    hs_ctl_set_length(c, 1024);
    hs_ctl_set_depth(c, 20);
    hs_ctl_set_length(c, 512);
    hs_ctl_set_depth(c, 80);
    CHECK(wait_idle(c, 60) == 0, "probe never finished");
    hs_ctl_lock(c);
    int T = c->probe ? c->probe->T : -1;
    unsigned have = c->jobs[HS_JOB_PROBE].have, want = c->jobs[HS_JOB_PROBE].want;
    hs_ctl_unlock(c);
    CHECK(T == 512 && have == want, "installed probe T=%d version %u of %u", T, have, want);
    /* cancel: a long sweep stops promptly when the settings change */
    hs_ctl_lock(c);
    c->s.n_sweep_lengths = 3;
    c->s.sweep_lengths[1] = 4096; c->s.sweep_lengths[2] = 8192;
    c->s.sweep_samples = 4;
    hs_ctl_bump(c, 1u << HS_JOB_NIAH);
    hs_ctl_unlock(c);
    hs_ctl_set_view(c, HS_VIEW_NEEDLE);
    double t0 = now_s();
    int started = 0;
    while (now_s() - t0 < 30) {
        hs_ctl_lock(c);
        started = c->busy && c->cur_job == HS_JOB_NIAH && c->niah;
        hs_ctl_unlock(c);
        if (started) break;
        usleep(2000);
    }
    CHECK(started, "sweep never started");
    hs_ctl_set_view(c, HS_VIEW_MODEL);   /* the model view needs no job */
    hs_ctl_toggle_log_scale(c);           /* makes the running sweep stale */
    double tc = now_s();
    int stopped = 0;
    while (now_s() - tc < 10) {
        hs_ctl_lock(c);
        stopped = !(c->busy && c->cur_job == HS_JOB_NIAH);
        hs_ctl_unlock(c);
        if (stopped) break;
        usleep(2000);
    }
    double took = now_s() - tc;
    hs_ctl_lock(c);
    unsigned nh = c->jobs[HS_JOB_NIAH].have, nw = c->jobs[HS_JOB_NIAH].want;
    hs_ctl_unlock(c);
    CHECK(stopped && took < 10, "sweep did not stop after the knob change (%.1f s)", took);
    CHECK(nh != nw, "the cancelled sweep was installed as current");
    /* the view on screen comes first: leaving the needle view for one whose probe is stale
     * stops the sweep, the probe runs, and the sweep starts again on return */
    hs_ctl_set_view(c, HS_VIEW_NEEDLE);
    t0 = now_s();
    started = 0;
    while (now_s() - t0 < 30) {
        hs_ctl_lock(c);
        started = c->busy && c->cur_job == HS_JOB_NIAH;
        hs_ctl_unlock(c);
        if (started) break;
        usleep(2000);
    }
    CHECK(started, "sweep never restarted");
    hs_ctl_set_depth(c, 30);
    hs_ctl_set_view(c, HS_VIEW_TIDAL);
    CHECK(wait_idle(c, 30) == 0, "the tidal view's probe waited for the sweep");
    hs_ctl_lock(c);
    int probe_ok = c->probe && c->jobs[HS_JOB_PROBE].have == c->jobs[HS_JOB_PROBE].want;
    int sweep_done = c->jobs[HS_JOB_NIAH].have == c->jobs[HS_JOB_NIAH].want;
    hs_ctl_unlock(c);
    CHECK(probe_ok && !sweep_done, "probe %d, sweep finished %d", probe_ok, sweep_done);
    close_ctl(c);   /* joins the worker */
}

TEST(controller_ratio_switch_keeps_settings) {
    char err[256];
    hs_controller *c = open_ctl("m31", err, sizeof err);
    CHECK(c, "%s", err);
    hs_ctl_set_length(c, 1024);
    hs_ctl_set_depth(c, 30);
    hs_ctl_cycle_task(c);
    hs_ctl_cycle_swla(c);
    hs_ctl_toggle_log_scale(c);
    hs_ctl_set_view(c, HS_VIEW_TIDAL);
    /* ablate a NoPE head that exists only in the 3:1 model's numbering... and one in both */
    hs_knobs k = c->s.knobs;
    k.n_ablate = 2;
    k.ablate[0] = (hs_head_ref){ 0, 0, 2 };   /* gla head 2: only 3:1 has 3 gla heads */
    k.ablate[1] = (hs_head_ref){ 1, 1, 0 };   /* the NoPE mixer's head 0: in both */
    hs_ctl_set_knobs(c, &k);
    CHECK(c->s.knobs.n_ablate == 2, "ablation set: %s", c->message);
    hs_settings before = c->s;
    CHECK(hs_ctl_cycle_ratio(c) == 0, "ratio switch: %s", c->message);
    CHECK(strstr(c->s.model, "m11") && !strcmp(c->siblings[c->sibling].ratio, "1:1"),
          "now on %.200s ratio %s", c->s.model, c->siblings[c->sibling].ratio);
    int biased = 0, nope = 0;
    hs_config_total_heads(&c->model->cfg, &biased, &nope);
    CHECK(biased == nope, "loaded model is 1:1 (%d:%d)", biased, nope);
    CHECK(c->s.length == before.length && c->s.depth_pct == before.depth_pct &&
          c->s.task == before.task && c->s.view == before.view &&
          c->s.knobs.swla == before.knobs.swla && c->s.knobs.log_scale == before.knobs.log_scale,
          "settings changed by the ratio switch");
    CHECK(c->s.knobs.n_ablate == 1 && c->s.knobs.ablate[0].layer == 1 && c->s.knobs.ablate[0].mixer == 1,
          "ablation targets: %d kept", c->s.knobs.n_ablate);
    CHECK(hs_ctl_cycle_ratio(c) == 0 && strstr(c->s.model, "m31"), "and back: %.200s", c->s.model);
    close_ctl(c);
}

TEST(controller_device_and_zoom) {
    char err[256];
    hs_controller *c = open_ctl("m31", err, sizeof err);
    CHECK(c, "%s", err);
    char why[256];
    int has_cuda = hs_device_resolve(HS_DEVICE_CUDA, why, sizeof why) >= 0;
    hs_ctl_cycle_device(c);   /* cpu -> cuda */
    if (!has_cuda) {
        CHECK(strstr(c->message, "no CUDA device") != NULL, "message: '%s'", c->message);
        CHECK(c->device_resolved == HS_DEVICE_CPU, "still on the cpu");
    } else {
        CHECK(c->device_resolved == HS_DEVICE_CUDA, "on cuda");
    }
    /* zoom in twice around the middle, pan past the end: the window stays inside [0, T) */
    hs_ctl_zoom_at(c, 2.0, 256, 256);
    CHECK(c->s.zoom_t0 == 128 && c->s.zoom_t1 == 384, "zoom: %d..%d", c->s.zoom_t0, c->s.zoom_t1);
    unsigned hv = c->jobs[HS_JOB_HEADMAP].want;
    hs_ctl_pan(c, 1000, -1000);
    CHECK(c->s.zoom_t1 == 512 && c->s.zoom_t0 == 256 && c->s.zoom_s0 == 0 && c->s.zoom_s1 == 256,
          "pan clamps: t %d..%d s %d..%d", c->s.zoom_t0, c->s.zoom_t1, c->s.zoom_s0, c->s.zoom_s1);
    CHECK(c->jobs[HS_JOB_HEADMAP].want == hv + 1, "pan re-queries the map");
    hs_ctl_zoom_at(c, 0.25, 400, 120);
    CHECK(c->s.zoom_t1 == 0, "zooming out past the whole sequence resets the window");
    hs_ctl_key(c, '+');
    CHECK(c->s.zoom_t1 - c->s.zoom_t0 == 256, "+ halves the window");
    hs_ctl_key(c, '0');
    CHECK(c->s.zoom_t1 == 0, "0 resets");
    close_ctl(c);
}

TEST(controller_settings_args) {
    hs_settings s;
    memset(&s, 0, sizeof s);
    char err[256];
    char *argv[] = { "x", "--length", "4k", "--depth=0", "--head", "1.0.2", "--lengths", "1k,2K",
                     "--depths", "0:100:50", "--swla=overlap", "--zoom", "10:20,0:5", "--theme", "dark",
                     "--task", "sk3", "--device", "cpu", "--bogus" };
    int argc = (int)(sizeof argv / sizeof argv[0]), i;
    for (i = 1; i < argc; i++) {
        int r = hs_settings_parse_arg(&s, argc, argv, &i, err, sizeof err);
        if (r <= 0) break;
    }
    CHECK(i == argc - 1, "stopped at %d (%s)", i, argv[i < argc ? i : 0]);
    CHECK(s.length == 4096 && s.depth_pct == 0 && s.depth_given, "length/depth");
    CHECK(s.head_given && s.head_ref.layer == 1 && s.head_ref.head == 2, "head");
    CHECK(s.n_sweep_lengths == 2 && s.sweep_lengths[1] == 2048, "lengths");
    CHECK(s.n_sweep_depths == 3 && s.sweep_depths[2] == 100, "depths");
    CHECK(s.knobs.swla == HS_SWLA_OVERLAP && s.dark && s.task == HS_SK3 && s.device == HS_DEVICE_CPU, "knobs/theme/task/device");
    CHECK(s.zoom_t0 == 10 && s.zoom_t1 == 20 && s.zoom_s1 == 5, "zoom");
    const char *bad[][2] = { { "--length", "100" }, { "--depth", "101" }, { "--head", "1.2" },
                             { "--lengths", "1k,x" }, { "--device", "tpu" }, { "--task", "sk4" },
                             { "--zoom", "5:1,0:2" }, { "--depths", "0:nan:5" }, { "--depths", "nan" },
                             { "--depths", "0,inf" }, { "--zoom", "0:99999999999,0:5" },
                             { "--head", "99999999999.0.0" }, { "--lengths", "1k,2k," }, { "--length", "nan" },
                             { "--ablate", "1.0.-1" } };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        char *av[] = { "x", (char *)bad[b][0], (char *)bad[b][1] };
        int j = 1;
        err[0] = 0;
        int r = hs_settings_parse_arg(&s, 3, av, &j, err, sizeof err);
        CHECK(r == -1 && strstr(err, bad[b][0]), "%s %s: r=%d err='%s'", bad[b][0], bad[b][1], r, err);
    }
    CHECK(hs_parse_count("64K") == 65536 && hs_parse_count("2m") == 2097152 && hs_parse_count("1.5") == -1, "counts");
}

TEST(controller_script_parse) {
    char path[1100], err[300];
    snprintf(path, sizeof path, "%s/s.txt", hs_test_tmpdir());
    FILE *f = fopen(path, "w");
    CHECK(f, "tmp");
    fprintf(f, "# a comment\nkey tab\nkeys wl\nclick 10 20\nwheel 5 6 -2\nwait\nsleep 5\n"
               "screenshot out dir/a.png\nresize 640 480\nquit\n");
    fclose(f);
    hs_script s;
    CHECK(hs_script_load(&s, path, err, sizeof err) == 0, "%s", err);
    CHECK(s.n == 10, "events: %d", s.n);
    CHECK(s.ev[0].op == HS_EV_KEY && s.ev[0].key == HS_KEY_TAB, "tab");
    CHECK(s.ev[1].key == 'w' && s.ev[2].key == 'l', "keys");
    CHECK(s.ev[3].op == HS_EV_CLICK && s.ev[3].x0 == 10 && s.ev[3].y0 == 20, "click");
    CHECK(s.ev[4].op == HS_EV_WHEEL && s.ev[4].x1 == -2, "wheel");
    CHECK(s.ev[5].op == HS_EV_WAIT && s.ev[5].value == 120, "wait default");
    CHECK(s.ev[7].op == HS_EV_SCREENSHOT && !strcmp(s.ev[7].path, "out dir/a.png"), "screenshot path");
    CHECK(s.ev[9].op == HS_EV_QUIT, "quit");
    hs_script_free(&s);
    f = fopen(path, "w");
    fprintf(f, "key tab\n\nclick 1\n");
    fclose(f);
    CHECK(hs_script_load(&s, path, err, sizeof err) == -1 && strstr(err, ":3:"), "bad line: %s", err);
    /* numbers the gui would overflow or loop on, trailing words, and a line past the buffer */
    static const char *const bad[] = { "resize inf 600\n", "resize 1e10 600\n", "click nan 3\n",
                                       "wheel 1 1 1e18\n", "sleep 1e300\n", "wait -1\n", "click 1 2 junk\n",
                                       "drag 1 2 3\n" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(path, "w");
        fprintf(f, "key tab\n%s", bad[i]);
        fclose(f);
        CHECK(hs_script_load(&s, path, err, sizeof err) == -1 && strstr(err, ":2: bad arguments"), "'%s' accepted: %s",
              bad[i], err);
    }
    f = fopen(path, "w");
    fprintf(f, "key tab\nscreenshot ");
    for (int i = 0; i < 1100; i++) fputc('a', f);
    fprintf(f, ".png\nquit\n");
    fclose(f);
    CHECK(hs_script_load(&s, path, err, sizeof err) == -1 && strstr(err, ":2: line longer"), "long line: %s", err);
    /* a script that would expand to more events than the cap (170 lines of 590 keys) */
    f = fopen(path, "w");
    for (int l = 0; l < 170; l++) {
        fputs("keys ", f);
        for (int i = 0; i < 590; i++) fputc('a' + i % 26, f);
        fputc('\n', f);
    }
    fclose(f);
    CHECK(hs_script_load(&s, path, err, sizeof err) == -1 && strstr(err, "more than 100000 events"), "cap: %s", err);
}

TEST(controller_inert_knob_hint_only_when_inert) {
    char err[256];
    hs_controller *c = open_ctl("m31", err, sizeof err);
    CHECK(c, "%s", err);
    hs_ctl_key(c, '>');                                   /* 1024 > L0 = 512 */
    c->message[0] = 0;
    hs_ctl_key(c, 'g');
    CHECK(c->s.knobs.log_scale && !strstr(c->message, "changes nothing"),
          "log scaling past L0 is not inert: '%s'", c->message);
    hs_ctl_key(c, 'w');
    CHECK(c->s.knobs.swla == HS_SWLA_EXACT && !strstr(c->message, "changes nothing"),
          "SWLA W = L0 at 2 L0 is not inert: '%s'", c->message);
    hs_ctl_key(c, 'g');
    hs_ctl_key(c, '<');                                   /* back to L0 */
    hs_ctl_key(c, 'g');
    CHECK(strstr(c->message, "log scaling changes nothing"), "at L0 it is: '%s'", c->message);
    close_ctl(c);
}
