/* Views from synthetic result structs only: every view drawn through the cairo painter
 * (pixels, PNG, SVG, PDF) and the text-cell painter (UTF-8 and ASCII at 80x24). Pixel checks
 * find regions through hs_view_hit_test, so they do not depend on layout constants: a
 * known-hot map cell is yellow (viridis top), the no-causal-entry triangle is background, a
 * 100% needle cell is green and a 0% one red, a tidal point has its branch colour.
 *
 * HS_VIEWS_DUMP=1 prints the 80x24 text renders (HS_VIEWS_DUMP=COLSxROWS: at that size). With HS_VIEWS_OUT=DIR set (and optionally
 * HS_VIEWS_SIZE=WxH[@scale]), views_export_files writes its files there (the CLI test
 * tests/cli/views_vector.sh parses them; docs/img screenshots are made the same way). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"
#include "../views/paint_cairo.h"
#include "../views/paint_text.h"
#include "../views/views.h"
#ifdef HS_HAVE_CAIRO
#include <cairo.h>
#endif

/* ---- synthetic inputs ---- */

static const char cfg_json[] =
    "{\"model_type\":\"hybrid\",\"vocab_size\":258,\"hidden_size\":64,\"intermediate_size\":128,"
    "\"num_hidden_layers\":5,\"head_dim\":16,\"train_context\":1024,"
    "\"tokenizer\":{\"type\":\"bytes\",\"bos_id\":256,\"eos_id\":257},\"layers\":["
    "{\"mixers\":[{\"type\":\"gla\",\"num_heads\":4}]},"
    "{\"mixers\":[{\"type\":\"gdn\",\"num_heads\":4}]},"
    "{\"mixers\":[{\"type\":\"rope\",\"num_heads\":4}]},"
    "{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]},"
    "{\"mixers\":[{\"type\":\"swa\",\"num_heads\":3,\"window\":128,\"rope_theta\":10000.0},"
    "{\"type\":\"nope\",\"num_heads\":1}]}]}";

#define SYN_T 256
#define SYN_B 32
#define HOT_T 20   /* hot bin of every map: row 20, column 5 */
#define HOT_S 5

typedef struct {
    hs_config cfg;
    hs_knobs knobs;
    hs_probe_result probe, ghost;
    hs_pooled_map maps[32];
    int n_maps;
    hs_niah_result niah;
    hs_ppl_result ppl[2];
    hs_view_input in;
    char text[SYN_T + 1];
} synth;

static void make_probe(hs_probe_result *p, const hs_config *cfg, const char *text, double shift) {
    memset(p, 0, sizeof *p);
    p->T = SYN_T;
    p->tokens = malloc(sizeof(int32_t) * SYN_T);
    p->tokens[0] = 256;                                /* BOS */
    for (int i = 1; i < SYN_T; i++) p->tokens[i] = (unsigned char)text[i];
    p->span_start = 100;
    p->span_end = 108;
    p->n_probe = 16;
    p->probe_pos = malloc(sizeof(int) * 16);
    for (int i = 0; i < 16; i++) p->probe_pos[i] = SYN_T - 16 + i;
    p->topk = 16;
    int n = 0;
    for (int l = 0; l < cfg->num_layers; l++)
        for (int m = 0; m < cfg->layers[l].n_mixers; m++) n += cfg->layers[l].mixers[m].num_heads;
    p->n_heads = n;
    p->heads = calloc((size_t)n, sizeof *p->heads);
    int k = 0;
    for (int l = 0; l < cfg->num_layers; l++)
        for (int m = 0; m < cfg->layers[l].n_mixers; m++)
            for (int h = 0; h < cfg->layers[l].mixers[m].num_heads; h++, k++) {
                hs_head_stat *s = &p->heads[k];
                s->layer = l;
                s->mixer = m;
                s->head = h;
                s->type = cfg->layers[l].mixers[m].type;
                s->entropy = fmin(1, 0.1 + 0.05 * k + shift);
                s->hit_rate = fmin(1, fmax(0, 0.9 - 0.045 * k + shift));
                s->retrieval = k % 4 == 0 ? 0 : k % 4 == 1 ? 0.05 : k % 4 == 2 ? 0.3 : 0.8;
            }
    /* head 0 sits alone for the tidal colour check */
    p->heads[0].entropy = 0.5;
    p->heads[0].hit_rate = 0.5;
    p->heads[0].retrieval = 0.8;
    p->has_answer = 1;
    snprintf(p->answer, sizeof p->answer, "1234567");
}

/* A plausible map per branch type (sink at BOS, local diagonals, the needle column for NoPE);
 * `hot` adds the test's known-hot bin. */
static void make_map(hs_pooled_map *m, const hs_head_stat *s, int hot) {
    memset(m, 0, sizeof *m);
    m->head.layer = s->layer;
    m->head.mixer = s->mixer;
    m->head.head = s->head;
    m->type = s->type;
    m->T = SYN_T;
    m->t1 = m->s1 = SYN_T;
    m->bins_t = m->bins_s = SYN_B;
    m->cells = malloc(sizeof(float) * SYN_B * SYN_B);
    double k = 1 + 0.3 * s->head;
    for (int i = 0; i < SYN_B; i++)
        for (int j = 0; j < SYN_B; j++) {
            double v, d = i - j;
            switch (s->type) {
            case HS_NOPE: v = 0.3 / (i + 1) + (j == 0 ? 0.2 : 0) + ((j == 12 || j == 13) && i >= 28 ? 0.35 / k : 0); break;
            case HS_ROPE: v = 0.45 * exp(-d / k) + (j == 0 ? 0.15 : 0) + 0.04 / (i + 1); break;
            case HS_SWA: v = d < 16 ? 0.35 * exp(-d / (2 * k)) + 0.02 : 0; break;
            case HS_GLA: v = 0.55 * exp(-d / (2.5 * k)); break;
            default: v = 0.55 * exp(-d / k) + 0.02; break;
            }
            m->cells[i * SYN_B + j] = j > i ? NAN : (float)v;
        }
    if (hot) m->cells[HOT_T * SYN_B + HOT_S] = 0.9f;
}

