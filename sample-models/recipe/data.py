"""Training data: byte tokens (spec section 5) from the repo's assets/ only.

Needle prompts follow assets/NEEDLE.md byte for byte (same splitmix64 stream, same fitting
rules), so `needle_sample(task, L, D, seed)` is the sample `hybridscope niah` builds for the
same (task, L, D, seed). Training draws (task, L, D, seed) from its own stream.

A training row is ROW = L0 + 32 tokens:
  - with probability p_needle: [BOS] prompt(L tokens incl. BOS) " {value}." [EOS], then
    [BOS] + prose to the end of the row. L = L0 with probability p_full, else uniform in
    [smallest valid L, L0]; depth D uniform in [0, 100]; task uniform over SK1/SK2/SK3.
    The 32 spare tokens keep the answer of an L0-token prompt inside the trained window.
  - otherwise [BOS] + ROW-1 bytes of the prose stream (NEEDLE.md section 7) from a random
    offset in its first 90% (the last 10% is held out for perplexity).
Per-token loss weights: 1, and `answer_weight` on the value's tokens after the prompt.
"""
import math
import os
import random

M64 = 0xFFFFFFFFFFFFFFFF
BOS, EOS = 256, 257
SK1, SK2, SK3 = 1, 2, 3
TASK_NAMES = {SK1: "sk1", SK2: "sk2", SK3: "sk3"}

NOISE = ["The grass is green.", "The sky is blue.", "The sun is yellow.", "Here we go.",
         "There and back again."]
PREFIX = ("A special magic number is hidden within the following text. Make sure to memorize "
          "it. I will quiz you about the number afterwards.\n")
SUFFIX = ("\nWhat is the special magic number for {key} mentioned in the provided text? The "
          "special magic number for {key} mentioned in the provided text is")
NEEDLE = "One of the special magic numbers for {key} is: {value}."
# kv rows (Mixture.kv_row) ask with the suffix's closing sentence alone
KV_QUESTION = "\n" + SUFFIX.split("? ", 1)[1]


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class SplitMix:
    def __init__(self, state):
        self.state = state & M64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        return mix(self.state)

    def below(self, n):
        return self.next() % n


def depth_milli(D):
    x = D * 1000.0
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


class Assets:
    def __init__(self, root):
        pdir = os.path.join(root, "prose")
        names = sorted(os.listdir(pdir), key=lambda s: s.encode())
        names = [n for n in names if n.endswith(".txt")]
        self.sentences = []
        files = []
        for n in names:
            with open(os.path.join(pdir, n), "rb") as f:
                raw = f.read().decode("ascii")
            lines = [ln.rstrip("\r") for ln in raw.split("\n")]
            self.sentences += [ln for ln in lines if ln != ""]
            paras, cur = [], []
            for ln in lines:
                if ln == "":
                    if cur:
                        paras.append(" ".join(cur))
                    cur = []
                else:
                    cur.append(ln)
            if cur:
                paras.append(" ".join(cur))
            files.append("\n".join(paras))
        self.stream = "\n".join(files).encode()
        with open(os.path.join(root, "words", "adjectives.txt")) as f:
            self.adjectives = [w.strip() for w in f if w.strip()]
        with open(os.path.join(root, "words", "nouns.txt")) as f:
            self.nouns = [w.strip() for w in f if w.strip()]
        self.train_end = int(len(self.stream) * 0.9)

    def heldout(self):
        return self.stream[self.train_end:]


def texts(task):
    if task == SK3:
        return (PREFIX.replace("number", "uuid"), SUFFIX.replace("number", "uuid"),
                NEEDLE.replace("numbers", "uuids"))
    return PREFIX, SUFFIX, NEEDLE


def min_length(assets, task):
    """Smallest valid L: the longest key and the longest value fit with an empty filler."""
    pre, suf, ndl = texts(task)
    key = max(assets.adjectives, key=len) + "-" + max(assets.nouns, key=len)
    vlen = 36 if task == SK3 else 7
    value = "x" * vlen
    return 1 + len(pre) + len(suf.format(key=key)) + len(ndl.format(key=key, value=value))


