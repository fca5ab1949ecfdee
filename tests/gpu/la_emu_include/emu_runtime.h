/* The CPU emulator's runtime (tests/gpu/la_emu.cpp, hs_emu.cpp): every thread of a block is a
 * coroutine (ucontext) and the block's barriers, shuffles, warp-collective operations and
 * cp.async groups (the stand-ins in cuda_runtime.h, cuda_pipeline.h, mma.h) go through its
 * scheduler. The warps of a block run in a random strict priority (the first runnable warp
 * always goes on, so each warp gets as far ahead as the barriers allow) and the lanes of a warp
 * in a random rotation; blocks run one after another. Dynamic shared memory (LA_SMEM) starts as
 * NaN; static __shared__ variables are function-local statics (blocks do not overlap). It
 * defines what it declares: include it in one translation unit, after cuda_runtime.h. */
#ifndef LA_EMU_RUNTIME_H
#define LA_EMU_RUNTIME_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <vector>

#include "cuda_runtime.h"

namespace emu {

struct Copy { void *dst; const void *src; size_t n, zfill; };

struct Thread {
    ucontext_t ctx;
    emu_dim3 idx;
    int wait;                                  /* 0 runnable, 1 block barrier, 2 warp barrier */
    bool done;
    std::vector<Copy> open;
    std::vector<std::vector<Copy>> groups;     /* committed, oldest first */
    unsigned xseq;                             /* shuffles so far (picks the slot buffer) */
    char *stack;
};

Thread *cur;
emu_dim3 block_idx, block_dim, grid_dim;
static ucontext_t sched;
static std::vector<Thread> threads;
static char *smem_buf;
static int copy_at_issue;
static uint64_t xs[2][32 * 32];               /* shuffle slots, two buffers */
static unsigned rng = 12345u;
static void (*kernel_fn)();

const emu_dim3 &thread_idx() { return cur->idx; }
void *smem() { return smem_buf; }

static void yield(int why) {
    cur->wait = why;
    swapcontext(&cur->ctx, &sched);
}

void syncthreads() { yield(1); }
void warp_collective() { yield(2); }
void syncwarp() { yield(2); }

/* Lane exchange for the shuffles: each lane writes its value, waits at the warp barrier, reads
 * its source lane's. The slots alternate between two buffers (per-lane call count), so a lane
 * that goes on to the next shuffle cannot overwrite a value another lane has yet to read: it
 * would have to pass the next barrier first. */
template <class V> static V exchange(V v, int src) {
    const int lane = cur->idx.x % 32, w = cur->idx.x / 32, buf = cur->xseq++ & 1;
    memcpy(&xs[buf][w * 32 + lane], &v, sizeof v);
    yield(2);
    V r;
    memcpy(&r, &xs[buf][w * 32 + src], sizeof r);
    return r;
}

float shfl_xor(float v, int mask) { return exchange(v, (int)(cur->idx.x % 32) ^ mask); }
double shfl_xor(double v, int mask) { return exchange(v, (int)(cur->idx.x % 32) ^ mask); }
int shfl_xor(int v, int mask) { return exchange(v, (int)(cur->idx.x % 32) ^ mask); }

double shfl_up(double v, int delta) {
    const int lane = cur->idx.x % 32;
    return exchange(v, lane >= delta ? lane - delta : lane);
}

void check_tile(const void *p, unsigned ldm, const char *what) {
    if ((uintptr_t)p % 32 || ldm % 4) {
        fprintf(stderr, "emu: %s: pointer %p (mod 32 = %u) or ldm %u misaligned (block %u,%u,%u thread %u)\n", what,
                p, (unsigned)((uintptr_t)p % 32), ldm, block_idx.x, block_idx.y, block_idx.z, cur->idx.x);
        exit(1);
    }
}

static void land(const Copy &c) {
    memset(c.dst, 0, c.n);
    if (c.n > c.zfill) memcpy(c.dst, c.src, c.n - c.zfill);
}

void memcpy_async(void *dst, const void *src, size_t n, size_t zfill) {
    if ((uintptr_t)dst % n || (uintptr_t)src % n) {
        fprintf(stderr, "emu: cp.async of %zu bytes misaligned\n", n);
        exit(1);
    }
    Copy c = {dst, src, n, zfill};
    if (copy_at_issue) land(c);
    else cur->open.push_back(c);
}

void commit() {
    cur->groups.push_back(cur->open);
    cur->open.clear();
}

void wait_prior(size_t n) {
    while (cur->groups.size() > n) {
        for (const Copy &c : cur->groups.front()) land(c);
        cur->groups.erase(cur->groups.begin());
    }
}

static void entry() {
    kernel_fn();
    cur->done = true;
    swapcontext(&cur->ctx, &sched);
}

/* Runs one block to completion: threads resume in a random order each round; a barrier opens
 * when every live thread of its scope waits at it. */
static void run_block(int nthreads) {
    const size_t stack = 256 * 1024;
    threads.assign(nthreads, Thread());
    for (int i = 0; i < nthreads; i++) {
        Thread &t = threads[i];
        t.idx = emu_dim3{(unsigned)i, 0, 0};
        t.wait = 0;
        t.done = false;
        t.xseq = 0;
        t.stack = (char *)malloc(stack);
        getcontext(&t.ctx);
        t.ctx.uc_stack.ss_sp = t.stack;
        t.ctx.uc_stack.ss_size = stack;
        t.ctx.uc_link = NULL;
        makecontext(&t.ctx, entry, 0);
    }
    auto warp_ready = [&](int w) {
        bool some = false;
        for (int l = w * 32; l < w * 32 + 32 && l < nthreads; l++) {
            if (threads[l].done) continue;
            some = true;
            if (threads[l].wait != 2) return false;
        }
        return some;
    };
    auto open_warp = [&](int w) {
        for (int l = w * 32; l < w * 32 + 32 && l < nthreads; l++) threads[l].wait = 0;
    };
    /* the warps in a random priority order: the first runnable one always goes on, so every
     * warp runs as far ahead of the others as the barriers allow (a missing barrier shows) */
    const int nw = (nthreads + 31) / 32;
    std::vector<int> prio(nw);
    for (int w = 0; w < nw; w++) prio[w] = w;
    for (int w = nw - 1; w > 0; w--) {
        rng = rng * 1664525u + 1013904223u;
        std::swap(prio[w], prio[(rng >> 8) % (w + 1)]);
    }
    for (;;) {
        bool runnable = false;
        for (int pw = 0; pw < nw && !runnable; pw++) {
            const int w = prio[pw];
            rng = rng * 1664525u + 1013904223u;
            const int rot = (int)((rng >> 8) % 32);   /* lanes of a warp in a rotated order */
            for (int li = 0; li < 32; li++) {
                const int l = w * 32 + (li + rot) % 32;
                if (l >= nthreads) continue;
                Thread &t = threads[l];
                if (t.done || t.wait) continue;
                runnable = true;
                cur = &t;
                swapcontext(&sched, &t.ctx);
                if (t.wait == 2 && warp_ready(w)) open_warp(w);
            }
        }
        if (runnable) continue;
        bool all_done = true, opened = false;
        for (auto &t : threads) all_done &= t.done;
        if (all_done) break;
        bool block_ready = true;
        for (auto &t : threads) if (!t.done && t.wait != 1) block_ready = false;
        if (block_ready) {
            for (auto &t : threads) t.wait = 0;
            opened = true;
        }
        for (int w = 0; w * 32 < nthreads && !opened; w++)
            if (warp_ready(w)) { open_warp(w); opened = true; }
        if (!opened) {
            fprintf(stderr, "emu: deadlock in block (%u,%u,%u): threads wait at different barriers\n", block_idx.x,
                    block_idx.y, block_idx.z);
            exit(1);
        }
    }
    for (auto &t : threads) {
        if (!t.open.empty() || !t.groups.empty()) {
            bool pending = !t.open.empty();
            for (auto &g : t.groups) pending |= !g.empty();
            if (pending && !copy_at_issue) {
                fprintf(stderr, "emu: thread %u ended with cp.async copies never waited for\n", t.idx.x);
                exit(1);
            }
        }
        free(t.stack);
    }
}

/* Runs f() as the body of every thread of every block of the grid (blocks in order). */
template <class F> static void launch_call(const F &f, emu_dim3 grid, int nthreads, size_t smem_bytes) {
    static const F *ff;
    ff = &f;
    kernel_fn = [] { (*ff)(); };
    block_dim = emu_dim3{(unsigned)nthreads, 1, 1};
    grid_dim = grid;
    std::vector<float> sm(smem_bytes / 4 + 64);
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                block_idx = emu_dim3{x, y, z};
                for (auto &v : sm) v = NAN;
                /* 128-byte aligned base, as __align__(128) gives */
                smem_buf = (char *)(((uintptr_t)sm.data() + 127) & ~(uintptr_t)127);
                run_block(nthreads);
            }
}

/* A kernel that takes one argument struct (the linattn bodies). */
template <class A> static void launch(void (*k)(A), const A &a, emu_dim3 grid, int nthreads, size_t smem_bytes) {
    launch_call([k, &a] { k(a); }, grid, nthreads, smem_bytes);
}

} // namespace emu

#endif
