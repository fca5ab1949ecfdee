#!/usr/bin/env python3
"""Builds assets/words/{adjectives,nouns}.txt from WordNet 3.0 (Debian package wordnet-base).

Usage: make_words.py WORDNET_DIR OUT_DIR   (WORDNET_DIR holds cntlist.rev, e.g.
/usr/share/wordnet after `apt-get install wordnet-base`).

Frequency = the summed SemCor tag counts of a lemma's senses in cntlist.rev (adjectives:
synset types 3 and 5; nouns: type 1). Keep lowercase a-z words of 3..10 letters, drop the
blocklists below (quantifiers, numbers, nationalities, religions, politics, violence, words
that read badly in "adjective-noun"), then take the N most frequent of each, written in
frequency order. A word never appears in both lists.
"""
import collections, os, re, sys

N_ADJ, N_NOUN = 300, 300
ADJ_BLOCK = set("""
one two three four five six seven eight nine ten eleven twelve fifteen twenty fifty hundred
million thousand first second third fourth fifth last next other such own all same more much
many few several some any each every another most less enough only whole half certain
possible important different various major general national social economic political
american jewish military federal christian english soviet russian catholic protestant greek
communist democratic religious moral sexual racial damn anti non called given like known
else very over out away far further latter former following previous additional pursuant
based located needed involved concerned related filled existing developed increased limited
marked wounded dead gay mad fat binomial vocational thermal dominant maximum minimum minimal
individual specific particular relative respective overall total entire ultimate greatest
greater largest larger smaller older earlier later lower upper inner top front real actual
true sure able unable likely aware afraid alone alive present available necessary
sufficient adequate latin german french british african european japanese chinese roman
indian irish italian spanish mexican negro jew black white left right best better worse
worst least own nuclear medical financial federal legal commercial industrial academic
statistical technical scientific psychological physical chemical mental sensitive killed
evil ill sick poor naked drunk stupid ugly tattered state down back outside mere
damned bacterial aqueous worth still gone thirty forty nineteenth highest female married
liberal clinical crazy required prepared past future main primary prior principal chief
""".split())
NOUN_BLOCK = set("""
person group man location time year way day thing people part one more much percent inch
mile pound jew god church religion war soldier regiment rifle gun enemy battle murder death
blood army shelter comrade lieutenant captain officer election government party policy tax
wage payment income sale cost price money employee manager anode particle radiation
allotment completion onset fig percent data section item list unit phase column factor
aspect element function procedure technique method analysis statement evidence basis
example term feature means sort kind type case fact result value level system rate amount
process condition situation problem question matter nothing program study experiment
experience trial effort need purpose period course use sense way position difference
increase change effect individual member subject object words text word number form
figure point end surface side hand head body face eye foot arm leg lip knee mouth tooth
shoulder finger heart muscle wife husband mother father son brother girl boy child kid
woman youth doctor patient student teacher author artist fellow audience community nation
society country state city town region south north east west court law rule trade industry
business company market office college school kitchen clothes bed dictionary newspaper
percent degree series site board team operation command concern charge claim return share
set rest act role order control plan view attitude stress pressure meaning manner size
quality importance strength length volume energy growth loss knowledge behavior behaviour
emotion feeling fear pain trouble difficulty attempt desire hope love dream memory thought
idea mind spirit reason history literature theory report research title chapter tradition
style tone image pattern shape model sample structure lack cause victory drug sex crime
prison police weapon bomb bullet gas disease cancer virus slave victim corpse staining
communism washington america england colonel polynomial chlorine serum tissue marketing
men guy fool sunday president operator percentage occurrence provision facility
component objective variation intensity portion fund bill authority
""".split())

def main():
    src, out = sys.argv[1], sys.argv[2]
    cnt = {'n': collections.Counter(), 'a': collections.Counter()}
    for line in open(os.path.join(src, 'cntlist.rev')):
        key, _, c = line.split()
        lemma, rest = key.split('%')
        pos = {'1': 'n', '3': 'a', '5': 'a'}.get(rest.split(':')[0])
        if pos:
            cnt[pos][lemma] += int(c)
    ok = lambda w: re.fullmatch(r'[a-z]{3,10}', w) is not None
    adj = [w for w, _ in cnt['a'].most_common() if ok(w) and w not in ADJ_BLOCK][:N_ADJ]
    adj_set = set(adj)
    noun = [w for w, _ in cnt['n'].most_common()
            if ok(w) and w not in NOUN_BLOCK and w not in adj_set
            and cnt['a'][w] * 4 < cnt['n'][w]][:N_NOUN]
    os.makedirs(out, exist_ok=True)
    for name, words in (('adjectives.txt', adj), ('nouns.txt', noun)):
        with open(os.path.join(out, name), 'w') as f:
            f.write('\n'.join(words) + '\n')
        print(name, len(words))

if __name__ == '__main__':
    main()