def needle_sample(assets, task, L, D, seed):
    """One prompt per NEEDLE.md. Returns dict(text, value, key, span, needle, probe) or raises."""
    rng = SplitMix(mix(seed & M64))
    rng.state = mix(rng.state ^ task)
    rng.state = mix(rng.state ^ L)
    rng.state = mix(rng.state ^ (depth_milli(D) & M64))
    adj = assets.adjectives[rng.below(len(assets.adjectives))]
    noun = assets.nouns[rng.below(len(assets.nouns))]
    key = adj + "-" + noun

    def draw_value():
        if task == SK3:
            h = "%016x%016x" % (rng.next(), rng.next())
            return "-".join([h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]])
        return str(1000000 + rng.below(9000000))

    value = draw_value()
    start = 0 if task == SK1 else rng.below(len(assets.sentences))
    pre, suf_t, ndl_t = texts(task)
    suf = suf_t.format(key=key)
    h = L - 1 - len(pre) - len(suf)
    for _ in range(100):
        needle = ndl_t.format(key=key, value=value)
        if h < len(needle):
            raise ValueError(f"L={L} is too small for task {task}")
        Fb = h - len(needle) - 1
        if task == SK1:
            src = lambda i: NOISE[i % len(NOISE)]
        else:
            n_s = len(assets.sentences)
            src = lambda i: assets.sentences[(start + i) % n_s]
        pieces, J, i = [], 0, 0
        while True:
            s = src(i)
            fits = (len(s) <= Fb) if not pieces else (J + 1 + len(s) <= Fb)
            if not fits:
                break
            J = len(s) if not pieces else J + 1 + len(s)
            pieces.append(s)
            i += 1
        if Fb - J > 0:
            s = src(i)
            avail = Fb - J - 1 if pieces else Fb - J
            cut = 0
            for j, ch in enumerate(s):
                if j > avail:
                    break
                if ch == " ":
                    cut = j
            if cut > 0:
                pieces.append(s[:cut])
        J = len(" ".join(pieces))
        n = len(pieces)
        t = D / 100.0 * J
        best, best_d, off = 0, None, 0
        for bi in range(n + 1):
            off = len(" ".join(pieces[:bi]))
            dd = abs(off - t)
            if best_d is None or dd < best_d:
                best, best_d = bi, dd
        hay = " ".join(pieces[:best] + [needle] + pieces[best:])
        hay = hay + " " * (h - len(hay))
        text = pre + hay + suf
        if text.count(value) == 1:
            b = len(" ".join(pieces[:best]))
            ns = 1 + len(pre) + b + (1 if best > 0 else 0)
            ss = ns + needle.index(value)
            return {"text": text.encode(), "value": value, "key": key,
                    "needle": (ns, ns + len(needle)), "span": (ss, ss + len(value)),
                    "probe": (1 + len(pre) + h + 1, L)}
        value = draw_value()
    raise ValueError("no value occurs exactly once after 100 tries")


COPY_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


