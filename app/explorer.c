/* `hybridscope gui` and `hybridscope tui`: shared argument handling, then the front end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/knobs.h"
#include "commands.h"
#include "controller.h"
#include "explorer.h"

static void usage(FILE *f, int gui) {
    fprintf(f, "usage: hybridscope %s [MODEL] [options]\n\n", gui ? "gui" : "tui");
    if (gui)
        fprintf(f, "Opens the explorer in an SDL2 window: every head's attention map, one head large\n"
                   "(wheel zooms, drag pans), the tidal plot, the needle grid, perplexity and the\n"
                   "model layout. Keys as in the tui; ? lists them.\n\n");
    else
        fprintf(f, "Opens the explorer in the terminal (ncurses; works over SSH): every head's\n"
                   "attention map, one head large, the tidal plot, the needle grid, perplexity and\n"
                   "the model layout. ? lists the keys; q quits.\n\n");
    fprintf(f, "MODEL is a checkpoint directory or a sample model name; without it the default\n"
               "sample model (sample-models/families.json \"default\") opens.\n\noptions:\n");
    if (gui)
        fprintf(f, "  --width W --height H     window size in logical pixels (default 1280x800)\n"
                   "  --script FILE            run scripted input events, one a line, then quit:\n"
                   "                           key K | keys STRING | click X Y | move X Y | wheel X Y N |\n"
                   "                           drag X0 Y0 X1 Y1 | wait [SECONDS] | sleep MS |\n"
                   "                           screenshot PATH | resize W H | quit\n"
                   "                           (K: a character, tab, left, right, up, down, enter, esc, f1...)\n");
    else
        fprintf(f, "  --ascii                  ASCII characters only (auto when the locale is not UTF-8)\n");
    fputs(hs_settings_help, f);
    fputs(hs_knobs_help, f);
}

int hs_explorer_main(int argc, char **argv, int gui) {
    hs_settings s;
    memset(&s, 0, sizeof s);
    s.device = 0;
    const char *model_arg = NULL, *script = NULL;
    int ascii = 0, width = 1280, height = 800;
    char err[HS_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout, gui); return 0; }
        int r = hs_settings_parse_arg(&s, argc, argv, &i, err, sizeof err);
        if (r < 0) { fprintf(stderr, "hybridscope %s: %s\n", argv[0], err); return HS_EXIT_BAD_INPUT; }
        if (r > 0) continue;
        if (!gui && !strcmp(a, "--ascii")) { ascii = 1; continue; }
        if (gui && !strcmp(a, "--script") && i + 1 < argc) { script = argv[++i]; continue; }
        if (gui && (!strcmp(a, "--width") || !strcmp(a, "--height")) && i + 1 < argc) {
            long v = hs_parse_count(argv[i + 1]);
            if (v < 320 || v > 16384) {
                fprintf(stderr, "hybridscope gui: %s: needs 320..16384 pixels\n", a);
                return HS_EXIT_BAD_INPUT;
            }
            if (a[2] == 'w') width = (int)v; else height = (int)v;
            i++;
            continue;
        }
        if (a[0] == '-' && a[1]) {
            fprintf(stderr, "hybridscope %s: unknown option '%s' (see --help)\n", argv[0], a);
            return HS_EXIT_BAD_INPUT;
        }
        if (model_arg) {
            fprintf(stderr, "hybridscope %s: one MODEL only ('%s' and '%s')\n", argv[0], model_arg, a);
            return HS_EXIT_BAD_INPUT;
        }
        model_arg = a;
    }
    if (hs_ctl_resolve_model(s.model, sizeof s.model, model_arg, err, sizeof err) != 0) {
        fprintf(stderr, "hybridscope %s: %s\n", argv[0], err);
        return HS_EXIT_BAD_INPUT;
    }
    hs_controller *c = calloc(1, sizeof *c);
    if (!c) { fprintf(stderr, "hybridscope: out of memory\n"); return 1; }
    if (hs_ctl_init(c, &s, err, sizeof err) != 0) {
        fprintf(stderr, "hybridscope %s: %s\n", argv[0], err);
        hs_ctl_free(c);
        free(c);
        return HS_EXIT_BAD_INPUT;
    }
    if (hs_ctl_start(c, err, sizeof err) != 0) {
        fprintf(stderr, "hybridscope %s: %s\n", argv[0], err);
        hs_ctl_free(c);
        free(c);
        return 1;
    }
    int rc;
    if (gui) {
        hs_gui_opts o = { width, height, script };
        rc = hs_gui_run(c, &o);
        /* No window (no display, or a build without SDL2): the terminal explorer instead,
         * unless a script expected the window or there is no terminal either. */
        if (rc == HS_GUI_NO_DISPLAY && !script && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
            fprintf(stderr, "hybridscope: opening the terminal explorer instead\n");
            rc = hs_tui_run(c, ascii);
        } else if (rc == HS_GUI_NO_DISPLAY) {
            rc = 1;
        }
    } else {
        rc = hs_tui_run(c, ascii);
    }
    hs_ctl_free(c);
    free(c);
    return rc;
}