static void make_niah(hs_niah_result *r) {
    memset(r, 0, sizeof *r);
    r->n_tasks = 2;
    r->tasks[0] = HS_SK1;
    r->tasks[1] = HS_SK3;
    r->n_lengths = 4;
    r->n_depths = 5;
    r->samples = 4;
    r->lengths = malloc(sizeof(int) * 4);
    r->depths = malloc(sizeof(double) * 5);
    for (int i = 0; i < 4; i++) r->lengths[i] = 1024 << i;
    for (int i = 0; i < 5; i++) r->depths[i] = 25.0 * i;
    int n = r->n_tasks * r->n_lengths * r->n_depths;
    r->correct = calloc((size_t)n, sizeof(int));
    r->done = calloc((size_t)n, sizeof(int));
    r->shown = calloc((size_t)n, sizeof *r->shown);
    r->shown_outcome = calloc((size_t)n, sizeof *r->shown_outcome);
    for (int t = 0; t < 2; t++)
        for (int l = 0; l < 4; l++)
            for (int d = 0; d < 5; d++) {
                int i = (t * 4 + l) * 5 + d;
                /* task 0: length 0 all correct, length 1 all wrong, length 2 partial (2 of 3
                 * done, 1 right), length 3 not run; task 1: mixed */
                if (t == 0) {
                    r->done[i] = l == 0 || l == 1 ? 4 : l == 2 ? 3 : 0;
                    r->correct[i] = l == 0 ? 4 : l == 2 ? 1 : 0;
                } else {
                    r->done[i] = l < 3 ? 4 : 0;
                    r->correct[i] = l < 3 ? (4 - l - (d % 2)) : 0;
                    if (r->correct[i] < 0) r->correct[i] = 0;
                }
                hs_needle_sample *s = &r->shown[i];
                s->task = r->tasks[t];
                s->length = r->lengths[l];
                s->depth = r->depths[d];
                snprintf(s->key, sizeof s->key, "quiet-harbor");
                snprintf(s->value, sizeof s->value, t == 0 ? "4817305" : "3f2a9c1e-0b4d-4e8a-9c7f-12ab34cd56ef");
                snprintf(r->shown_outcome[i].answer, sizeof r->shown_outcome[i].answer, "%s",
                         r->correct[i] ? s->value : "4817300");
                r->shown_outcome[i].correct = r->correct[i] > 0;
            }
}

static void make_ppl(hs_ppl_result *r, const char *label, double scale) {
    memset(r, 0, sizeof *r);
    r->n_buckets = 8;
    r->bucket_start = malloc(sizeof(int) * 8);
    r->bucket_end = malloc(sizeof(int) * 8);
    r->ppl = malloc(sizeof(double) * 8);
    for (int b = 0; b < 8; b++) {
        r->bucket_start[b] = b == 0 ? 0 : 16 << (b - 1);
        r->bucket_end[b] = 16 << b;
        r->ppl[b] = scale * (8 + 6.0 / (b + 1) + (b >= 6 ? 4.0 * (b - 5) : 0));
    }
    r->overall = scale * 9;
    r->length = 2048;
    r->n_docs = 4;
    snprintf(r->label, sizeof r->label, "%s", label);
}

