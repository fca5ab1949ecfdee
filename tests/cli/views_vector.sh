#!/usr/bin/env bash
# Every view exported as SVG and PDF (from synthetic results, by the unit test
# views_export_files) must parse: SVG with python3's xml.etree, PDF by rendering it with
# pdftoppm (poppler-utils). Skips (77) when python3 or pdftoppm is missing.
set -u
BUILD=${HS_BUILD:-build}
tests="$HS_ROOT/$BUILD/hs_tests"
[ -x "$tests" ] || { echo "no $tests"; exit 1; }
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
command -v pdftoppm >/dev/null || { echo "skip: pdftoppm (poppler-utils) not installed"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
HS_VIEWS_OUT="$out" "$tests" views_export_files > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
grep -q "^ok   views_export_files" "$out/log" || { echo "skip: built without cairo (no export)"; exit 77; }
n_svg=$(ls "$out"/*.svg 2>/dev/null | wc -l)
n_pdf=$(ls "$out"/*.pdf 2>/dev/null | wc -l)
[ "$n_svg" -eq 12 ] && [ "$n_pdf" -eq 12 ] || { echo "expected 12 svg + 12 pdf, got $n_svg + $n_pdf"; exit 1; }
python3 - "$out" <<'PY' || exit 1
import glob, sys, xml.etree.ElementTree as ET
for f in sorted(glob.glob(sys.argv[1] + "/*.svg")):
    root = ET.parse(f).getroot()
    assert root.tag.endswith("svg"), f + ": root is " + root.tag
    w, h = root.get("width", ""), root.get("height", "")
    assert w.startswith("960") and h.startswith("600"), f + ": size " + w + " x " + h
    # heatmaps/bars are embedded images; text stays vector (glyphs, not one big raster)
    n_img = sum(1 for e in root.iter() if e.tag.endswith("image"))
    n_vec = sum(1 for e in root.iter() if e.tag.endswith("path") or e.tag.endswith("use"))
    assert n_vec > 50, f + ": only %d vector elements" % n_vec
    if "/heads-" in f or "/head-" in f:
        assert n_img >= 1, f + ": heatmap not embedded as an image"
print("svg ok")
PY
for f in "$out"/*.pdf; do
    pdftoppm -r 20 -png -singlefile "$f" "$out/render" 2>"$out/err" || { echo "pdftoppm failed on $f: $(cat "$out/err")"; exit 1; }
    [ -s "$out/render.png" ] || { echo "pdftoppm rendered nothing for $f"; exit 1; }
    rm -f "$out/render.png"
done
echo "pdf ok"
