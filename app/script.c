/* Scripted input events (script.h). */
#include "script.h"

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

static int push(hs_script *s, int *cap, const hs_script_event *e) {
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

int hs_script_load(hs_script *s, const char *path, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    snprintf(s->file, sizeof s->file, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "--script %s: cannot open", path); return -1; }
    char line[1024];
    int cap = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
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
                if (push(s, &cap, &e) != 0) ok = 0;
            }
            if (ok) continue;
        } else if (!strcmp(op, "click") || !strcmp(op, "move")) {
            e.op = op[0] == 'c' ? HS_EV_CLICK : HS_EV_MOVE;
            ok = n == 2 && sscanf(arg, "%lf %lf", &e.x0, &e.y0) == 2;
        } else if (!strcmp(op, "wheel")) {
            e.op = HS_EV_WHEEL;
            ok = n == 2 && sscanf(arg, "%lf %lf %lf", &e.x0, &e.y0, &e.x1) == 3;
        } else if (!strcmp(op, "drag")) {
            e.op = HS_EV_DRAG;
            ok = n == 2 && sscanf(arg, "%lf %lf %lf %lf", &e.x0, &e.y0, &e.x1, &e.y1) == 4;
        } else if (!strcmp(op, "wait")) {
            e.op = HS_EV_WAIT;
            e.value = 120;
            if (n == 2) ok = sscanf(arg, "%lf", &e.value) == 1 && e.value > 0;
        } else if (!strcmp(op, "sleep")) {
            e.op = HS_EV_SLEEP;
            ok = n == 2 && sscanf(arg, "%lf", &e.value) == 1 && e.value >= 0;
        } else if (!strcmp(op, "screenshot")) {
            e.op = HS_EV_SCREENSHOT;
            ok = n == 2;
            if (ok) snprintf(e.path, sizeof e.path, "%.500s", arg);
        } else if (!strcmp(op, "resize")) {
            e.op = HS_EV_RESIZE;
            ok = n == 2 && sscanf(arg, "%lf %lf", &e.x0, &e.y0) == 2 && e.x0 >= 64 && e.y0 >= 64;
        } else if (!strcmp(op, "quit")) {
            e.op = HS_EV_QUIT;
        } else {
            snprintf(err, errlen, "%s:%d: unknown event '%s' (key keys click move wheel drag "
                     "wait sleep screenshot resize quit)", path, lineno, op);
            fclose(f);
            hs_script_free(s);
            return -1;
        }
        if (!ok) {
            snprintf(err, errlen, "%s:%d: bad arguments for '%s'", path, lineno, op);
            fclose(f);
            hs_script_free(s);
            return -1;
        }
        if (push(s, &cap, &e) != 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            fclose(f);
            hs_script_free(s);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

void hs_script_free(hs_script *s) {
    free(s->ev);
    s->ev = NULL;
    s->n = s->pos = 0;
}