static int synth_init(synth *S) {
    memset(S, 0, sizeof *S);
    char err[256];
    if (hs_config_parse(&S->cfg, cfg_json, strlen(cfg_json), "synthetic", err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    const char *hay = "The grass is green. The sky is blue. The sun is yellow. Here we go. "
                      "There and back again. ";
    for (int i = 0; i < SYN_T; i++) S->text[i] = hay[i % strlen(hay)];
    make_probe(&S->probe, &S->cfg, S->text, 0);
    make_probe(&S->ghost, &S->cfg, S->text, 0.12);
    S->n_maps = S->probe.n_heads;
    for (int i = 0; i < S->n_maps; i++) make_map(&S->maps[i], &S->probe.heads[i], i == 13);
    make_niah(&S->niah);
    make_ppl(&S->ppl[0], "off", 1.0);
    make_ppl(&S->ppl[1], "swla=exact", 0.9);
    hs_view_input *in = &S->in;
    in->cfg = &S->cfg;
    in->model_name = "synthetic-5L";
    in->knobs = &S->knobs;
    in->length = 2048;
    in->depth_pct = 50;
    in->topk = 16;
    in->task = HS_SK1;
    in->probe = &S->probe;
    in->maps = S->maps;
    in->n_maps = S->n_maps;
    in->sel_head = 13;
    in->ghost = &S->ghost;
    in->ghost_label = "log scaling on";
    in->head_map = &S->maps[13];
    in->niah = &S->niah;
    in->sel_task = 0;
    in->sel_length = 0;
    in->sel_depth = 2;
    in->ppl = S->ppl;
    in->n_ppl = 2;
    in->max_length = 65536;
    return 0;
}

static void free_probe(hs_probe_result *p) {
    free(p->tokens);
    free(p->probe_pos);
    free(p->heads);
}

static void synth_free(synth *S) {
    free_probe(&S->probe);
    free_probe(&S->ghost);
    for (int i = 0; i < S->n_maps; i++) free(S->maps[i].cells);
    hs_niah_result *r = &S->niah;
    free(r->lengths);
    free(r->depths);
    free(r->correct);
    free(r->done);
    free(r->shown);
    free(r->shown_outcome);
    for (int k = 0; k < 2; k++) {
        free(S->ppl[k].bucket_start);
        free(S->ppl[k].bucket_end);
        free(S->ppl[k].ppl);
    }
}

/* ---- text painter ---- */

static char *render_text(const synth *S, hs_view_kind v, hs_text_charset cs, int cols, int rows,
                         int dark) {
    hs_text_grid g;
    if (hs_text_grid_init(&g, cols, rows, cs, 256, dark) != 0) return NULL;
    hs_canvas c;
    hs_canvas_text_init(&c, &g);
    hs_view_draw(&c, v, &S->in);
    char *s = hs_text_grid_to_utf8(&g);
    hs_text_grid_free(&g);
    return s;
}

/* Whether the view, rendered as ASCII cells width x 30, shows `want`: 1 or 0, -1 when it
 * does not render; the cells go to stderr when `want` is missing and dump is set. */
static int text_has(synth *S, hs_view_kind v, int width, const char *want, int dump) {
    char *s = render_text(S, v, HS_TEXT_ASCII, width, 30, 0);
    if (!s) return -1;
    int has = strstr(s, want) != NULL;
    if (!has && dump) fprintf(stderr, "%s\n", s);
    free(s);
    return has;
}

/* The view's text at WIDTH columns holds WANT (EXPECT 1) or not (0); a render failure fails
 * the test, and a missing text dumps the screen. */
#define CHECK_TEXT(S, view, width, want, expect, msg)                                \
    do {                                                                             \
        int r_ = text_has((S), (view), (width), (want), (expect));                   \
        CHECK(r_ >= 0, "render failed");                                             \
        CHECK(r_ == (expect), msg);                                                  \
    } while (0)

/* The model view states the checkpoint's training record where it has one (steps, phases, the
 * data shares), and says nothing of training where it has none. */
TEST(views_model_training_record) {
    synth S;
    CHECK(synth_init(&S) == 0, "synthetic config did not parse");
    CHECK_TEXT(&S, HS_VIEW_MODEL, 120, "trained", 0, "a model without a training record shows one");
    S.cfg.training = (hs_training_info){ .present = 1, .has_steps = 1, .steps = 17020, .phases = 9,
                                         .shares = 7, .p_needle = 0.6, .p_kv = 0.3, .p_copy = 0 };
    CHECK_TEXT(&S, HS_VIEW_MODEL, 160, "trained 17,020 steps in 9 phases; needles 0.6, key-value 0.3, copy 0", 1,
               "the training line is missing or wrong");
    S.cfg.training = (hs_training_info){ .present = 1, .shares = 1, .p_needle = 0.7 };
    CHECK_TEXT(&S, HS_VIEW_MODEL, 160, "trained on needles 0.7", 1, "a partial record is shown wrong");
    CHECK_TEXT(&S, HS_VIEW_MODEL, 160, "key-value", 0, "a partial record is shown wrong");
    synth_free(&S);
}

/* The perplexity view says what the curve was measured on where the result names its corpus
 * (the held-out prose, for the sample models), and nothing where it does not. */
TEST(views_ppl_corpus_label) {
    synth S;
    CHECK(synth_init(&S) == 0, "synthetic config did not parse");
    CHECK_TEXT(&S, HS_VIEW_PPL, 120, "document", 0, "a result without a corpus shows one");
    snprintf(S.ppl[1].corpus, sizeof S.ppl[1].corpus, "held-out prose");
    CHECK_TEXT(&S, HS_VIEW_PPL, 120, "held-out prose, 4 documents", 1, "the corpus label is missing or wrong");
    synth_free(&S);
}

TEST(views_text_80x24_labels) {
    synth S;
    CHECK(synth_init(&S) == 0, "synthetic config did not parse");
    static const char *const want[HS_VIEW_COUNT][3] = {
        { "Heads", "L0", "NoPE" },        { "query", "needle", "linear" },
        { "Tidal", "entropy", "hit@16" }, { "SK1", "SK3", "acc" },
        { "Perplexity", "position", "swla=exact" }, { "Model", "parameters", "GLA" },
    };
    for (int v = 0; v < HS_VIEW_COUNT; v++)
        for (int cs = 0; cs < 2; cs++) {
            char *s = render_text(&S, (hs_view_kind)v, (hs_text_charset)cs, 80, 24, cs);
            CHECK(s, "render failed");
            if (getenv("HS_VIEWS_DUMP")) {
                int dc = 0, dr = 0;
                if (sscanf(getenv("HS_VIEWS_DUMP"), "%dx%d", &dc, &dr) == 2 && dc > 0 && dr > 0) {
                    char *d = render_text(&S, (hs_view_kind)v, (hs_text_charset)cs, dc, dr, cs);
                    if (d) printf("---- %s %s %dx%d\n%s", hs_view_name(v), cs ? "ascii" : "utf8", dc, dr, d);
                    free(d);
                } else printf("---- %s %s\n%s", hs_view_name(v), cs ? "ascii" : "utf8", s);
            }
            int lines = 0;
            for (char *p = s; *p; p++) lines += *p == '\n';
            int ok = lines == 24;
            for (int k = 0; k < 3 && ok; k++)
                if (!strstr(s, want[v][k])) {
                    fprintf(stderr, "%s\n", s);
                    CHECK(0, "view %.200s (%.200s) lacks '%.200s'", hs_view_name(v), cs ? "ascii" : "utf8", want[v][k]);
                }
            if (cs == HS_TEXT_ASCII)
                for (char *p = s; *p; p++)
                    if ((unsigned char)*p >= 128 || ((unsigned char)*p < 32 && *p != '\n')) {
                        free(s);
                        CHECK(0, "view %.200s: non-ASCII byte 0x%02x in ASCII mode", hs_view_name(v),
                              (unsigned char)*p);
                    }
            free(s);
            CHECK(ok, "view %.200s: %d lines, want 24", hs_view_name(v), lines);
        }
    synth_free(&S);
}

TEST(views_text_heatmap_halfblocks_and_ramp) {
    /* a 1 x 2 image (top red, bottom blue) into one cell */
    uint8_t img[8] = { 255, 0, 0, 255, 0, 0, 255, 255 };
    hs_text_grid g;
    CHECK(hs_text_grid_init(&g, 4, 2, HS_TEXT_UTF8, 256, 0) == 0, "init");
    hs_canvas c;
    hs_canvas_text_init(&c, &g);
    c.image(&c, 1, 0, 1, 1, img, 1, 2);
    hs_text_cell *cell = hs_text_grid_at(&g, 1, 0);
    CHECK(cell->ch == 0x2580, "half block expected, got U+%04X", cell->ch);
    CHECK(cell->fg[0] == 255 && cell->fg[2] == 0 && cell->bg[2] == 255 && cell->bg[0] == 0,
          "upper pixel is fg, lower is bg");
    /* transparent pixels keep the background */
    uint8_t clear[8] = { 0 };
    c.image(&c, 2, 0, 1, 1, clear, 1, 2);
    CHECK(hs_text_grid_at(&g, 2, 0)->ch == ' ' && hs_text_grid_at(&g, 2, 0)->bg[0] == 255,
          "NaN (transparent) cell must stay background");
    /* braille: two dots in one cell merge */
    hs_rgba red = { 1, 0, 0, 1 };
    /* a scatter marker is a 2x2 block of dots: at the cell's top-left, dots 1,2,4,5 */
    c.marker(&c, 0.25, 1.25, 0.5, HS_MARK_CIRCLE, red, red);
    CHECK(hs_text_grid_at(&g, 0, 1)->ch == (0x2800 | 0x01 | 0x02 | 0x08 | 0x10), "braille block: U+%04X",
          hs_text_grid_at(&g, 0, 1)->ch);
    /* a second one at the bottom-right merges into the same cell */
    c.marker(&c, 0.74, 1.74, 0.5, HS_MARK_CIRCLE, red, red);
    CHECK(hs_text_grid_at(&g, 0, 1)->ch == 0x28ff, "braille merge: U+%04X", hs_text_grid_at(&g, 0, 1)->ch);
    hs_text_grid_free(&g);
    /* ASCII: bright pixels are dense, dark ones sparse */
    CHECK(hs_text_grid_init(&g, 2, 1, HS_TEXT_ASCII, 0, 0) == 0, "init");
    hs_canvas_text_init(&c, &g);
    uint8_t bright[8] = { 253, 231, 37, 255, 253, 231, 37, 255 }, dim[8] = { 68, 1, 84, 255, 68, 1, 84, 255 };
    c.image(&c, 0, 0, 1, 1, bright, 1, 2);
    c.image(&c, 1, 0, 1, 1, dim, 1, 2);
    const char *ramp = " .:-=+*#%@";
    uint32_t a = hs_text_grid_at(&g, 0, 0)->ch, b = hs_text_grid_at(&g, 1, 0)->ch;
    CHECK(strchr(ramp, (int)a) && strchr(ramp, (int)b) && strchr(ramp, (int)a) > strchr(ramp, (int)b) &&
              b != ' ',
          "ramp: bright '%c' must be denser than dim '%c' (and dim not blank)", a, b);
    hs_text_grid_free(&g);
    /* quantisation */
    uint8_t white[3] = { 255, 255, 255 }, pure_red[3] = { 255, 0, 0 };
    CHECK(hs_text_rgb_to_256(white) == 231 || hs_text_rgb_to_256(white) == 255, "white -> 231");
    CHECK(hs_text_rgb_to_8(pure_red) == 1, "red -> 1");
}

/* Clicking a tab: every tab's label (the digit drawn on the top row, at 80 and 50 columns)
 * maps back to its view; the view area and the brand do not. */
TEST(views_chrome_tab_hit) {
    for (int wide = 0; wide < 2; wide++) {
        hs_text_grid g;
        CHECK(hs_text_grid_init(&g, wide ? 80 : 50, 24, HS_TEXT_UTF8, 256, 0) == 0, "init");
        hs_canvas c;
        hs_canvas_text_init(&c, &g);
        hs_chrome_input ci = { "m", "cpu", "off", NULL, -1, NULL, HS_VIEW_NEEDLE };
        hs_chrome_draw(&c, &ci);
        int found[HS_VIEW_COUNT] = { 0 };
        for (int x = 0; x < g.cols; x++) {
            uint32_t ch = g.cells[x].ch;
            int tab = hs_chrome_tab_at(&c, x + 0.5, 0.5);
            if (ch >= '1' && ch < '1' + HS_VIEW_COUNT) {
                CHECK(tab == (int)(ch - '1'), "%d cols: digit %c at x=%d -> tab %d", g.cols,
                      (char)ch, x, tab);
                found[ch - '1'] = 1;
            }
            CHECK(hs_chrome_tab_at(&c, x + 0.5, 3.5) == -1, "view area hit a tab at x=%d", x);
        }
        CHECK(hs_chrome_tab_at(&c, g.cols - 0.5, 0.5) == -1, "%d cols: brand is no tab", g.cols);
        for (int i = 0; i < HS_VIEW_COUNT; i++) CHECK(found[i], "%d cols: tab %d not drawn", g.cols, i);
        hs_text_grid_free(&g);
    }
}

TEST(views_text_chrome_and_help) {
    hs_text_grid g;
    CHECK(hs_text_grid_init(&g, 80, 24, HS_TEXT_UTF8, 256, 1) == 0, "init");
    hs_canvas c;
    hs_canvas_text_init(&c, &g);
    hs_chrome_input ci = { "sample-3to1", "cpu", "swla=exact", "needle sweep", 0.4, NULL, HS_VIEW_TIDAL };
    hs_chrome_draw(&c, &ci);
    CHECK(hs_chrome_top_height(&c) == 1 && hs_chrome_bottom_height(&c) == 2, "text chrome heights");
    char row[1024];
    hs_text_grid_row_utf8(&g, 0, row, sizeof row);
    CHECK(strstr(row, "Tidal") && strstr(row, "Needle"), "tabs: %.200s", row);
    hs_text_grid_row_utf8(&g, 22, row, sizeof row);
    CHECK(strstr(row, "sample-3to1") && strstr(row, "40%"), "status: %.200s", row);
    hs_text_grid_row_utf8(&g, 23, row, sizeof row);
    CHECK(strstr(row, "help") && strstr(row, "quit"), "key bar: %.200s", row);
    hs_help_overlay_draw(&c);
    char *s = hs_text_grid_to_utf8(&g);
    int found = 0;
    for (int i = 0; i < hs_key_map_len; i++) found += strstr(s, hs_key_map[i].action) != NULL;
    free(s);
    /* every key and action fits at 80x24, verbatim */
    CHECK(found == hs_key_map_len, "help overlay shows %d of %d actions", found, hs_key_map_len);
    hs_text_grid_free(&g);
}

TEST(views_placeholders_and_hits_without_data) {
    hs_view_input in;
    memset(&in, 0, sizeof in);
    in.sel_head = in.sel_task = in.sel_length = in.sel_depth = -1;
    hs_text_grid g;
    CHECK(hs_text_grid_init(&g, 80, 24, HS_TEXT_ASCII, 0, 0) == 0, "init");
    hs_canvas c;
    hs_canvas_text_init(&c, &g);
    for (int v = 0; v < HS_VIEW_COUNT; v++) {
        hs_text_grid_clear(&g);
        hs_view_draw(&c, (hs_view_kind)v, &in);
        char *s = hs_text_grid_to_utf8(&g);
        int has = strstr(s, "press Enter") || strstr(s, "no model");
        free(s);
        CHECK(has, "view %.200s: no placeholder", hs_view_name(v));
        hs_view_hit hit;
        CHECK(hs_view_hit_test(&hit, &c, (hs_view_kind)v, &in, 40, 12) == HS_HIT_NONE,
              "view %.200s: hit without data", hs_view_name(v));
    }
    double x, y, w, h;
    CHECK(!hs_view_head_map_rect(&c, &in, &x, &y, &w, &h), "no map rect without a map");
    CHECK(hs_view_parse("tidal") == HS_VIEW_TIDAL && hs_view_parse("nope") == -1, "parse");
    hs_text_grid_free(&g);
}

/* Centre of the region where hit-testing returns what `match` accepts (and its top-left). */
typedef int (*hit_match)(const hs_view_hit *h, int a, int b, int c);
static double region_x0, region_y0;
static int find_region(hs_canvas *c, hs_view_kind v, const hs_view_input *in, hit_match m, int a,
                       int b, int cc, double *cx, double *cy) {
    double sx = 0, sy = 0;
    int n = 0;
    region_x0 = region_y0 = 1e9;
    for (int y = 0; y < (int)c->height; y += 2)
        for (int x = 0; x < (int)c->width; x += 2) {
            hs_view_hit h;
            if (hs_view_hit_test(&h, c, v, in, x, y) != HS_HIT_NONE && m(&h, a, b, cc)) {
                sx += x;
                sy += y;
                n++;
                if (x < region_x0) region_x0 = x;
                if (y < region_y0) region_y0 = y;
            }
        }
    if (!n) return 0;
    *cx = sx / n;
    *cy = sy / n;
    return n;
}

static int match_needle(const hs_view_hit *h, int t, int l, int d) {
    return h->what == HS_HIT_NEEDLE && h->task == t && h->length == l && h->depth == d;
}
static int match_head(const hs_view_hit *h, int i, int b, int c) {
    (void)b; (void)c;
    return h->what == HS_HIT_HEAD && h->head == i;
}

#ifdef HS_HAVE_CAIRO

typedef struct { uint8_t *px; int w, h, stride; hs_canvas *c; } pixcanvas;

static int pix_open(pixcanvas *p, int w, int h, int dark) {
    p->w = w;
    p->h = h;
    p->stride = w * 4;
    p->px = calloc((size_t)p->stride * h, 1);
    char err[128];
    p->c = hs_canvas_cairo_pixels(p->px, w, h, p->stride, 1.0, dark, err, sizeof err);
    if (p->c) hs_canvas_clear(p->c);
    return p->c ? 0 : -1;
}

static void pix_close(pixcanvas *p) {
    hs_canvas_cairo_free(p->c);
    free(p->px);
}

static void pix_rgb(const pixcanvas *p, int x, int y, double rgb[3]) {
    uint32_t v = *(const uint32_t *)(p->px + (size_t)y * p->stride + (size_t)x * 4);
    rgb[0] = ((v >> 16) & 255) / 255.0;
    rgb[1] = ((v >> 8) & 255) / 255.0;
    rgb[2] = (v & 255) / 255.0;
}

static double dist_rgb(const double a[3], hs_rgba b) {
    return fabs(a[0] - b.r) + fabs(a[1] - b.g) + fabs(a[2] - b.b);
}

/* Number of distinct colours (coarsely) in the canvas: a blank image has 1. */
static int distinct_colours(const pixcanvas *p) {
    static uint8_t seen[4096];
    memset(seen, 0, sizeof seen);
    int n = 0;
    for (int y = 0; y < p->h; y += 2)
        for (int x = 0; x < p->w; x += 2) {
            uint32_t v = *(const uint32_t *)(p->px + (size_t)y * p->stride + (size_t)x * 4);
            int k = ((v >> 20) & 15) << 8 | ((v >> 12) & 15) << 4 | ((v >> 4) & 15);
            if (!seen[k]) { seen[k] = 1; n++; }
        }
    return n;
}

TEST(views_cairo_every_view_not_blank) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    for (int dark = 0; dark < 2; dark++)
        for (int v = 0; v < HS_VIEW_COUNT; v++) {
            pixcanvas p;
            CHECK(pix_open(&p, 800, 500, dark) == 0, "canvas");
            hs_view_draw(p.c, (hs_view_kind)v, &S.in);
            int n = distinct_colours(&p);
            pix_close(&p);
            CHECK(n >= 8, "view %.200s (%.200s) looks blank: %d colours", hs_view_name(v), dark ? "dark" : "light", n);
        }
    synth_free(&S);
}

TEST(views_cairo_head_hot_cell_and_nan_region) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    for (int dark = 0; dark < 2; dark++) {
        pixcanvas p;
        CHECK(pix_open(&p, 900, 640, dark) == 0, "canvas");
        hs_view_draw(p.c, HS_VIEW_HEAD, &S.in);
        double x, y, w, h;
        CHECK(hs_view_head_map_rect(p.c, &S.in, &x, &y, &w, &h), "map rect");
        CHECK(w > 100 && h > 100, "map too small: %gx%g", w, h);
        double rgb[3];
        /* centre of the hot bin */
        int hx = (int)(x + (HOT_S + 0.5) * w / SYN_B), hy = (int)(y + (HOT_T + 0.5) * h / SYN_B);
        pix_rgb(&p, hx, hy, rgb);
        CHECK(dist_rgb(rgb, hs_cmap_viridis(1)) < 0.12, "hot cell (%d,%d) not yellow: %.2f %.2f %.2f",
              hx, hy, rgb[0], rgb[1], rgb[2]);
        /* a cold finite cell is dark purple-blue */
        int cx = (int)(x + 3.5 * w / SYN_B), cy = (int)(y + 30.5 * h / SYN_B);
        pix_rgb(&p, cx, cy, rgb);
        CHECK(rgb[1] < 0.35 && rgb[2] > 0.25, "cold cell not dark: %.2f %.2f %.2f", rgb[0], rgb[1], rgb[2]);
        /* the causal upper triangle: background-like (light theme: bright, dark: dark), never viridis */
        int nx = (int)(x + 28.5 * w / SYN_B), ny = (int)(y + 2.5 * h / SYN_B);
        pix_rgb(&p, nx, ny, rgb);
        hs_rgba bg = hs_theme_bg(dark);
        CHECK(dist_rgb(rgb, bg) < 0.45 && dist_rgb(rgb, hs_cmap_viridis(0)) > 0.3,
              "NaN region not background: %.2f %.2f %.2f", rgb[0], rgb[1], rgb[2]);
        /* hit test agrees with the bins */
        hs_view_hit hit;
        CHECK(hs_view_hit_test(&hit, p.c, HS_VIEW_HEAD, &S.in, hx, hy) == HS_HIT_CELL, "hit");
        CHECK(hit.t == HOT_T * SYN_T / SYN_B && hit.s == HOT_S * SYN_T / SYN_B, "hit t=%d s=%d", hit.t, hit.s);
        CHECK(strstr(hit.text, "0.9"), "hover text: %.200s", hit.text);
        pix_close(&p);
    }
    /* log colour bar keeps the hot cell hot */
    S.in.log_color = 1;
    pixcanvas p;
    CHECK(pix_open(&p, 640, 400, 0) == 0, "canvas");
    hs_view_draw(p.c, HS_VIEW_HEAD, &S.in);
    double x, y, w, h, rgb[3];
    CHECK(hs_view_head_map_rect(p.c, &S.in, &x, &y, &w, &h), "map rect");
    pix_rgb(&p, (int)(x + (HOT_S + 0.5) * w / SYN_B), (int)(y + (HOT_T + 0.5) * h / SYN_B), rgb);
    CHECK(dist_rgb(rgb, hs_cmap_viridis(1)) < 0.12, "log: hot cell not yellow");
    pix_close(&p);
    synth_free(&S);
}


