/* The forward's analysis hooks on the GPU (forward_analysis.cu), run right after each mixer
 * while its q, k, v and gates are still in the workspace: the capture hook's host copies, the
 * head statistics and the pooled maps. forward.cu opens them before the layers and closes
 * them (copying the results out) after. */
#ifndef HS_CUDA_FORWARD_ANALYSIS_CUH
#define HS_CUDA_FORWARD_ANALYSIS_CUH

#include "cuda_model.cuh"
#include "kernels/cuda/kernels.cuh"

/* Host copies of a mixer's activations for the capture hook (only when one is set). */
typedef struct {
    float *q, *k, *v, *gk, *beta, *la, *out, *row_scale;
    size_t floats;
} capture_bufs;

/* Device side of an hs_head_stats_req: one cudaMalloc per analysing forward (rows, the three
 * outputs for every head and row, the gla chunk decays), filled mixer by mixer. */
typedef struct {
    hs_head_stats_req *req;
    int *rows;
    cu_head_stats_out out;
    double *dchunk;
    void *block;
    int head_base;             /* heads of the mixers already analysed */
    /* pooled maps (hs_forward_opts.maps): their cells, one row scratch shared by all (the
     * maps run one after another on the stream) and, with a gla map, its chunk decays */
    hs_map_req *maps;
    int n_maps;
    float *cells;              /* every map's cells, back to back */
    void *map_scratch;         /* the block: cells, then map_rows, then map_dchunk */
    void *map_rows;
    double *map_dchunk;
} stats_dev;

void cu_capture_free(capture_bufs *c);
/* Copies what the CPU mixer hands its hook (forward.h: hs_mixer_acts) and calls the hook. */
int cu_run_capture(hs_cuda_model *cm, capture_bufs *cb, int l, int j, int T, const cu_knobs *kn,
                   const hs_knobs_resolved *kr, const float *row_scale_host, int window,
                   const hs_forward_opts *opts, char *err, size_t errlen);
/* Checks the map requests and allocates their device block. */
int cu_maps_open(stats_dev *sd, hs_cuda_model *cm, hs_map_req *maps, int n_maps, int T, char *err, size_t errlen);
/* The pooled maps of heads of mixer (l, j), right after it ran. */
int cu_run_maps(hs_cuda_model *cm, stats_dev *sd, int l, int j, int T, const cu_knobs *kn, int window,
                char *err, size_t errlen);
/* Copies the maps' cells out (after the forward) and frees their device block. */
int cu_maps_close(stats_dev *sd, int ok, char *err, size_t errlen);
int cu_stats_open(stats_dev *sd, hs_cuda_model *cm, hs_head_stats_req *req, int T, char *err, size_t errlen);
/* Copies the results out (after the forward) and frees the device block. */
int cu_stats_close(stats_dev *sd, hs_cuda_model *cm, int ok, char *err, size_t errlen);
/* The statistics of every head of mixer (l, j), right after it ran. */
int cu_run_stats(hs_cuda_model *cm, stats_dev *sd, int l, int j, int T, const cu_knobs *kn, int window,
                 char *err, size_t errlen);

#endif
