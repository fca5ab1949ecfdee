/* Small helpers every subcommand uses: error exits, number parsing, model paths, progress. */
#ifndef HS_CLI_UTIL_H
#define HS_CLI_UTIL_H

#include <stddef.h>

#include "model.h"
#include "knobs.h"

/* Prints "hybridscope CMD: message" on stderr and exits with 2 (bad input). */
__attribute__((noreturn, format(printf, 2, 3)))
void hs_cli_die(const char *cmd, const char *fmt, ...);
/* Same, exit code 1 (runtime failure: out of memory, write error...). */
__attribute__((noreturn, format(printf, 2, 3)))
void hs_cli_fail(const char *cmd, const char *fmt, ...);

/* "--help" or "-h". */
int hs_cli_is_help(const char *arg);

/* Integer with an optional binary suffix: 1k = 1024, 64K = 65536, 2M = 2097152. Returns 0,
 * or -1 when s is not such a number. */
int hs_cli_parse_int(const char *s, long long *out);
/* The value of flag argv[*i] (advances *i), parsed as an integer in [lo, hi]; dies naming the
 * flag when absent or bad. */
long long hs_cli_int_flag(const char *cmd, int argc, char **argv, int *i, long long lo, long long hi);
/* The string value of flag argv[*i] (advances *i); dies when absent. */
const char *hs_cli_str_flag(const char *cmd, int argc, char **argv, int *i);

/* Resolves a MODEL argument: a checkpoint directory as given, or the name of a sample model,
 * looked up as sample-models/NAME under $HS_ROOT and under the repository that holds the
 * executable. Returns 0 with the directory in out, or -1 with a message in err. */
int hs_cli_resolve_model(char *out, size_t n, const char *arg, char *err, size_t errlen);

/* A knob flag at argv[*i] (hs_knobs_parse_arg): returns 1 and leaves *i on the last argument
 * it read, like the other flag helpers, so loops stepping with i++ go on from there; 0 when
 * argv[*i] is not a knob; a bad value exits 2 naming the flag. */
int hs_cli_knob_flag(const char *cmd, hs_knobs *k, int argc, char **argv, int *i);

/* Resolves ARG (hs_cli_resolve_model), loads the checkpoint and validates the knobs (k may be
 * NULL) against it; any failure exits 2 with the message. The model stays reachable until
 * exit, so an exit on bad input after loading is not reported as a leak; free it with
 * hs_cli_free_model. dir (may be NULL) receives the resolved directory. */
hs_model *hs_cli_load_model(const char *cmd, const char *arg, const hs_knobs *k, char *dir,
                            size_t n);
void hs_cli_free_model(hs_model *m);

/* Seconds on the monotonic clock (for the "seconds" fields of --json outputs). */
double hs_cli_now_s(void);

/* A progress bar on stderr, drawn only when stderr is a terminal (or HS_PROGRESS=1) and the
 * work has run for more than a second; hs_progress_done erases it. */
typedef struct {
    char label[48];
    double start;
    int drawn;
    int enabled;
    double last_draw;
} hs_progress;
void hs_progress_begin(hs_progress *p, const char *label);
void hs_progress_update(hs_progress *p, double fraction);
void hs_progress_done(hs_progress *p);

/* Human-readable byte counts ("1.5 GB", "512 KB") and counts ("376.3M"). */
void hs_cli_format_bytes(char *out, size_t n, double bytes);
void hs_cli_format_count(char *out, size_t n, double count);

#endif
