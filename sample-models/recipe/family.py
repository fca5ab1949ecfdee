"""The sample-model family: one layout spec per model, all sharing size, L0, data and steps.

Layout specs (the `--layout` argument of train.py):
  lh:TYPE:3:1   layer-wise hybrid, 8 layers: layers 3 and 7 are NoPE, the others TYPE
                (4 heads each).
  hh:TYPE:A:B   head-wise hybrid: every layer has TYPE and NoPE heads in the ratio A:B
                (4 heads: 3:1 -> 3+1, 1:1 -> 2+2, 1:3 -> 1+3).
  full:TYPE     every layer TYPE with 4 heads.
"""

HIDDEN = 160
HEAD_DIM = 40
HEADS = 4
INTERMEDIATE = 384
LAYERS = 8
L0 = 1024
SWA_WINDOW = 128

FAMILY = {
    "swa-nope-lh": "lh:swa:3:1",
    "gla-nope-lh": "lh:gla:3:1",
    "gdn-nope-lh": "lh:gdn:3:1",
    "gla-nope-hh-3-1": "hh:gla:3:1",
    "gla-nope-hh-1-1": "hh:gla:1:1",
    "gla-nope-hh-1-3": "hh:gla:1:3",
    "rope-nope-hh-3-1": "hh:rope:3:1",
    "rope-nope-hh-1-1": "hh:rope:1:1",
    "rope-nope-hh-1-3": "hh:rope:1:3",
    "rope-full": "full:rope",
    "nope-full": "full:nope",
}

DEFAULT_MODEL = "gla-nope-lh"


def mixer(typ, heads):
    m = {"type": typ, "num_heads": heads}
    if typ in ("rope", "swa"):
        m["rope_theta"] = 10000.0
    if typ == "swa":
        m["window"] = SWA_WINDOW
    if typ == "gla":
        m.update({"gate_low_rank_dim": 16, "gate_logit_normalizer": 16, "use_short_conv": False})
    if typ == "gdn":
        m.update({"use_short_conv": True, "conv_size": 4, "allow_neg_eigval": False})
    return m


def layers_for(spec):
    parts = spec.split(":")
    kind, typ = parts[0], parts[1]
    if kind == "full":
        return [{"mixers": [mixer(typ, HEADS)]} for _ in range(LAYERS)]
    a, b = int(parts[2]), int(parts[3])
    if kind == "lh":
        if (a, b) != (3, 1):
            raise ValueError("lh layouts here are 3:1")
        return [{"mixers": [mixer("nope" if i % 4 == 3 else typ, HEADS)]} for i in range(LAYERS)]
    if kind == "hh":
        if a < 1 or b < 1 or (HEADS * a) % (a + b):
            raise ValueError(f"hh ratio {a}:{b} does not split {HEADS} heads")
        na = HEADS * a // (a + b)
        return [{"mixers": [mixer(typ, na), mixer("nope", HEADS - na)]} for _ in range(LAYERS)]
    raise ValueError(f"bad layout spec {spec!r}")


def make_config(spec):
    layers = layers_for(spec)
    return {
        "model_type": "hybrid",
        "vocab_size": 258,
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": len(layers),
        "head_dim": HEAD_DIM,
        "norm_eps": 1e-6,
        "tie_word_embeddings": True,
        "train_context": L0,
        "tokenizer": {"type": "bytes", "bos_id": 256, "eos_id": 257},
        "layers": layers,
    }


def families_json(present=None):
    """sample-models/families.json: siblings grouped by efficient type and layout. With
    `present` (a set of names), members not in it and then empty families are left out."""
    groups = [
        ("swa-nope-lh", "swa", "LH", [("3:1", "swa-nope-lh")]),
        ("gla-nope-lh", "gla", "LH", [("3:1", "gla-nope-lh")]),
        ("gdn-nope-lh", "gdn", "LH", [("3:1", "gdn-nope-lh")]),
        ("gla-nope-hh", "gla", "HH", [("3:1", "gla-nope-hh-3-1"), ("1:1", "gla-nope-hh-1-1"),
                                      ("1:3", "gla-nope-hh-1-3")]),
        ("rope-nope-hh", "rope", "HH", [("3:1", "rope-nope-hh-3-1"), ("1:1", "rope-nope-hh-1-1"),
                                        ("1:3", "rope-nope-hh-1-3")]),
        ("rope-full", "rope", "full", [("1:0", "rope-full")]),
        ("nope-full", "nope", "full", [("0:1", "nope-full")]),
    ]
    fams = []
    for n, e, l, mem in groups:
        mem = [(r, m) for r, m in mem if present is None or m in present]
        if mem:
            fams.append({"name": n, "efficient": e, "layout": l,
                         "members": [{"ratio": r, "model": m} for r, m in mem]})
    default = DEFAULT_MODEL
    if present is not None and default not in present:
        default = next(m["model"] for f in fams for m in f["members"])
    return {"default": default, "families": fams}
