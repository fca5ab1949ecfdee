#!/usr/bin/env python3
"""Builds assets/prose/*.txt: public-domain prose, one sentence per line, a blank line
between paragraphs, ASCII only.

Usage: make_prose.py JANEAUSTENR_DATA_PREFIX KJV_DIR OUT_DIR
  JANEAUSTENR_DATA_PREFIX: .../janeaustenr/data/Rdata from Debian's r-cran-janeaustenr
      (extract the .deb with `dpkg-deb -x`; no R needed, rdata.py reads the database).
  KJV_DIR: a folder with BOOK.raw files written by Debian's `bible` program
      (package bible-kjv + bible-kjv-text): `bible -f "Genesis 1:1-99:999" > Genesis.raw`.

Rules (the C generator and the Python recipe read the output, not these rules):
- paragraphs: blocks of non-empty lines; lines joined with one space; runs of whitespace
  collapsed; the '_' italics markers removed;
- dropped paragraphs: everything before the first chapter heading, chapter/volume
  headings, and paragraphs without a lowercase letter (titles, "THE END", "FINIS");
- sentences: split after '.', '!' or '?' (and any closing quotes, parentheses) followed by
  a space and then an uppercase letter or an opening quote, unless the word ending there is
  a known abbreviation (Mr. Mrs. Dr. St. ...) or a single capital initial.
"""
import os, re, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rdata

AUSTEN = [('prideprejudice', 'austen-pride-and-prejudice.txt'),
          ('persuasion', 'austen-persuasion.txt'),
          ('northangerabbey', 'austen-northanger-abbey.txt'),
          ('sensesensibility', 'austen-sense-and-sensibility.txt')]
KJV_BOOKS = ['Genesis', 'Ruth', 'Esther', 'Jonah', 'Ecclesiastes']
ABBREV = {'Mr', 'Mrs', 'Dr', 'St', 'Messrs', 'Col', 'Capt', 'Gen', 'Lt', 'Rev', 'Esq',
          'viz', 'Mme', 'Mlle', 'No', 'vol', 'ch', 'i.e', 'e.g', 'etc'}
HEADING = re.compile(r'^(chapter|volume|book)\b', re.I)
SPLIT = re.compile(r'([.!?]["\')\]]*)\s+(?=["\'(]?[A-Z])')

def sentences(par):
    out, start = [], 0
    for m in SPLIT.finditer(par):
        end = m.end(1)
        word = par[start:m.start()].split(' ')[-1].lstrip('"\'(')
        if word in ABBREV or re.fullmatch(r'[A-Z]', word):
            continue
        out.append(par[start:end].strip()); start = m.end()
    tail = par[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]

def clean(par):
    par = par.replace('_', '')
    par = par.encode('ascii', 'ignore').decode()
    return re.sub(r'\s+', ' ', par).strip()

def write(path, paragraphs):
    with open(path, 'w') as f:
        f.write('\n\n'.join('\n'.join(sentences(p)) for p in paragraphs) + '\n')

def austen_paragraphs(lines):
    pars, cur, started = [], [], False
    for line in lines + ['']:
        if line.strip():
            cur.append(line); continue
        if cur:
            p = clean(' '.join(cur)); cur = []
            if HEADING.match(p):
                started = True; continue
            if started and re.search('[a-z]', p):
                pars.append(p)
    return pars

def main():
    prefix, kjv_dir, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    idx, rdb = rdata.load(prefix)
    names = idx['v'][0]['attr'][0][1]
    offs = dict(zip(names, idx['v'][0]['v']))
    for key, fname in AUSTEN:
        r = rdata.R(rdata.blob(rdb, *offs[key])); r.header(); v = r.item()
        v = v['v'] if isinstance(v, dict) else v
        write(os.path.join(out, fname), austen_paragraphs([x or '' for x in v]))
    pars = []
    for book in KJV_BOOKS:
        chapters = {}
        for line in open(os.path.join(kjv_dir, book + '.raw')):
            m = re.match(r'^\S+?(\d+):(\d+) (.*)$', line.rstrip('\n'))
            if m:
                chapters.setdefault(int(m.group(1)), []).append(m.group(3))
        pars += [clean(' '.join(vs)) for _, vs in sorted(chapters.items())]
    write(os.path.join(out, 'kjv-selections.txt'), pars)

if __name__ == '__main__':
    main()
