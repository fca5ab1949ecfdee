/* libFuzzer entry point for the gui's script parser (hs_script_load). The parser reads a file,
 * so each input is written to one temporary file first. An accepted script must hold only
 * events the gui can replay without overflow or hang: known ops and keys, finite numbers within
 * the parser's limits, NUL-terminated paths, line numbers that increase. A rejected one must say
 * which file and line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/script.h"

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) snprintf(path, sizeof path, "/tmp/hs_fuzz_script.%d", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size && fwrite(data, 1, size, f) != size) { fclose(f); return 0; }
    fclose(f);
    hs_script s;
    char err[700];
    err[0] = 0;
    if (hs_script_load(&s, path, err, sizeof err) != 0) {
        if (!memchr(err, 0, sizeof err) || strncmp(err, path, strlen(path)) != 0) __builtin_trap();
        if (s.ev || s.n) __builtin_trap();
        return 0;
    }
    int last = 0;
    for (int i = 0; i < s.n; i++) {
        const hs_script_event *e = &s.ev[i];
        if ((int)e->op < HS_EV_KEY || e->op > HS_EV_QUIT || e->line < last || e->line < 1) __builtin_trap();
        last = e->line;
        const double v[5] = { e->x0, e->y0, e->x1, e->y1, e->value };
        for (int k = 0; k < 5; k++)
            if (!isfinite(v[k]) || fabs(v[k]) > 1e5 * 10) __builtin_trap();
        if (e->op == HS_EV_KEY && e->key < 0) __builtin_trap();
        if (e->op == HS_EV_WHEEL && fabs(e->x1) > 100) __builtin_trap();
        if (e->op == HS_EV_RESIZE && (e->x0 < 64 || e->y0 < 64 || e->x0 > 16384 || e->y0 > 16384)) __builtin_trap();
        if (e->op == HS_EV_WAIT && !(e->value > 0 && e->value <= 86400)) __builtin_trap();
        if (!memchr(e->path, 0, sizeof e->path)) __builtin_trap();
    }
    hs_script_free(&s);
    return 0;
}
