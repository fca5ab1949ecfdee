/* Helpers shared by the subcommands (see cli_util.h). */
#include "cli_util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"

static void vmsg(const char *cmd, const char *fmt, va_list ap) {
    fprintf(stderr, "hybridscope %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void hs_cli_die(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmsg(cmd, fmt, ap);
    va_end(ap);
    exit(HS_EXIT_BAD_INPUT);
}

void hs_cli_fail(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vmsg(cmd, fmt, ap);
    va_end(ap);
    exit(1);
}

int hs_cli_is_help(const char *arg) { return !strcmp(arg, "--help") || !strcmp(arg, "-h"); }

int hs_cli_parse_int(const char *s, long long *out) {
    if (!s || !*s) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno) return -1;
    long long mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1LL << 10;
    else if (*end == 'm' || *end == 'M') mul = 1LL << 20;
    else if (*end == 'g' || *end == 'G') mul = 1LL << 30;
    if (mul > 1) end++;
    if (*end) return -1;
    if (v > LLONG_MAX / mul || v < LLONG_MIN / mul) return -1;
    *out = v * mul;
    return 0;
}

const char *hs_cli_str_flag(const char *cmd, int argc, char **argv, int *i) {
    if (*i + 1 >= argc) hs_cli_die(cmd, "%s needs a value", argv[*i]);
    ++*i;
    return argv[*i];
}

long long hs_cli_int_flag(const char *cmd, int argc, char **argv, int *i, long long lo, long long hi) {
    const char *flag = argv[*i];
    const char *v = hs_cli_str_flag(cmd, argc, argv, i);
    long long x;
    if (hs_cli_parse_int(v, &x) < 0) hs_cli_die(cmd, "%s: '%s' is not an integer", flag, v);
    if (x < lo || x > hi) hs_cli_die(cmd, "%s: %lld is out of range [%lld, %lld]", flag, x, lo, hi);
    return x;
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int hs_cli_resolve_model(char *out, size_t n, const char *arg, char *err, size_t errlen) {
    if (is_dir(arg)) {
        snprintf(out, n, "%s", arg);
        return 0;
    }
    struct stat st;
    if (stat(arg, &st) == 0) {
        snprintf(err, errlen, "%s: not a checkpoint directory", arg);
        return -1;
    }
    /* Sample model names are plain words; a path that does not exist is just missing. */
    int plain = strchr(arg, '/') == NULL && strcmp(arg, ".") && strcmp(arg, "..");
    char roots[2][PATH_MAX];
    int nroots = 0;
    const char *env = getenv("HS_ROOT");
    if (env && *env) snprintf(roots[nroots++], PATH_MAX, "%s", env);
    /* The executable lives in REPO/build/hybridscope (any build dir) or REPO/hybridscope. */
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        char probe[PATH_MAX + 32];
        snprintf(probe, sizeof probe, "%s/sample-models", exe);
        if (is_dir(probe)) snprintf(roots[nroots++], PATH_MAX, "%s", exe);
        else if ((slash = strrchr(exe, '/')) != NULL) {
            *slash = 0;
            snprintf(roots[nroots++], PATH_MAX, "%s", exe);
        }
    }
    if (plain) {
        for (int r = 0; r < nroots; r++) {
            char p[PATH_MAX + 300];
            snprintf(p, sizeof p, "%s/sample-models/%s", roots[r], arg);
            if (is_dir(p)) {
                snprintf(out, n, "%s", p);
                return 0;
            }
        }
    }
    if (plain && nroots)
        snprintf(err, errlen, "%s: no such checkpoint directory, and no sample model of that name in %s/sample-models",
                 arg, roots[nroots - 1]);
    else
        snprintf(err, errlen, "%s: no such checkpoint directory", arg);
    return -1;
}

double hs_cli_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void hs_progress_begin(hs_progress *p, const char *label) {
    memset(p, 0, sizeof *p);
    snprintf(p->label, sizeof p->label, "%s", label);
    const char *force = getenv("HS_PROGRESS");
    p->enabled = force ? atoi(force) != 0 : isatty(STDERR_FILENO);
    p->start = hs_cli_now_s();
}

