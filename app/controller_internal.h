/* Internals shared by the controller's files (controller.c: state and jobs; family.c:
 * families.json and the default model; actions.c: what the user can change; keys.c: the key
 * map). Not for the front ends: they use controller.h. */
#ifndef HS_CONTROLLER_INTERNAL_H
#define HS_CONTROLLER_INTERNAL_H

#include "controller.h"

#define JOB_BIT(k) (1u << (k))
#define ALL_JOBS (JOB_BIT(HS_JOB_PROBE) | JOB_BIT(HS_JOB_HEADMAP) | JOB_BIT(HS_JOB_NIAH) | \
                  JOB_BIT(HS_JOB_PPL))
#define PROMPT_JOBS (JOB_BIT(HS_JOB_PROBE) | JOB_BIT(HS_JOB_HEADMAP))

/* Index of (layer, mixer, head) in the head list; head clamped to the mixer's heads. */
int hs_ctl_head_index(const hs_config *cfg, int layer, int mixer, int head);
/* Smallest power of two >= n, at least HS_CTL_MIN_LENGTH. */
int hs_ctl_pow2_at_least(int n);
const char *hs_ctl_job_name(hs_job_kind k);
int hs_ctl_is_file(const char *path);
void hs_ctl_free_probe(hs_probe_result **p);
/* Fills c->siblings from the families.json next to the model's directory. */
void hs_ctl_load_family(hs_controller *c);
/* Caller holds the lock. */
void hs_ctl_reset_zoom_locked(hs_controller *c);
/* The head view's window in tokens (the whole prompt when not zoomed). */
void hs_ctl_zoom_window(hs_controller *c, double *t0, double *t1, double *s0, double *s1);
/* Moves the needle cell selection (lengths, depths, tasks). */
void hs_ctl_move_cell(hs_controller *c, int dl, int dd, int dt);

#endif
