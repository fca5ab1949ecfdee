/* hybridscope: entry point and subcommand dispatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

#define MAX_COMMANDS 64
typedef struct { const char *name, *summary; hs_command_fn fn; int order; } command;
static command cmds[MAX_COMMANDS];
static int n_cmds;

void hs_command_register(const char *name, const char *summary, hs_command_fn fn, int order) {
    if (n_cmds >= MAX_COMMANDS) { fprintf(stderr, "hybridscope: too many commands\n"); exit(1); }
    cmds[n_cmds].name = name; cmds[n_cmds].summary = summary;
    cmds[n_cmds].fn = fn; cmds[n_cmds].order = order;
    n_cmds++;
}

static int by_order(const void *a, const void *b) {
    return ((const command *)a)->order - ((const command *)b)->order;
}

static void usage(FILE *f) {
    fprintf(f, "usage: hybridscope [COMMAND] [ARGS...]\n\n"
               "Look inside long-context hybrid language models (NoPE + RoPE/SWA/GLA/GDN).\n"
               "Without a command, opens the explorer (gui when a display is available, else tui)\n"
               "on the bundled sample model.\n\ncommands:\n");
    for (int i = 0; i < n_cmds; i++) fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "\n'hybridscope COMMAND --help' describes each command.\n");
}

static hs_command_fn find(const char *name) {
    for (int i = 0; i < n_cmds; i++) if (!strcmp(cmds[i].name, name)) return cmds[i].fn;
    return NULL;
}

int main(int argc, char **argv) {
    /* libgomp reads its wait policy once, at load: idle OpenMP threads would otherwise spin
     * against OpenBLAS and the UI thread on small machines (2x wall time measured at 16K
     * tokens on 2 cores). Re-exec once with the variable set unless the user chose one. */
    if (!getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "passive", 1);
        execv("/proc/self/exe", argv);
        /* exec failed: go on with the default policy */
    }
    qsort(cmds, (size_t)n_cmds, sizeof cmds[0], by_order);
    if (argc < 2) {
        /* The explorer: gui when a display is available, else tui. */
        const char *pick = (getenv("DISPLAY") || getenv("WAYLAND_DISPLAY")) && find("gui") ? "gui" : "tui";
        hs_command_fn fn = find(pick);
        if (!fn) { usage(stderr); return HS_EXIT_BAD_INPUT; }
        char *args[] = { (char *)pick, NULL };
        return fn(1, args);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) { printf("hybridscope 0.1\n"); return 0; }
    hs_command_fn fn = find(argv[1]);
    if (!fn) {
        fprintf(stderr, "hybridscope: unknown command '%s' (see 'hybridscope --help')\n", argv[1]);
        return HS_EXIT_BAD_INPUT;
    }
    return fn(argc - 1, argv + 1);
}