class Mixture:
    """Endless rows of ROW tokens with loss weights; deterministic from seed."""

    def __init__(self, assets, L0, seed, p_needle=0.6, p_full=0.3, answer_weight=5.0, p_copy=0.0,
                 copy_weight=2.0, copy_lengths=(8, 480), p_kv=0.0, copy_alphabet=COPY_ALPHABET):
        self.a, self.L0, self.row = assets, L0, L0 + 32
        self.seed = seed
        self.rng = random.Random(seed)
        self.p_needle, self.p_full, self.answer_weight = p_needle, p_full, answer_weight
        self.p_copy, self.copy_weight = p_copy, copy_weight
        self.p_kv = p_kv
        self.copy_lengths = copy_lengths
        self.copy_alphabet = copy_alphabet
        self.min_len = {t: min_length(assets, t) for t in (SK1, SK2, SK3)}

    def prose(self, n):
        off = self.rng.randrange(0, self.a.train_end - n)
        return list(self.a.stream[off:off + n])

    def copy_row(self):
        """Random strings each followed by " | " and the string again: the second copy is
        predictable only by looking back (an induction head), the mechanism needle answers
        need; models that had not found it answered every needle with one constant. String
        lengths are log-uniform in copy_lengths ([8, 480] by default), so the look-back
        distance ranges from a few tokens (within a swa window) to half the row (only a global
        head reaches it); a short range such as [8, 32] (nearly every character unique in its
        string) is the easier drill. A small copy_alphabet (e.g. "abcd") makes every character
        recur within a few positions, so only a match of several characters finds the place to
        copy from: a one-character look-back fails on these drills."""
        toks, w = [BOS], [1.0]
        while len(toks) < self.row:
            lo, hi = self.copy_lengths
            n = int(round(math.exp(self.rng.uniform(math.log(lo), math.log(hi)))))
            r = [ord(self.rng.choice(self.copy_alphabet)) for _ in range(n)]
            seg = r + list(b" | ")
            toks += seg + r + [ord("\n")]
            w += [1.0] * len(seg) + [self.copy_weight] * n + [1.0]
        return toks[:self.row], w[:self.row]

    def kv_group(self, pairs):
        """Tokens and weights of one group: the needles (0-2 noise sentences before each),
        then one question per key in a shuffled order with its answer."""
        ctx = []
        for key, value in pairs:
            ctx += [self.rng.choice(NOISE) for _ in range(self.rng.randint(0, 2))]
            ctx.append(NEEDLE.format(key=key, value=value))
        seg = list(" ".join(ctx).encode())
        sw = [1.0] * len(seg)
        order = pairs[:]
        self.rng.shuffle(order)
        for key, value in order:
            q = list(KV_QUESTION.format(key=key).encode())
            seg += q + list((" " + value + ".").encode())
            sw += [1.0] * len(q) + [1.0] + [self.answer_weight] * len(value) + [1.0]
        return seg + [ord("\n")], sw + [1.0]

    def kv_row(self):
        """Dense key-value recall in the needle's own sentences: groups of 2-12 needles
        ("One of the special magic numbers for KEY is: VALUE."), each group followed by one
        question per key in a shuffled order, answered with the value (weight answer_weight).
        A needle row carries one answer; this one carries ~6, at look-back distances of a few
        to hundreds of tokens, among distractor keys of the same form. Keys are distinct
        within a row; a group that does not fit the rest of the row is cut to fewer needles."""
        toks, w = [BOS], [1.0]
        used = set()
        while self.row - len(toks) > 200:
            pairs = []
            for _ in range(self.rng.randint(2, 12)):
                key = self.rng.choice(self.a.adjectives) + "-" + self.rng.choice(self.a.nouns)
                while key in used:
                    key = self.rng.choice(self.a.adjectives) + "-" + self.rng.choice(self.a.nouns)
                used.add(key)
                pairs.append((key, str(1000000 + self.rng.randrange(9000000))))
            while pairs:
                seg, sw = self.kv_group(pairs)
                if len(toks) + len(seg) <= self.row:
                    break
                pairs = pairs[:-1]
            if not pairs:
                break
            toks += seg
            w += sw
        rest = self.row - len(toks)
        if rest > 0:
            toks += [BOS] + self.prose(rest - 1)
            w += [1.0] * rest
        return toks[:self.row], w[:self.row]

    def at_step(self, k):
        """Draws the rows of global training step k from here on: a fresh generator seeded by
        (seed, k), so a step's rows are the same however a run is cut into phases and calls
        and whichever member draws them."""
        self.rng = random.Random(self.seed * 1_000_003 + k)

    def sample(self):
        """(tokens[ROW], weights[ROW]) for one row."""
        if self.p_kv and self.rng.random() < self.p_kv:
            return self.kv_row()
        if self.p_copy and self.rng.random() < self.p_copy:
            return self.copy_row()
        if self.rng.random() >= self.p_needle:
            toks = [BOS] + self.prose(self.row - 1)
            return toks, [1.0] * self.row
        task = self.rng.choice((SK1, SK2, SK3))
        if self.rng.random() < self.p_full:
            L = self.L0
        else:
            L = self.rng.randint(self.min_len[task], self.L0)
        D = self.rng.uniform(0.0, 100.0)
        seed = self.rng.getrandbits(63) | (1 << 62)
        s = needle_sample(self.a, task, L, D, seed)
        ans = (" " + s["value"] + ".").encode()
        toks = [BOS] + list(s["text"]) + list(ans) + [EOS]
        w = [1.0] * len(toks)
        for j in range(L + 1, L + 1 + len(s["value"])):     # the value (L counts the BOS)
            w[j] = self.answer_weight
        rest = self.row - len(toks)
        if rest > 0:
            toks += [BOS] + self.prose(rest - 1)
            w += [1.0] * rest
        return toks[:self.row], w[:self.row]

    def settings(self):
        return {"row_tokens": self.row, "p_needle": self.p_needle, "p_full_length": self.p_full,
                "answer_weight": self.answer_weight, "tasks": "sk1/sk2/sk3 uniform",
                "p_copy": self.p_copy,
                "p_kv": self.p_kv,
                "kv_rows": "groups of 2-12 needle sentences (0-2 noise sentences between), then one question "
                           "per key in shuffled order answered with the value (weight answer_weight); "
                           "drawn before copy rows",
                "copy_rows": f"random {'[0-9a-z]' if self.copy_alphabet == COPY_ALPHABET else repr(self.copy_alphabet)} strings, length log-uniform in {list(self.copy_lengths)}, ' | ', "
                             f"the string again (weight {self.copy_weight}); the rest of the row after p_copy: "
                             "needle with p_needle, else prose",
                "depth": "uniform [0, 100]",
                "prompt_length": f"L0 with p={self.p_full}, else uniform [min valid L, L0]",
                "prose": "NEEDLE.md section 7 stream, random windows from its first 90%"}
