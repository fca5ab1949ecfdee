/* `hybridscope export --view V MODEL ... --out FILE.png|.svg|.pdf`: one view rendered
 * headless with the same drawing code as the explorer, computed synchronously. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/knobs.h"
#include "../views/paint_cairo.h"
#include "cli_util.h"
#include "commands.h"
#include "controller.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: hybridscope export --view heads|head|tidal|needle|ppl|model [MODEL] [options]\n"
        "                          --out FILE.png|.svg|.pdf\n\n"
        "Renders one view of the explorer to an image without a window: PNG (raster), SVG or\n"
        "PDF (vector text and lines, heatmaps embedded as images). The view's results are\n"
        "computed first with the given settings. MODEL is a checkpoint directory or a sample\n"
        "model name (default: the bundled default sample model).\n\noptions:\n"
        "  --view V                 which view (required)\n"
        "  --out FILE               output file; the extension picks the format (required)\n"
        "  --width W --height H     size in pixels (PNG) or points (SVG/PDF); default 1200x800\n"
        "  --scale S                device pixels per pixel for PNG (default 1; 2 for HiDPI)\n");
    fputs(hs_settings_help, f);
    fputs("  --tide                   tidal and ppl views: first without knobs, then with the\n"
          "                           given ones; the knob-free points stay as ghosts with\n"
          "                           arrows (tidal), the knob-free curve beside the new one (ppl)\n", f);
    fputs(hs_knobs_help, f);
}

static void on_progress(void *ctx, const char *job, double f) {
    hs_progress *p = ctx;
    if (job && job[0] && strncmp(p->label, job, sizeof p->label - 1)) {
        hs_progress_done(p);
        hs_progress_begin(p, job);
    }
    hs_progress_update(p, f);
}

static int cmd_export(int argc, char **argv) {
    hs_settings s;
    memset(&s, 0, sizeof s);
    const char *model_arg = NULL, *out = NULL;
    int view = -1, tide = 0;
    long long width = 1200, height = 800;
    double scale = 1.0;
    char err[HS_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (hs_cli_is_help(a)) { usage(stdout); return 0; }
        int r = hs_settings_parse_arg(&s, argc, argv, &i, err, sizeof err);
        if (r < 0) hs_cli_die("export", "%s", err);
        if (r > 0) continue;
        if (!strcmp(a, "--view")) {
            const char *v = hs_cli_str_flag("export", argc, argv, &i);
            view = hs_view_parse(v);
            if (view < 0) hs_cli_die("export", "--view: '%s' is not heads, head, tidal, needle, ppl or model", v);
        } else if (!strcmp(a, "--tide")) {
            tide = 1;
        } else if (!strcmp(a, "--out")) {
            out = hs_cli_str_flag("export", argc, argv, &i);
        } else if (!strcmp(a, "--width")) {
            width = hs_cli_int_flag("export", argc, argv, &i, 64, 16384);
        } else if (!strcmp(a, "--height")) {
            height = hs_cli_int_flag("export", argc, argv, &i, 64, 16384);
        } else if (!strcmp(a, "--scale")) {
            const char *v = hs_cli_str_flag("export", argc, argv, &i);
            char *end;
            scale = strtod(v, &end);
            if (*end || !(scale >= 0.25 && scale <= 8)) hs_cli_die("export", "--scale: needs a number in 0.25..8");
        } else if (a[0] == '-' && a[1]) {
            hs_cli_die("export", "unknown option '%s' (see --help)", a);
        } else if (model_arg) {
            hs_cli_die("export", "one MODEL only ('%s' and '%s')", model_arg, a);
        } else {
            model_arg = a;
        }
    }
    if (view < 0) hs_cli_die("export", "--view is required (heads, head, tidal, needle, ppl or model)");
    if (!out) hs_cli_die("export", "--out FILE.png|.svg|.pdf is required");
    if (!hs_export_format_known(out)) hs_cli_die("export", "--out %s: the extension must be .png, .svg or .pdf", out);
    if ((double)width * height * scale * scale > 40e6)
        hs_cli_die("export", "--width x --height x --scale^2 is over 40 megapixels");
    if (tide && view != HS_VIEW_TIDAL && view != HS_VIEW_PPL) hs_cli_die("export", "--tide needs --view tidal or ppl");
    if (hs_ctl_resolve_model(s.model, sizeof s.model, model_arg, err, sizeof err) != 0)
        hs_cli_die("export", "%s", err);
    s.view = (hs_view_kind)view;
    /* --tide: the knob-free result first, then the knobs as a change, exactly as a press in
     * the explorer does, so the previous positions become the ghosts (tidal) or the pinned
     * curve (ppl) */
    hs_knobs wanted = s.knobs;
    if (tide) {
        static const hs_knobs off_knobs;
        if (!memcmp(&wanted, &off_knobs, sizeof wanted)) hs_cli_die("export", "--tide needs at least one knob to show its tide");
        memset(&s.knobs, 0, sizeof s.knobs);
    }

    hs_controller *c = calloc(1, sizeof *c);
    if (!c) hs_cli_fail("export", "out of memory");
    int rc = 0;
    if (hs_ctl_init(c, &s, err, sizeof err) != 0) {
        fprintf(stderr, "hybridscope export: %s\n", err);
        rc = HS_EXIT_BAD_INPUT;
        goto done;
    }
    hs_progress prog;
    hs_progress_begin(&prog, hs_view_name((hs_view_kind)view));
    c->on_progress = on_progress;
    c->on_progress_ctx = &prog;
    int crc = hs_ctl_compute_sync(c, (hs_view_kind)view, err, sizeof err);
    if (crc == 0 && tide) {
        if (view == HS_VIEW_PPL) hs_ctl_pin_ppl(c);   /* as 'p' in the explorer */
        hs_ctl_set_knobs(c, &wanted);
        crc = hs_ctl_compute_sync(c, (hs_view_kind)view, err, sizeof err);
    }
    hs_progress_done(&prog);
    if (crc != 0) {
        fprintf(stderr, "hybridscope export: %s\n", err);
        rc = 1;
        goto done;
    }
    hs_view_input in;
    hs_ctl_view_input(c, &in);
    if (hs_export_view(out, (int)width, (int)height, scale, c->s.dark, (hs_view_kind)view, &in,
                       err, sizeof err) != 0) {
        fprintf(stderr, "hybridscope export: %s\n", err);
        rc = 1;
    }
done:
    hs_ctl_free(c);
    free(c);
    return rc;
}

HS_COMMAND("export", "render one view to PNG/SVG/PDF (headless)", cmd_export, 90)
