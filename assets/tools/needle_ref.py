#!/usr/bin/env python3
"""Reference implementation of assets/NEEDLE.md in plain Python (no dependencies).

The training recipe can import it (`from needle_ref import Assets, generate`); the CLI test
tests/cli/niah_ppl.sh checks it against `hybridscope niah --show`.

    python3 needle_ref.py ASSETS_DIR TASK L DEPTH SEED   -> prints the sample as JSON
"""
import json, math, os, sys

M64 = 0xFFFFFFFFFFFFFFFF
NOISE = ["The grass is green.", "The sky is blue.", "The sun is yellow.", "Here we go.",
         "There and back again."]
TASKS = {"sk1": 1, "sk2": 2, "sk3": 3}
BOS = 256


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Rng:
    def __init__(self, state):
        self.state = state & M64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        return mix(self.state)

    def below(self, n):
        return self.next() % n


class Assets:
    def __init__(self, d):
        words = lambda f: [w for w in open(os.path.join(d, "words", f)).read().split("\n") if w.strip()]
        self.adjectives = [w.rstrip("\r") for w in words("adjectives.txt")]
        self.nouns = [w.rstrip("\r") for w in words("nouns.txt")]
        self.sentences = []
        pd = os.path.join(d, "prose")
        names = sorted((n for n in os.listdir(pd) if n.endswith(".txt") and len(n) >= 5),
                       key=lambda n: n.encode())
        for n in names:
            for line in open(os.path.join(pd, n), "rb").read().decode().split("\n"):
                line = line[:-1] if line.endswith("\r") else line
                if line:
                    self.sentences.append(line)


def texts(task, key, value):
    w = "uuid" if task == "sk3" else "number"
    prefix = ("A special magic %s is hidden within the following text. Make sure to memorize "
              "it. I will quiz you about the %s afterwards.\n" % (w, w))
    suffix = ("\nWhat is the special magic %s for %s mentioned in the provided text? The special "
              "magic %s for %s mentioned in the provided text is" % (w, key, w, key))
    needle = "One of the special magic %ss for %s is: %s." % (w, key, value) if value is not None else None
    return prefix, suffix, needle


def min_length(a, task):
    key = "x" * (max(map(len, a.adjectives)) + 1 + max(map(len, a.nouns)))
    value = "0" * (36 if task == "sk3" else 7)
    p, s, n = texts(task, key, value)
    return 1 + len(p) + len(s) + len(n)


def draw_value(task, r):
    if task == "sk3":
        h = "%016x%016x" % (r.next(), r.next())
        return "-".join((h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]))
    return str(1000000 + r.below(9000000))


def count_overlapping(text, v):
    n, i = 0, text.find(v)
    while i >= 0:
        n += 1
        i = text.find(v, i + 1)
    return n


def sentence_source(a, task, start):
    i = start
    while True:
        yield NOISE[i % 5] if task == "sk1" else a.sentences[i % len(a.sentences)]
        i += 1


def fill(src, F):
    pieces, J = [], 0
    while F > 0:
        s = next(src)
        need = J + 1 + len(s) if pieces else len(s)
        if need <= F:
            pieces.append(s); J = need
            continue
        if F - J > 0:
            avail = F - J - 1 if pieces else F - J
            cut = 0
            for i in range(1, min(len(s) - 1, avail) + 1):
                if s[i] == " ":
                    cut = i
            if cut > 0:
                J += (1 if pieces else 0) + cut
                pieces.append(s[:cut])
        break
    return pieces, J


def generate(a, task, L, D, seed):
    if L < min_length(a, task):
        raise ValueError("length %d is too small for %s" % (L, task))
    r = Rng(mix(seed & M64))
    r.state = mix(r.state ^ TASKS[task])
    r.state = mix(r.state ^ L)
    r.state = mix(r.state ^ int(math.floor(D * 1000.0 + 0.5)))
    key = a.adjectives[r.below(len(a.adjectives))] + "-" + a.nouns[r.below(len(a.nouns))]
    value = draw_value(task, r)
    start = 0 if task == "sk1" else r.below(len(a.sentences))
    prefix, suffix, _ = texts(task, key, None)
    h = L - 1 - len(prefix) - len(suffix)
    for attempt in range(100):
        if attempt:
            value = draw_value(task, r)
        needle = texts(task, key, value)[2]
        pieces, J = fill(sentence_source(a, task, start), h - len(needle) - 1)
        t = D / 100.0 * J
        best, best_d, b, offs = 0, abs(0.0 - t), 0, [0]
        for i in range(1, len(pieces) + 1):
            b += len(pieces[i - 1]) + (1 if i > 1 else 0)
            offs.append(b)
            d = abs(b - t)
            if d < best_d:
                best, best_d = i, d
        hay = " ".join(pieces[:best] + [needle] + pieces[best:])
        needle_off = offs[best] + (1 if best > 0 else 0)
        hay += " " * (h - len(hay))
        text = prefix + hay + suffix
        if count_overlapping(text, value) != 1:
            continue
        assert len(text) == L - 1
        ns = 1 + len(prefix) + needle_off
        ss = ns + needle.index(value)
        return {"task": task, "length": L, "depth": D, "seed": seed, "key": key, "value": value,
                "text": text, "tokens": [BOS] + list(text.encode()),
                "needle_start": ns, "needle_end": ns + len(needle),
                "span_start": ss, "span_end": ss + len(value),
                "probe_start": 1 + len(prefix) + h + 1, "probe_end": L}
    raise ValueError("no value occurring exactly once")


if __name__ == "__main__":
    d, task, L, D, seed = sys.argv[1:6]
    s = generate(Assets(d), task, int(L), float(D), int(seed))
    del s["tokens"]
    print(json.dumps(s))
