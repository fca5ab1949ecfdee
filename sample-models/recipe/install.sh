#!/bin/bash
# Installs what device_train.sh brought back: checkpoints into sample-models/, training logs into
# sample-models/recipe/logs/, families.json for the models present, and the parity fixtures.
#   bash sample-models/recipe/install.sh DEVICE_FILES_DIR [PYTHON_WITH_TORCH]
set -eu
src=$1; py=${2:-python3}
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/sample-models/recipe"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$src"/models*.tar.gz; do tar xzf "$f" -C "$tmp"; done
tar xzf "$src/logs.tar.gz" -C "$tmp"
present=""
for d in "$tmp"/*/; do
  n=$(basename "$d")
  [ -f "$d/model.safetensors" ] || continue
  rm -rf "$root/sample-models/$n"
  cp -r "$d" "$root/sample-models/$n"
  present="$present $n"
done
# families.json lists every model now in sample-models/, not only this call's
present=""
for d in "$root"/sample-models/*/; do [ -f "$d/model.safetensors" ] && present="$present $(basename "$d")"; done
mkdir -p "$here/logs"
cp "$tmp"/*.log "$tmp"/*.eval.json "$here/logs/" 2>/dev/null || true
"$py" - "$root/sample-models/families.json" $present <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(sys.argv[1]), "recipe"))
import family
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(family.families_json(set(sys.argv[2:])), f, indent=1)
    f.write("\n")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
PY
"$py" "$here/fixtures.py" --models "$root/sample-models" --assets "$root/assets" \
  --out "$root/tests/fixtures" --tiny "$root/tests/fixtures/tiny-mix"
du -sh "$root/sample-models" "$root/tests/fixtures"
