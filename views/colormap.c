/* Colour maps and themes. Viridis (perceptually uniform, colour-blind safe) for attention,
 * the NIAH red-yellow-green accuracy scale (the colours of the usual needle plots; its ends
 * also differ in blue and lightness so they stay apart for red-green colour blindness), and
 * Okabe-Ito for branch types. */
#include <math.h>

#include "views.h"

static hs_rgba hex(unsigned v) {
    hs_rgba c = { ((v >> 16) & 255) / 255.0f, ((v >> 8) & 255) / 255.0f, (v & 255) / 255.0f, 1 };
    return c;
}

static hs_rgba lerp_stops(const unsigned *stops, int n, double t) {
    if (!(t >= 0)) t = 0;      /* also NaN */
    if (t > 1) t = 1;
    double f = t * (n - 1);
    int i = (int)f;
    if (i >= n - 1) return hex(stops[n - 1]);
    double u = f - i;
    hs_rgba a = hex(stops[i]), b = hex(stops[i + 1]);
    hs_rgba c = { (float)(a.r + (b.r - a.r) * u), (float)(a.g + (b.g - a.g) * u),
                  (float)(a.b + (b.b - a.b) * u), 1 };
    return c;
}

hs_rgba hs_cmap_viridis(double t) {
    /* matplotlib viridis at 11 evenly spaced stops */
    static const unsigned stops[] = { 0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e,
                                      0x21918c, 0x22a884, 0x44bf70, 0x7ad151, 0xbddf26,
                                      0xfde725 };
    return lerp_stops(stops, 11, t);
}

hs_rgba hs_cmap_niah(double acc) {
    static const unsigned stops[] = { 0xf0496e, 0xebb839, 0x0cd79f };
    return lerp_stops(stops, 3, acc);
}

hs_rgba hs_branch_color(hs_mixer_type t, int dark) {
    switch (t) {
    case HS_NOPE: return hex(0xd55e00);              /* vermillion: the global heads */
    case HS_ROPE: return hex(dark ? 0x56b4e9 : 0x0072b2);
    case HS_SWA: return hex(0x009e73);
    case HS_GLA: return hex(0xcc79a7);
    case HS_GDN: return hex(0xe69f00);
    default: return hex(dark ? 0xbbbbbb : 0x666666);
    }
}

hs_rgba hs_theme_bg(int dark) { return hex(dark ? 0x1c1d22 : 0xffffff); }
hs_rgba hs_theme_fg(int dark) { return hex(dark ? 0xe4e4e4 : 0x1a1a1a); }