TEST(views_cairo_needle_colours) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    pixcanvas p;
    CHECK(pix_open(&p, 800, 500, 0) == 0, "canvas");
    hs_view_draw(p.c, HS_VIEW_NEEDLE, &S.in);
    double cx, cy, rgb[3];
    /* task 0, length 0: 100% -> green; length 1: 0% -> red; length 3: not run -> background */
    CHECK(find_region(p.c, HS_VIEW_NEEDLE, &S.in, match_needle, 0, 0, 1, &cx, &cy), "cell 0/0/1");
    pix_rgb(&p, (int)region_x0 + 4, (int)region_y0 + 4, rgb);   /* off the number */
    CHECK(dist_rgb(rgb, hs_cmap_niah(1)) < 0.1 && rgb[1] > rgb[0], "100%% cell not green: %.2f %.2f %.2f",
          rgb[0], rgb[1], rgb[2]);
    CHECK(find_region(p.c, HS_VIEW_NEEDLE, &S.in, match_needle, 0, 1, 3, &cx, &cy), "cell 0/1/3");
    pix_rgb(&p, (int)region_x0 + 4, (int)region_y0 + 4, rgb);
    CHECK(dist_rgb(rgb, hs_cmap_niah(0)) < 0.1 && rgb[0] > rgb[1] && rgb[0] > rgb[2],
          "0%% cell not red: %.2f %.2f %.2f", rgb[0], rgb[1], rgb[2]);
    CHECK(find_region(p.c, HS_VIEW_NEEDLE, &S.in, match_needle, 0, 3, 1, &cx, &cy), "cell 0/3/1");
    pix_rgb(&p, (int)region_x0 + 4, (int)region_y0 + 4, rgb);
    CHECK(dist_rgb(rgb, hs_theme_bg(0)) < 0.05, "not-run cell not empty: %.2f %.2f %.2f", rgb[0], rgb[1], rgb[2]);
    /* partial cell: lighter than the finished colour (mixed with background) */
    CHECK(find_region(p.c, HS_VIEW_NEEDLE, &S.in, match_needle, 0, 2, 4, &cx, &cy), "cell 0/2/4");
    hs_view_hit hit;
    hs_view_hit_test(&hit, p.c, HS_VIEW_NEEDLE, &S.in, cx, cy);
    CHECK(strstr(hit.text, "1/3") && strstr(hit.text, "running"), "partial hover: %.200s", hit.text);
    pix_close(&p);
    synth_free(&S);
}

