/* The controller's worker: a thread that runs the engine jobs the current view needs, newest
 * settings first, and installs each result only if no newer settings arrived meanwhile. */
#ifndef HS_WORKER_H
#define HS_WORKER_H

#include <stddef.h>

#include "controller.h"

int hs_worker_start(hs_controller *c, char *err, size_t errlen);
/* Cancels the job in flight and joins the thread. */
void hs_worker_stop(hs_controller *c);
/* Runs job k for the current settings in the calling thread and installs the result
 * (no worker thread running). Returns 0, or -1 with err. */
int hs_worker_run_sync(hs_controller *c, hs_job_kind k, char *err, size_t errlen);
/* Loads the model at dir (caller: no job in flight) and installs it. */
int hs_worker_load_model(hs_controller *c, const char *dir, char *err, size_t errlen);

/* Shortest prompt length (tokens) that task t's samples fit in; -1 with err when the
 * needle assets cannot be found. */
int hs_worker_min_length(hs_controller *c, hs_needle_task t, char *err, size_t errlen);

#endif
