/* "Device" memory and inputs for the kernel emulators (hs_emu.cpp, map_emu.cpp): every buffer
 * ends exactly at an inaccessible page, so a read past its end faults, and is preceded by 0xff
 * bytes (NaN as float or double, -1 as int); a small LCG for reproducible inputs. */
#ifndef HS_EMU_MEM_H
#define HS_EMU_MEM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

struct EmuMap { void *base; size_t len; };
static std::vector<EmuMap> emu_maps;

/* n values of V filled with `fill`, ending at a PROT_NONE page. */
template <class V> static V *dev(size_t n, V fill) {
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE), bytes = n * sizeof(V);
    const size_t len = (bytes + pg - 1) / pg * pg + pg;
    char *base = (char *)mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED || mprotect(base + len - pg, pg, PROT_NONE)) {
        perror("emulator: mmap");
        exit(1);
    }
    emu_maps.push_back(EmuMap{base, len});
    memset(base, 0xff, len - pg - bytes);
    V *p = (V *)(base + len - pg - bytes);
    for (size_t i = 0; i < n; i++) p[i] = fill;
    return p;
}

static void dev_free_all() {
    for (const EmuMap &m : emu_maps) munmap(m.base, m.len);
    emu_maps.clear();
}

static unsigned seed = 7u;
static float frand() { seed = seed * 1664525u + 1013904223u; return (float)((seed >> 8) & 0xffffff) / 16777216.0f; }
static float srand1() { return 2 * frand() - 1; }

#endif