TEST(views_cairo_tidal_point_colour) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    S.in.ghost = NULL;
    S.in.sel_head = 5;
    pixcanvas p;
    CHECK(pix_open(&p, 800, 500, 0) == 0, "canvas");
    hs_view_draw(p.c, HS_VIEW_TIDAL, &S.in);
    double cx, cy, rgb[3];
    /* head 0 (GLA) alone at (0.5, 0.5): the centre of its hit region is its marker */
    hs_view_hit hit;
    CHECK(find_region(p.c, HS_VIEW_TIDAL, &S.in, match_head, 0, 0, 0, &cx, &cy), "head 0 region");
    hs_view_hit_test(&hit, p.c, HS_VIEW_TIDAL, &S.in, cx, cy);
    CHECK(hit.head == 0 && strstr(hit.text, "GLA"), "hover: %.200s", hit.text);
    pix_rgb(&p, (int)lrint(cx), (int)lrint(cy), rgb);
    hs_rgba bc = hs_branch_color(HS_GLA, 0), bg = hs_theme_bg(0);
    hs_rgba want = { 0.9f * bc.r + 0.1f * bg.r, 0.9f * bc.g + 0.1f * bg.g, 0.9f * bc.b + 0.1f * bg.b, 1 };
    CHECK(dist_rgb(rgb, want) < 0.15, "GLA point colour %.2f %.2f %.2f", rgb[0], rgb[1], rgb[2]);
    /* nothing under an empty corner of the plot */
    CHECK(hs_view_hit_test(&hit, p.c, HS_VIEW_TIDAL, &S.in, 2, 2) == HS_HIT_NONE, "corner hit");
    pix_close(&p);
    synth_free(&S);
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static char *slurp(const char *path, long *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)*n + 1);
    if (b && fread(b, 1, (size_t)*n, f) != (size_t)*n) { free(b); b = NULL; }
    if (b) b[*n] = 0;
    fclose(f);
    return b;
}

