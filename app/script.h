/* Scripted input for the gui (tests, demos): one event per line.
 *
 *   # comment
 *   key K              one key: a character, or tab btab left right up down pgup pgdn home
 *                      enter esc f1 space
 *   keys STRING        each character of STRING as a key
 *   click X Y          left click at window coordinates (logical pixels)
 *   move X Y           pointer motion (hover)
 *   wheel X Y N        N wheel notches at (X, Y); positive zooms in
 *   drag X0 Y0 X1 Y1   left-button drag
 *   wait [SECONDS]     until every job the current view needs has finished (default 120 s;
 *                      the script fails when it times out)
 *   sleep MS
 *   screenshot PATH    the window's current frame as PNG
 *   resize W H         window size in logical pixels
 *   quit
 */
#ifndef HS_SCRIPT_H
#define HS_SCRIPT_H

#include <stddef.h>

typedef enum { HS_EV_KEY = 0, HS_EV_CLICK, HS_EV_MOVE, HS_EV_WHEEL, HS_EV_DRAG, HS_EV_WAIT,
               HS_EV_SLEEP, HS_EV_SCREENSHOT, HS_EV_RESIZE, HS_EV_QUIT } hs_script_op;

typedef struct {
    hs_script_op op;
    int key;                   /* HS_EV_KEY: controller key code */
    double x0, y0, x1, y1;     /* positions; wheel: x1 = notches; resize: x0 x y0 */
    double value;              /* wait: seconds; sleep: milliseconds */
    char path[512];            /* screenshot */
    int line;                  /* source line, for messages */
} hs_script_event;

typedef struct {
    hs_script_event *ev;
    int n, pos;
    char file[512];
} hs_script;

/* Parses FILE. Returns 0, or -1 with "FILE:LINE: problem" in err. */
int hs_script_load(hs_script *s, const char *path, char *err, size_t errlen);
void hs_script_free(hs_script *s);
/* Controller key code for a key name ("tab", "q", ...); -1 if unknown. */
int hs_script_key(const char *name);

#endif
