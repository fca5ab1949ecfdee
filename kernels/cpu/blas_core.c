/* OpenBLAS set-up at load time: single-threaded (the kernels thread with OpenMP; see
 * matmul.c), and a core selection fix-up.
 *
 * Debian's OpenBLAS (DYNAMIC_ARCH, 0.3.21) picks its kernels from the CPU model number. On
 * virtualised Xeons that report an unknown model it falls back to the Prescott (SSE3)
 * kernels, which run sgemm about 5x slower than its AVX-512 kernels on the same CPU. When the
 * user has not chosen a core (OPENBLAS_CORETYPE) and the library settled on a pre-AVX2 core
 * although the CPU has AVX2/FMA or AVX-512, re-run the library's own dispatch with the
 * matching core name, exactly as if OPENBLAS_CORETYPE had been set at start-up. The entry
 * points are weak, so a BLAS build without dynamic dispatch simply skips this. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char *gotoblas_corename(void) __attribute__((weak));
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));

static int is_pre_avx2_core(const char *name) {
    static const char *const old[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem",
                                      "Atom", "Sandybridge", "Katmai", "Northwood", "Banias"};
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++)
        if (strcasecmp(name, old[i]) == 0) return 1;
    return 0;
}

static void pick_core(void) {
    if (!gotoblas_corename || !gotoblas_dynamic_init || !gotoblas_dynamic_quit) return;
    if (getenv("OPENBLAS_CORETYPE")) return;
    const char *core = gotoblas_corename();
    if (!core || !is_pre_avx2_core(core)) return;
    __builtin_cpu_init();
    const char *want = NULL;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        want = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        want = "Haswell";
    if (!want) return;
    if (setenv("OPENBLAS_CORETYPE", want, 1) != 0) return;
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE"); /* leave the environment of child processes as it was */
}

__attribute__((constructor)) static void hs_blas_setup(void) {
    pick_core();
    openblas_set_num_threads(1);
}
