#!/bin/sh
# Re-exports the README's screenshots from the shipped sample models (CPU engine, about a
# minute). Run from the repository root after `make`; HS=path picks another binary.
# The head shown is the NoPE head with the highest top-k hit rate on the probe prompt
# (`hybridscope probe gla-nope-lh --task sk1 --length 2k --depth 50 --seed 1 --csv`): choose
# it again when the models change.
set -e
hs=${HS:-./build/hybridscope}
head=${HEAD:-7.0.3}
o=docs/img
sz="--width 1100 --height 720 --device cpu"
$hs export --view heads gla-nope-lh --length 2k $sz --out $o/heads.png
$hs export --view tidal gla-nope-lh --length 4k --swla --log-scale --tide $sz --out $o/tidal.png
$hs export --view head gla-nope-lh --length 2k --head "$head" $sz --out $o/head.png
$hs export --view head gla-nope-lh --length 2k --head "$head" --zoom 2012:2048,1018:1066 $sz --out $o/head-zoom.png
$hs export --view needle rope-nope-hh-3-1 $sz --out $o/needle.png
$hs export --view needle rope-nope-hh-3-1 --rope-window --log-scale $sz --out $o/needle-eme.png
$hs export --view ppl rope-nope-hh-3-1 --rope-window --log-scale --tide $sz --out $o/ppl.png
$hs export --view model gla-nope-lh $sz --out $o/model.png