void hs_progress_update(hs_progress *p, double fraction) {
    if (!p->enabled) return;
    double t = hs_cli_now_s();
    if (t - p->start < 1.0 || t - p->last_draw < 0.1) return;
    if (fraction < 0) fraction = 0;
    if (fraction > 1) fraction = 1;
    enum { W = 30 };
    char bar[W + 1];
    int fill = (int)(fraction * W + 0.5);
    for (int i = 0; i < W; i++) bar[i] = i < fill ? '#' : '.';
    bar[W] = 0;
    double el = t - p->start;
    if (fraction > 0.01)
        fprintf(stderr, "\r%s [%s] %3.0f%% %.0fs left ", p->label, bar, fraction * 100,
                el * (1 - fraction) / fraction);
    else
        fprintf(stderr, "\r%s [%s] %3.0f%% ", p->label, bar, fraction * 100);
    fflush(stderr);
    p->drawn = 1;
    p->last_draw = t;
}

void hs_progress_done(hs_progress *p) {
    if (p->drawn) {
        fprintf(stderr, "\r%*s\r", (int)strlen(p->label) + 56, "");
        fflush(stderr);
    }
    p->drawn = 0;
}

void hs_cli_format_bytes(char *out, size_t n, double b) {
    const char *u[] = { "B", "KB", "MB", "GB", "TB" };
    int i = 0;
    while (b >= 1024 && i < 4) { b /= 1024; i++; }
    if (i == 0) snprintf(out, n, "%.0f B", b);
    else snprintf(out, n, "%.*f %s", b < 10 ? 2 : b < 100 ? 1 : 0, b, u[i]);
}

void hs_cli_format_count(char *out, size_t n, double c) {
    if (c >= 1e9) snprintf(out, n, "%.2fB", c / 1e9);
    else if (c >= 1e6) snprintf(out, n, "%.1fM", c / 1e6);
    else if (c >= 1e3) snprintf(out, n, "%.1fK", c / 1e3);
    else snprintf(out, n, "%.0f", c);
}

int hs_cli_knob_flag(const char *cmd, hs_knobs *k, int argc, char **argv, int *i) {
    char err[HS_ERR_LEN];
    int j = *i;
    int r = hs_knobs_parse_arg(k, argc, argv, &j, err, sizeof err);
    if (r < 0) hs_cli_die(cmd, "%s", err);
    if (r == 0) return 0;
    *i = j - 1; /* the knob parser stops after what it read */
    return 1;
}

/* Models loaded through hs_cli_load_model, kept reachable for LeakSanitizer at exit. */
static hs_model *cli_models[8];

hs_model *hs_cli_load_model(const char *cmd, const char *arg, const hs_knobs *k, char *dir,
                            size_t n) {
    char path[4096], err[HS_ERR_LEN];
    if (hs_cli_resolve_model(path, sizeof path, arg, err, sizeof err) < 0)
        hs_cli_die(cmd, "%s", err);
    hs_model *m = calloc(1, sizeof *m);
    if (!m) hs_cli_fail(cmd, "out of memory");
    for (size_t i = 0; i < sizeof cli_models / sizeof cli_models[0]; i++)
        if (!cli_models[i]) { cli_models[i] = m; break; }
    if (hs_model_load(m, path, err, sizeof err)) hs_cli_die(cmd, "%s", err);
    if (k && hs_knobs_validate(k, &m->cfg, err, sizeof err)) hs_cli_die(cmd, "%s", err);
    if (dir) snprintf(dir, n, "%s", path);
    return m;
}

void hs_cli_free_model(hs_model *m) {
    if (!m) return;
    for (size_t i = 0; i < sizeof cli_models / sizeof cli_models[0]; i++)
        if (cli_models[i] == m) cli_models[i] = NULL;
    hs_model_free(m);
    free(m);
}
