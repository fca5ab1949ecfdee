/* The key map shared by both front ends (views/chrome.c's hs_key_map lists it in the help
 * overlay): each key is one controller action. */
#include <stdio.h>
#include <string.h>

#include "../engine/analysis_api.h"
#include "controller_internal.h"

/* Esc: stops the job in flight; it stays stopped (not restarted automatically) until Enter. */
void hs_ctl_cancel(hs_controller *c) {
    hs_ctl_lock(c);
    if (c->busy) {
        hs_job_slot *j = &c->jobs[c->cur_job];
        j->failed = j->want;
        snprintf(j->error, sizeof j->error, "%s cancelled (Enter runs it again)", hs_ctl_job_name(c->cur_job));
        hs_ctl_set_message(c, "%s", j->error);
    }
    hs_ctl_unlock(c);
}

/* Enter: runs the current view's jobs that were cancelled or failed. */
void hs_ctl_run_view(hs_controller *c) {
    hs_ctl_lock(c);
    unsigned need = hs_ctl_view_jobs(c->s.view), again = 0;
    for (int k = 0; k < HS_JOB_KINDS; k++)
        if ((need & JOB_BIT(k)) && c->jobs[k].failed == c->jobs[k].want && c->jobs[k].have != c->jobs[k].want)
            again |= JOB_BIT(k);
    if (again) hs_ctl_bump(c, again);
    /* a job in flight shows itself (job line and progress bar); a message saying so would
     * outlive it, since messages stay until the next key */
    else if (need && !hs_ctl_pending(c)) hs_ctl_set_message(c, "up to date");
    hs_ctl_unlock(c);
}

/* The key map is views/chrome.c's hs_key_map (the help overlay lists it); this is its
 * implementation. */
int hs_ctl_key(hs_controller *c, int key) {
    hs_ctl_lock(c);
    hs_view_kind view = c->s.view;
    int help = c->help;
    int length = c->s.length, depth = c->s.depth_pct;
    int topk = c->probe ? c->probe->topk : (c->s.topk ? c->s.topk : hs_topk_default(c->s.length));
    int zoomed = c->s.zoom_t1 > 0;
    c->message[0] = 0;
    hs_ctl_unlock(c);
    if (help && key != 'q') {   /* any key closes the help overlay */
        hs_ctl_lock(c);
        c->help = 0;
        hs_ctl_unlock(c);
        return HS_ACT_REDRAW;
    }
    int head_view = view == HS_VIEW_HEAD;
    int needle_view = view == HS_VIEW_NEEDLE;
    double t0, t1, s0, s1;
    hs_ctl_zoom_window(c, &t0, &t1, &s0, &s1);
    switch (key) {
    case 'q': return HS_ACT_QUIT;
    case '?': case HS_KEY_F1:
        hs_ctl_lock(c); c->help = 1; hs_ctl_unlock(c);
        break;
    case 's': return HS_ACT_SAVE;
    case '1': case '2': case '3': case '4': case '5': case '6':
        hs_ctl_set_view(c, (hs_view_kind)(key - '1'));
        break;
    case HS_KEY_TAB: hs_ctl_set_view(c, (hs_view_kind)((view + 1) % HS_VIEW_COUNT)); break;
    case HS_KEY_BTAB: hs_ctl_set_view(c, (hs_view_kind)((view + HS_VIEW_COUNT - 1) % HS_VIEW_COUNT)); break;
    /* arrows: the needle cell, the head; in a zoomed head view they pan */
    case HS_KEY_LEFT:
        if (needle_view) hs_ctl_move_cell(c, -1, 0, 0);
        else if (head_view && zoomed) hs_ctl_pan(c, 0, -0.25 * (s1 - s0));
        else hs_ctl_move_head(c, 0, -1);
        break;
    case HS_KEY_RIGHT:
        if (needle_view) hs_ctl_move_cell(c, 1, 0, 0);
        else if (head_view && zoomed) hs_ctl_pan(c, 0, 0.25 * (s1 - s0));
        else hs_ctl_move_head(c, 0, 1);
        break;
    case HS_KEY_UP:
        if (needle_view) hs_ctl_move_cell(c, 0, -1, 0);
        else if (head_view && zoomed) hs_ctl_pan(c, -0.25 * (t1 - t0), 0);
        else hs_ctl_move_head(c, -1, 0);
        break;
    case HS_KEY_DOWN:
        if (needle_view) hs_ctl_move_cell(c, 0, 1, 0);
        else if (head_view && zoomed) hs_ctl_pan(c, 0.25 * (t1 - t0), 0);
        else hs_ctl_move_head(c, 1, 0);
        break;
    case HS_KEY_PGUP: if (needle_view) hs_ctl_move_cell(c, 0, 0, -1); else hs_ctl_move_head(c, -1, 0); break;
    case HS_KEY_PGDN: if (needle_view) hs_ctl_move_cell(c, 0, 0, 1); else hs_ctl_move_head(c, 1, 0); break;
    case HS_KEY_ENTER: hs_ctl_run_view(c); break;
    case HS_KEY_ESC: hs_ctl_cancel(c); break;
    /* knobs */
    case 'w': hs_ctl_cycle_swla(c); break;
    case ']': hs_ctl_scale_swla_window(c, 1); break;
    case '[': hs_ctl_scale_swla_window(c, 0); break;
    case 'g': hs_ctl_toggle_log_scale(c); break;
    case '}': hs_ctl_scale_log_L0(c, 1); break;
    case '{': hs_ctl_scale_log_L0(c, 0); break;
    case 'A': hs_ctl_scale_swa_window(c, 1); break;
    case 'a': hs_ctl_scale_swa_window(c, 0); break;
    case 'R': hs_ctl_scale_rope_window(c, 1); break;
    case 'r': hs_ctl_scale_rope_window(c, 0); break;
    case 'm': hs_ctl_cycle_ratio(c); break;
    case 'x': hs_ctl_toggle_ablate_selected(c); break;
    case 'c': hs_ctl_cycle_device(c); break;
    /* the probe prompt */
    case '>': hs_ctl_set_length(c, length * 2); break;
    case '<': hs_ctl_set_length(c, length / 2); break;
    case 't': hs_ctl_cycle_task(c); break;
    case 'D': hs_ctl_set_depth(c, depth + 10); break;
    case 'd': hs_ctl_set_depth(c, depth - 10); break;
    case 'K': hs_ctl_set_topk(c, topk * 2); break;
    case 'k': hs_ctl_set_topk(c, topk / 2); break;
    /* head view zoom */
    case '+': case '=': hs_ctl_zoom_at(c, 2.0, (t0 + t1) / 2, (s0 + s1) / 2); break;
    case '-': hs_ctl_zoom_at(c, 0.5, (t0 + t1) / 2, (s0 + s1) / 2); break;
    case '0':
        hs_ctl_lock(c);
        if (c->s.zoom_t1 > 0) { hs_ctl_reset_zoom_locked(c); hs_ctl_bump(c, JOB_BIT(HS_JOB_HEADMAP)); }
        hs_ctl_unlock(c);
        break;
    /* presentation */
    case 'l': hs_ctl_toggle_log_color(c); break;
    case 'p': hs_ctl_pin_ppl(c); break;
    case 'P': hs_ctl_clear_pins(c); break;
    case 'T': hs_ctl_toggle_theme(c); break;
    default: return HS_ACT_NONE;
    }
    return HS_ACT_REDRAW;
}