TEST(views_export_files) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    const char *dir = getenv("HS_VIEWS_OUT");
    if (!dir || !dir[0]) dir = hs_test_tmpdir();
    static const char *const ext[3] = { "png", "svg", "pdf" };
    char path[1024], err[512];
    int W = 960, H = 600;
    double scale = 1;
    const char *size = getenv("HS_VIEWS_SIZE");          /* "WxH" or "WxH@S", for looking */
    if (size && getenv("HS_VIEWS_OUT") && sscanf(size, "%dx%d@%lf", &W, &H, &scale) < 2) W = 960, H = 600;
    for (int v = 0; v < HS_VIEW_COUNT; v++)
        for (int dark = 0; dark < 2; dark++)
            for (int e = 0; e < 3; e++) {
                snprintf(path, sizeof path, "%s/%s-%s.%s", dir, hs_view_name(v), dark ? "dark" : "light", ext[e]);
                int rc = hs_export_view(path, W, H, scale, dark, (hs_view_kind)v, &S.in, err, sizeof err);
                CHECK(rc == 0, "export %.200s: %.200s", path, err);
                long n = 0;
                char *b = slurp(path, &n);
                CHECK(b && n > 100, "%.200s: empty", path);
                int ok = 1;
                if (e == 0) {
                    ok = !memcmp(b, "\x89PNG", 4);
                    cairo_surface_t *img = cairo_image_surface_create_from_png(path);
                    ok = ok && cairo_surface_status(img) == CAIRO_STATUS_SUCCESS &&
                         cairo_image_surface_get_width(img) == (int)lrint(W * scale) &&
                         cairo_image_surface_get_height(img) == (int)lrint(H * scale);
                    cairo_surface_destroy(img);
                } else if (e == 1) {
                    ok = !strncmp(b, "<?xml", 5) && strstr(b, "<svg") && strstr(b, "</svg>");
                } else {
                    ok = !memcmp(b, "%PDF-", 5);
                    const char *tail = b + (n > 64 ? n - 64 : 0);
                    ok = ok && memmem(tail, (size_t)(b + n - tail), "%%EOF", 5);
                }
                free(b);
                CHECK(ok, "%.200s: not a valid %.200s", path, ext[e]);
            }
    /* HiDPI: scale 2 doubles the pixels */
    snprintf(path, sizeof path, "%s/scaled.png", hs_test_tmpdir());
    CHECK(hs_export_view(path, 320, 200, 2.0, 0, HS_VIEW_TIDAL, &S.in, err, sizeof err) == 0, "%.200s", err);
    cairo_surface_t *img = cairo_image_surface_create_from_png(path);
    CHECK(cairo_image_surface_get_width(img) == 640 && cairo_image_surface_get_height(img) == 400,
          "scale 2: %dx%d", cairo_image_surface_get_width(img), cairo_image_surface_get_height(img));
    cairo_surface_destroy(img);
    synth_free(&S);
}

TEST(views_export_bad_paths) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    char path[1024], err[512] = "";
    snprintf(path, sizeof path, "%s/out.bmp", hs_test_tmpdir());
    CHECK(hs_export_view(path, 640, 400, 1, 0, HS_VIEW_HEADS, &S.in, err, sizeof err) == -1, "bmp accepted");
    CHECK(strstr(err, "out.bmp") && file_size(path) < 0, "message names the file: %.200s", err);
    snprintf(path, sizeof path, "%s/no/such/dir/out.png", hs_test_tmpdir());
    CHECK(hs_export_view(path, 640, 400, 1, 0, HS_VIEW_HEADS, &S.in, err, sizeof err) == -1, "bad dir");
    CHECK(strstr(err, "out.png"), "message: %.200s", err);
    snprintf(path, sizeof path, "%s/tiny.png", hs_test_tmpdir());
    CHECK(hs_export_view(path, 4, 4, 1, 0, HS_VIEW_HEADS, &S.in, err, sizeof err) == -1 && file_size(path) < 0,
          "tiny size accepted");
    CHECK(hs_export_format_known("a/b.SVG") && !hs_export_format_known("a.png/b"), "format_known");
    synth_free(&S);
}

#endif /* HS_HAVE_CAIRO */

#ifdef HS_HAVE_CAIRO
/* A zoomed window at token scale: hit tests report positions inside the window and the
 * tokens under the pointer; the tokens' text runs along the axes (drawn, not blank). */
TEST(views_head_zoom_token_scale) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    hs_pooled_map z;
    memset(&z, 0, sizeof z);
    z.head = S.maps[13].head;
    z.type = S.maps[13].type;
    z.T = SYN_T;
    z.t0 = 200; z.t1 = 232; z.s0 = 96; z.s1 = 128;
    z.bins_t = z.bins_s = 32;
    float cells[32 * 32];
    for (int i = 0; i < 32 * 32; i++) cells[i] = (i % 32 == 7) ? 0.5f : 0.01f;
    z.cells = cells;
    S.in.head_map = &z;
    const char *dir = getenv("HS_VIEWS_OUT");
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/head-zoom.png", dir && dir[0] ? dir : hs_test_tmpdir());
    CHECK(hs_export_view(path, 960, 640, 1, 0, HS_VIEW_HEAD, &S.in, err, sizeof err) == 0, "%.200s", err);
    pixcanvas p;
    CHECK(pix_open(&p, 960, 640, 0) == 0, "canvas");
    hs_view_draw(p.c, HS_VIEW_HEAD, &S.in);
    double x, y, w, h;
    CHECK(hs_view_head_map_rect(p.c, &S.in, &x, &y, &w, &h), "rect");
    hs_view_hit hit;
    CHECK(hs_view_hit_test(&hit, p.c, HS_VIEW_HEAD, &S.in, x + 7.5 * w / 32, y + 3.5 * h / 32) == HS_HIT_CELL, "hit");
    CHECK(hit.t == 203 && hit.s == 103, "t=%d s=%d", hit.t, hit.s);
    char want[32];
    char a = S.text[203] == ' ' ? '_' : S.text[203], b = S.text[103] == ' ' ? '_' : S.text[103];
    snprintf(want, sizeof want, "'%c' -> '%c'", a, b);             /* spaces shown as '_' */
    CHECK(strstr(hit.text, want) && strstr(hit.text, "0.5"), "hover '%.200s' lacks %.30s", hit.text, want);
    /* the strip under the map (token text) has ink: some pixels differ from the background */
    int ink = 0;
    for (int yy = (int)(y + h + 4); yy < (int)(y + h + 40) && yy < p.h; yy++)
        for (int xx = (int)x; xx < (int)(x + w); xx++) {
            double rgb[3];
            pix_rgb(&p, xx, yy, rgb);
            ink += dist_rgb(rgb, hs_theme_bg(0)) > 0.5;
        }
    CHECK(ink > 100, "no token text under the zoomed map (%d ink pixels)", ink);
    pix_close(&p);
    synth_free(&S);
}
#endif

