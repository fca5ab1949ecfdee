/* Device selection and the CUDA plugin loader. The plugin is dlopen'd so the program runs
 * (CPU only) where no CUDA runtime or device exists. */
#include "cuda_backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hs_device_parse(const char *s) {
    if (!strcmp(s, "auto")) return HS_DEVICE_AUTO;
    if (!strcmp(s, "cpu")) return HS_DEVICE_CPU;
    if (!strcmp(s, "cuda") || !strcmp(s, "gpu")) return HS_DEVICE_CUDA;
    return -1;
}

const char *hs_device_name(int d) {
    return d == HS_DEVICE_CUDA ? "cuda" : d == HS_DEVICE_CPU ? "cpu" : "auto";
}

static const hs_cuda_api *loaded;
static char load_error[256];
static int load_tried;

/* Asks the driver directly (libcuda, no runtime) whether a device exists, so machines without
 * a GPU never pay for loading cudart and cuBLAS (~165 MB RSS) just to learn there is none. */
static int driver_has_device(char *why, size_t n) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { snprintf(why, n, "no NVIDIA driver (libcuda.so.1 not found)"); return 0; }
    int (*cu_init)(unsigned);
    int (*cu_count)(int *);
    *(void **)&cu_init = dlsym(h, "cuInit");
    *(void **)&cu_count = dlsym(h, "cuDeviceGetCount");
    int count = 0;
    if (!cu_init || !cu_count || cu_init(0) != 0 || cu_count(&count) != 0 || count <= 0) {
        snprintf(why, n, "the NVIDIA driver reports no device");
        dlclose(h);
        return 0;
    }
    return 1; /* keep libcuda loaded: the plugin needs it next */
}

/* The plugin lives next to the executable (build/libhs_cuda.so); HS_CUDA_LIB overrides. */
static void *open_plugin(char *why, size_t n) {
    const char *env = getenv("HS_CUDA_LIB");
    if (env && env[0]) {
        void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!h) snprintf(why, n, "%s", dlerror());
        return h;
    }
    char exe[1024];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 32);
    if (len <= 0) { snprintf(why, n, "cannot locate the executable"); return NULL; }
    exe[len] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) slash[1] = 0;
    strcat(exe, "libhs_cuda.so");
    if (access(exe, F_OK) != 0) {
        snprintf(why, n, "this build has no CUDA backend (built without nvcc)");
        return NULL;
    }
    void *h = dlopen(exe, RTLD_NOW | RTLD_LOCAL);
    if (!h) snprintf(why, n, "%s", dlerror());
    return h;
}

const hs_cuda_api *hs_cuda_load(char *err, size_t errlen) {
    if (!load_tried) {
        load_tried = 1;
        char why[200] = "";
        void *h = driver_has_device(why, sizeof why) ? open_plugin(why, sizeof why) : NULL;
        if (h) {
            const hs_cuda_api *(*get)(void);
            *(void **)&get = dlsym(h, "hs_cuda_get_api");
            const hs_cuda_api *api = get ? get() : NULL;
            if (!api || api->abi_version != HS_CUDA_ABI) {
                snprintf(load_error, sizeof load_error, "no CUDA device: plugin ABI mismatch");
            } else {
                char derr[200] = "";
                int n = api->device_count(derr, sizeof derr);
                if (n > 0) loaded = api;
                else snprintf(load_error, sizeof load_error, "no CUDA device%s%s",
                              derr[0] ? ": " : "", derr);
            }
        } else {
            snprintf(load_error, sizeof load_error, "no CUDA device: %s", why);
        }
    }
    if (!loaded && err) snprintf(err, errlen, "%s", load_error);
    return loaded;
}

int hs_device_resolve(int requested, char *err, size_t errlen) {
    if (requested == HS_DEVICE_CPU) return HS_DEVICE_CPU;
    char why[256];
    const hs_cuda_api *api = hs_cuda_load(why, sizeof why);
    if (api) return HS_DEVICE_CUDA;
    if (requested == HS_DEVICE_CUDA) {
        snprintf(err, errlen, "--device cuda: %s", why);
        return -1;
    }
    return HS_DEVICE_CPU;
}
