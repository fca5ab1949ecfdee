/* Scripted input events (script.h). */
#include "script.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"

static const struct { const char *name; int key; } key_names[] = {
    { "tab", HS_KEY_TAB }, { "btab", HS_KEY_BTAB }, { "left", HS_KEY_LEFT },
    { "right", HS_KEY_RIGHT }, { "up", HS_KEY_UP }, { "down", HS_KEY_DOWN },
    { "pgup", HS_KEY_PGUP }, { "pgdn", HS_KEY_PGDN }, { "home", HS_KEY_HOME },
    { "enter", HS_KEY_ENTER }, { "esc", HS_KEY_ESC }, { "f1", HS_KEY_F1 }, { "space", ' ' },
};

int hs_script_key(const char *name) {
    for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++)
        if (!strcmp(name, key_names[i].name)) return key_names[i].key;
    if (strlen(name) == 1 && name[0] > 32 && name[0] < 127) return name[0];
    return -1;
}

#define SCRIPT_EVENTS_MAX 100000   /* ~58 MB of events (each holds a path): past it, a mistake */

static int push(hs_script *s, int *cap, const hs_script_event *e) {
    if (s->n >= SCRIPT_EVENTS_MAX) return -1;
    if (s->n == *cap) {
        int nc = *cap ? *cap * 2 : 32;
        hs_script_event *ne = realloc(s->ev, sizeof *ne * (size_t)nc);
        if (!ne) return -1;
        s->ev = ne;
        *cap = nc;
    }
    s->ev[s->n++] = *e;
    return 0;
}

/* Exactly n finite numbers in arg, each within [-lim, lim], and nothing else (a script's
 * numbers become window sizes, loop counts and deadlines: "inf", "nan" or 1e300 would hang or
 * overflow the gui, and trailing words are a typo worth reporting). */
static int parse_nums(const char *arg, double *out, int n, double lim) {
    const char *p = arg;
    for (int i = 0; i < n; i++) {
        char *end;
        out[i] = strtod(p, &end);
        if (end == p || !isfinite(out[i]) || fabs(out[i]) > lim) return 0;
        p = end;
    }
    while (*p == ' ' || *p == '\t') p++;
    return *p == 0;
}

#define SCRIPT_COORD_MAX 1e5      /* window coordinates, logical pixels */
#define SCRIPT_NOTCHES_MAX 100    /* wheel notches (each zooms 1.5x) */
#define SCRIPT_SLEEP_MAX 600000   /* ms */
#define SCRIPT_WAIT_MAX 86400     /* s */
#define SCRIPT_SIZE_MAX 16384     /* window side, logical pixels */

int hs_script_load(hs_script *s, const char *path, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    snprintf(s->file, sizeof s->file, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "--script %s: cannot open", path); return -1; }
    char line[1024];
    int cap = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%d: line longer than %zu characters", path, lineno, sizeof line - 2);
            goto fail;
        }
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        size_t l = strlen(p);
        while (l && (p[l - 1] == '\n' || p[l - 1] == '\r' || p[l - 1] == ' ')) p[--l] = 0;
        if (!*p || *p == '#') continue;
        char op[32] = "", arg[600] = "";
        int n = sscanf(p, "%31s %599[^\n]", op, arg);
        hs_script_event e;
        memset(&e, 0, sizeof e);
        e.line = lineno;
        int ok = 1;
        if (!strcmp(op, "key")) {
            e.op = HS_EV_KEY;
            e.key = n == 2 ? hs_script_key(arg) : -1;
            ok = e.key >= 0;
        } else if (!strcmp(op, "keys")) {
            ok = n == 2;
            for (char *k = arg; ok && *k; k++) {
                e.op = HS_EV_KEY;
                e.key = (unsigned char)*k;
                if (push(s, &cap, &e) != 0) goto full;
            }
            if (ok) continue;
        } else if (!strcmp(op, "click") || !strcmp(op, "move")) {
            e.op = op[0] == 'c' ? HS_EV_CLICK : HS_EV_MOVE;
            double v[2] = { 0, 0 };
            ok = n == 2 && parse_nums(arg, v, 2, SCRIPT_COORD_MAX);
            e.x0 = v[0], e.y0 = v[1];
        } else if (!strcmp(op, "wheel")) {
            e.op = HS_EV_WHEEL;
            double v[3] = { 0, 0, 0 };
            ok = n == 2 && parse_nums(arg, v, 3, SCRIPT_COORD_MAX) && fabs(v[2]) <= SCRIPT_NOTCHES_MAX;
            e.x0 = v[0], e.y0 = v[1], e.x1 = v[2];
        } else if (!strcmp(op, "drag")) {
            e.op = HS_EV_DRAG;
            double v[4] = { 0, 0, 0, 0 };
            ok = n == 2 && parse_nums(arg, v, 4, SCRIPT_COORD_MAX);
            e.x0 = v[0], e.y0 = v[1], e.x1 = v[2], e.y1 = v[3];
        } else if (!strcmp(op, "wait")) {
            e.op = HS_EV_WAIT;
            e.value = 120;
            if (n == 2) ok = parse_nums(arg, &e.value, 1, SCRIPT_WAIT_MAX) && e.value > 0;
        } else if (!strcmp(op, "sleep")) {
            e.op = HS_EV_SLEEP;
            ok = n == 2 && parse_nums(arg, &e.value, 1, SCRIPT_SLEEP_MAX) && e.value >= 0;
        } else if (!strcmp(op, "screenshot")) {
            e.op = HS_EV_SCREENSHOT;
            ok = n == 2;
            if (ok) snprintf(e.path, sizeof e.path, "%.500s", arg);
        } else if (!strcmp(op, "resize")) {
            e.op = HS_EV_RESIZE;
            double v[2] = { 0, 0 };
            ok = n == 2 && parse_nums(arg, v, 2, SCRIPT_SIZE_MAX) && v[0] >= 64 && v[1] >= 64;
            e.x0 = v[0], e.y0 = v[1];
        } else if (!strcmp(op, "quit")) {
            e.op = HS_EV_QUIT;
        } else {
            snprintf(err, errlen, "%s:%d: unknown event '%s' (key keys click move wheel drag "
                     "wait sleep screenshot resize quit)", path, lineno, op);
            goto fail;
        }
        if (!ok) {
            snprintf(err, errlen, "%s:%d: bad arguments for '%s'", path, lineno, op);
            goto fail;
        }
        if (push(s, &cap, &e) != 0) goto full;
    }
    fclose(f);
    return 0;
full:
    snprintf(err, errlen, "%s:%d: out of memory or more than %d events", path, lineno, SCRIPT_EVENTS_MAX);
fail:
    fclose(f);
    hs_script_free(s);
    return -1;
}

void hs_script_free(hs_script *s) {
    free(s->ev);
    s->ev = NULL;
    s->n = s->pos = 0;
}