#ifdef HS_HAVE_CAIRO
/* The window layout the gui uses: chrome around a view drawn through an area sub-canvas, then
 * the help overlay. Hit tests through the area use area coordinates. */
TEST(views_cairo_chrome_area_and_help) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    pixcanvas p;
    CHECK(pix_open(&p, 1000, 640, 1) == 0, "canvas");
    double top = hs_chrome_top_height(p.c), bottom = hs_chrome_bottom_height(p.c);
    CHECK(top > 10 && bottom > top, "chrome heights %g %g", top, bottom);
    hs_canvas_area area;
    hs_canvas_area_init(&area, p.c, 0, top, p.c->width, p.c->height - top - bottom);
    hs_view_draw(&area.c, HS_VIEW_TIDAL, &S.in);
    hs_chrome_input ci = { "synthetic-5L", "cpu", "swla=exact W=1024", "probe L=2K", 0.6,
                           NULL, HS_VIEW_TIDAL };
    hs_chrome_draw(p.c, &ci);
    /* the tab bar is painted with the panel colour, not the background */
    double rgb[3];
    pix_rgb(&p, 990, 3, rgb);
    CHECK(dist_rgb(rgb, hs_theme_bg(1)) > 0.03, "tab bar not painted");
    /* head 0 found through the area canvas is inside the area */
    double cx, cy;
    CHECK(find_region(&area.c, HS_VIEW_TIDAL, &S.in, match_head, 0, 0, 0, &cx, &cy), "head 0");
    CHECK(cy < area.c.height, "hit region outside the area");
    const char *dir = getenv("HS_VIEWS_OUT");
    if (dir && dir[0]) {
        char path[1024];
        cairo_surface_t *s = cairo_image_surface_create_for_data(p.px, CAIRO_FORMAT_ARGB32, p.w, p.h, p.stride);
        snprintf(path, sizeof path, "%s/window-tidal.png", dir);
        cairo_surface_write_to_png(s, path);
        hs_help_overlay_draw(p.c);
        hs_canvas_cairo_free(p.c);                      /* flush */
        p.c = NULL;
        snprintf(path, sizeof path, "%s/window-help.png", dir);
        cairo_surface_write_to_png(s, path);
        cairo_surface_destroy(s);
        free(p.px);
    } else {
        hs_help_overlay_draw(p.c);
        pix_close(&p);
    }
    synth_free(&S);
}
#endif

/* Every head of the small multiples can be found by hit-testing, on pixels and on 80x24
 * cells; needle cells and tidal points too on cells. */
#ifdef HS_HAVE_CAIRO
TEST(views_hit_tests_both_painters) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    pixcanvas p;
    CHECK(pix_open(&p, 800, 500, 0) == 0, "canvas");
    double cx, cy;
    for (int i = 0; i < S.probe.n_heads; i++) {
        CHECK(find_region(p.c, HS_VIEW_HEADS, &S.in, match_head, i, 0, 0, &cx, &cy), "head %d not found", i);
        hs_view_hit hit;
        hs_view_hit_test(&hit, p.c, HS_VIEW_HEADS, &S.in, cx, cy);
        char want[32];
        snprintf(want, sizeof want, "L%d.M%d.H%d", S.probe.heads[i].layer, S.probe.heads[i].mixer,
                 S.probe.heads[i].head);
        CHECK(strstr(hit.text, want), "hover '%.200s' lacks %.30s", hit.text, want);
    }
    pix_close(&p);
    synth_free(&S);
}
#endif

TEST(views_hit_tests_text_cells) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    double cx, cy;
    hs_text_grid g;
    CHECK(hs_text_grid_init(&g, 80, 24, HS_TEXT_UTF8, 256, 0) == 0, "grid");
    hs_canvas c;
    hs_canvas_text_init(&c, &g);
    for (int i = 0; i < S.probe.n_heads; i++)
        CHECK(find_region(&c, HS_VIEW_HEADS, &S.in, match_head, i, 0, 0, &cx, &cy), "text: head %d", i);
    CHECK(find_region(&c, HS_VIEW_NEEDLE, &S.in, match_needle, 1, 2, 4, &cx, &cy), "text: needle cell");
    CHECK(find_region(&c, HS_VIEW_TIDAL, &S.in, match_head, 0, 0, 0, &cx, &cy), "text: tidal head 0");
    double x, y, w, h;
    CHECK(hs_view_head_map_rect(&c, &S.in, &x, &y, &w, &h) && w >= 40 && h >= 12,
          "text: head map rect %gx%g", w, h);
    hs_text_grid_free(&g);
    synth_free(&S);
}

/* A model too big for one screen (24 layers x 16 heads): the heads view shows a window around
 * the selected head, says which part it shows, and the selected head stays hittable. */
TEST(views_many_heads_window) {
    char json[8192];
    int k = snprintf(json, sizeof json,
                     "{\"model_type\":\"hybrid\",\"vocab_size\":258,\"hidden_size\":64,"
                     "\"intermediate_size\":128,\"num_hidden_layers\":24,\"head_dim\":4,"
                     "\"train_context\":1024,\"layers\":[");
    for (int l = 0; l < 24; l++)
        k += snprintf(json + k, sizeof json - (size_t)k, "%s{\"mixers\":[{\"type\":\"%s\",\"num_heads\":16}]}",
                      l ? "," : "", l % 4 == 3 ? "nope" : "gdn");
    snprintf(json + k, sizeof json - (size_t)k, "]}");
    static hs_config cfg;
    char err[256];
    CHECK(hs_config_parse(&cfg, json, strlen(json), "big", err, sizeof err) == 0, "%.200s", err);
    hs_probe_result pr;
    const char *text = "abcdefghijklmnopqrstuvwxyz";
    char t[SYN_T + 1];
    for (int i = 0; i < SYN_T; i++) t[i] = text[i % 26];
    make_probe(&pr, &cfg, t, 0);
    CHECK(pr.n_heads == 384, "heads %d", pr.n_heads);
    hs_view_input in;
    memset(&in, 0, sizeof in);
    in.cfg = &cfg;
    in.probe = &pr;
    in.sel_head = 300;                                 /* layer 18, head 12 */
    in.sel_task = in.sel_length = in.sel_depth = -1;
    hs_text_grid g;
    CHECK(hs_text_grid_init(&g, 80, 24, HS_TEXT_UTF8, 256, 0) == 0, "grid");
    hs_canvas c;
    hs_canvas_text_init(&c, &g);
    hs_view_draw(&c, HS_VIEW_HEADS, &in);
    char *s = hs_text_grid_to_utf8(&g);
    int ok = strstr(s, "L18") && strstr(s, "/24 ");
    if (!ok) fprintf(stderr, "%s", s);
    free(s);
    CHECK(ok, "80x24: the window around layer 18 and the part shown (/24) expected");
    double cx, cy;
    CHECK(find_region(&c, HS_VIEW_HEADS, &in, match_head, 300, 0, 0, &cx, &cy), "selected head not hittable");
    hs_text_grid_free(&g);
#ifdef HS_HAVE_CAIRO
    const char *dir = getenv("HS_VIEWS_OUT");
    if (dir && dir[0]) {
        char path[1024];
        snprintf(path, sizeof path, "%s/heads-big.png", dir);
        CHECK(hs_export_view(path, 960, 600, 1, 0, HS_VIEW_HEADS, &in, err, sizeof err) == 0, "%.200s", err);
        snprintf(path, sizeof path, "%s/tidal-big.png", dir);
        CHECK(hs_export_view(path, 960, 600, 1, 1, HS_VIEW_TIDAL, &in, err, sizeof err) == 0, "%.200s", err);
    }
#endif
    /* the tidal view copes with 384 points on cells */
    CHECK(hs_text_grid_init(&g, 80, 24, HS_TEXT_ASCII, 8, 1) == 0, "grid");
    hs_canvas_text_init(&c, &g);
    hs_view_draw(&c, HS_VIEW_TIDAL, &in);
    hs_text_grid_free(&g);
    free_probe(&pr);
}

