/* What one block of the tensor-core attention kernels covers (attention_fa2_body.cuh,
 * attention_wg_body.cuh, attention_wgt_body.cuh; bm query rows a block, bn keys a tile): query
 * tile blockIdx.x counted from the end (the longest causal rows start first, which shortens the
 * tail), head blockIdx.y and its kv head, key tiles [j_first, j_end) (causal, and the window's
 * first). Written against the includer's FA2_FN, fa2_bid_x and fa2_bid_y. */
#ifndef HS_ATTENTION_SPAN_CUH
#define HS_ATTENTION_SPAN_CUH

struct fa2_span { int q0, h, kvh, q_last, j_first, j_end; };

FA2_FN fa2_span fa2_span_make(int T, int H, int Hkv, int window, int bm, int bn) {
    fa2_span s;
    const int n_qt = (T + bm - 1) / bm;
    s.q0 = (n_qt - 1 - fa2_bid_x()) * bm;
    s.h = fa2_bid_y();
    s.kvh = s.h / (H / Hkv);
    s.q_last = (T < s.q0 + bm ? T : s.q0 + bm) - 1;
    s.j_first = window > 0 && s.q0 - window + 1 > 0 ? (s.q0 - window + 1) / bn : 0;
    s.j_end = s.q_last / bn + 1;
    return s;
}

#endif