/* Odd canvas sizes never crash or write outside the grid (ASan checks the latter): every view,
 * the chrome and the help overlay from 1x1 cells up, and tiny pixel canvases. */
TEST(views_odd_sizes) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    static const int sizes[][2] = { { 1, 1 }, { 2, 3 }, { 10, 5 }, { 40, 12 }, { 79, 23 }, { 250, 80 } };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        hs_text_grid g;
        CHECK(hs_text_grid_init(&g, sizes[k][0], sizes[k][1], HS_TEXT_UTF8, 8, 1) == 0, "grid");
        hs_canvas c;
        hs_canvas_text_init(&c, &g);
        for (int v = 0; v < HS_VIEW_COUNT; v++) {
            hs_text_grid_clear(&g);
            hs_view_draw(&c, (hs_view_kind)v, &S.in);
            hs_view_hit hit;
            hs_view_hit_test(&hit, &c, (hs_view_kind)v, &S.in, c.width / 2, c.height / 2);
        }
        hs_chrome_input ci = { "m", "cpu", "off", NULL, -1, "saved to /tmp/x.png", HS_VIEW_HEADS };
        hs_chrome_draw(&c, &ci);
        hs_help_overlay_draw(&c);
        hs_text_grid_free(&g);
    }
    CHECK(hs_text_grid_init(&(hs_text_grid){ 0 }, 0, 5, HS_TEXT_UTF8, 8, 0) == -1, "0 columns accepted");
#ifdef HS_HAVE_CAIRO
    static const int px[][2] = { { 16, 16 }, { 120, 60 }, { 300, 200 } };
    for (size_t k = 0; k < sizeof px / sizeof px[0]; k++)
        for (int v = 0; v < HS_VIEW_COUNT; v++) {
            pixcanvas p;
            CHECK(pix_open(&p, px[k][0], px[k][1], 0) == 0, "canvas");
            hs_view_draw(p.c, (hs_view_kind)v, &S.in);
            hs_help_overlay_draw(p.c);
            pix_close(&p);
        }
#endif
    synth_free(&S);
}

/* The selected needle cell shows the needle sentence and the question from the prompt's own
 * tokens when they were kept, and the model's answer with its verdict. */
TEST(views_needle_panel_uses_prompt_tokens) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    const char *prompt = "noise noise. One of the special magic numbers for quiet-harbor is: 4817305. "
                         "more noise.\nWhat is the special magic number for quiet-harbor mentioned in "
                         "the provided text? The special magic number for quiet-harbor mentioned in the "
                         "provided text is";
    int n = (int)strlen(prompt);
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)(n + 1));
    tok[0] = 256;
    for (int i = 0; i < n; i++) tok[i + 1] = (unsigned char)prompt[i];
    size_t ci = (0 * 4 + 0) * 5 + 2;                   /* the selected cell */
    hs_needle_sample *s = &S.niah.shown[ci];
    s->tokens = tok;
    s->length = n + 1;
    s->needle_start = 1 + (int)(strstr(prompt, "One of") - prompt);
    s->needle_end = 1 + (int)(strstr(prompt, "4817305.") - prompt) + 8;
    s->probe_start = 1 + (int)(strstr(prompt, "What is") - prompt);
    s->probe_end = n + 1;
    hs_text_grid g;
    CHECK(hs_text_grid_init(&g, 160, 30, HS_TEXT_UTF8, 256, 0) == 0, "grid");
    hs_canvas c;
    hs_canvas_text_init(&c, &g);
    hs_view_draw(&c, HS_VIEW_NEEDLE, &S.in);
    char *txt = hs_text_grid_to_utf8(&g);
    int ok = strstr(txt, "needle: One of the special magic numbers for quiet-harbor is: 4817305.") &&
             strstr(txt, "question: What is the special magic number for quiet-harbor mentioned") &&
             strstr(txt, "answer: 4817305  [correct]");
    if (!ok) fprintf(stderr, "%s", txt);
    free(txt);
    hs_text_grid_free(&g);
    s->tokens = NULL;
    free(tok);
    synth_free(&S);
    CHECK(ok, "needle panel lacks the prompt's sentence, question or answer");
}

/* Maps without a probe (the probe is still running) still draw; maps left over from another
 * model (head refs differ) are not drawn as this model's. */
TEST(views_heads_maps_only_and_stale_maps) {
    synth S;
    CHECK(synth_init(&S) == 0, "config");
    hs_view_input in = S.in;
    in.probe = NULL;
    in.ghost = NULL;
    hs_text_grid g;
    CHECK(hs_text_grid_init(&g, 100, 30, HS_TEXT_UTF8, 256, 0) == 0, "grid");
    hs_canvas c;
    hs_canvas_text_init(&c, &g);
    hs_view_draw(&c, HS_VIEW_HEADS, &in);
    char *txt = hs_text_grid_to_utf8(&g);
    int ok = strstr(txt, "GLA h0") && strstr(txt, "NoPE h0");
    free(txt);
    CHECK(ok, "maps-only heads view lacks its tags");
    hs_view_draw(&c, HS_VIEW_HEAD, &in);
    /* stale: every map claims to be layer 9 */
    for (int i = 0; i < S.n_maps; i++) S.maps[i].head.layer = 9;
    hs_text_grid_clear(&g);
    hs_view_draw(&c, HS_VIEW_HEADS, &S.in);
    int halfblocks = 0;
    for (int i = 0; i < g.cols * g.rows; i++) halfblocks += g.cells[i].ch == 0x2580;
    hs_text_grid_free(&g);
    synth_free(&S);
    CHECK(halfblocks == 0, "stale maps drawn (%d half blocks)", halfblocks);
}
