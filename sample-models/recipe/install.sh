#!/bin/bash
# Installs what device_train.sh brought back: checkpoints into sample-models/, training logs into
# sample-models/recipe/logs/, families.json for the models present, and the parity fixtures.
#   bash sample-models/recipe/install.sh DEVICE_FILES_DIR [PYTHON_WITH_TORCH]
# DEVICE_FILES_DIR is a call's files from the device (models*.tar.gz, logs.tar.gz) or a call
# unpacked under .train-state/callN (NAME/model.safetensors + config.json, logs/).
# Env: ONLY="NAME..." installs only those models; CALL=N appends each log to logs/NAME.log under
# a "# device call N (date): settings" header (the settings from its config.json) instead of
# replacing it (lines that the installed log already ends with are not repeated: a warm
# machine's log holds its earlier calls' lines too); FRESH=1 with CALL starts each log anew (the
# first call of a new run);
# NO_FIXTURES=1 skips the parity fixtures (installing several calls in a row: the last one
# writes them). LOGS_ONLY=1 (with CALL) appends a call's logs and touches nothing else: for the
# calls of a run whose weights were not kept, DEVICE_FILES_DIR then needs only NAME/config.json
# and logs/ (as keep_train_state.sh keeps them).
set -eu
src=$1; py=${2:-python3}
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/sample-models/recipe"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ls "$src"/models*.tar.gz >/dev/null 2>&1; then
  for f in "$src"/models*.tar.gz; do tar xzf "$f" -C "$tmp"; done
  tar xzf "$src/logs.tar.gz" -C "$tmp"
elif ls "$src"/*/model.safetensors >/dev/null 2>&1 && [ -d "$src/logs" ]; then
  for d in "$src"/*/; do [ -f "$d/model.safetensors" ] && cp -r "$d" "$tmp/"; done
  cp "$src"/logs/* "$tmp/"
elif [ -n "${LOGS_ONLY:-}" ] && ls "$src"/*/config.json >/dev/null 2>&1 && [ -d "$src/logs" ]; then
  for d in "$src"/*/; do [ -f "$d/config.json" ] && cp -r "$d" "$tmp/"; done
  cp "$src"/logs/* "$tmp/"
else
  echo "install.sh: $src: neither models*.tar.gz nor NAME/model.safetensors with logs/" >&2; exit 1
fi
# the members' compiled kernels, for the next training call's carry (.compile-cache is ignored)
if [ -f "$src/compile_cache.tar.gz" ]; then
  mkdir -p "$root/.compile-cache" && cp "$src/compile_cache.tar.gz" "$root/.compile-cache/"
  echo "compile cache kept in .compile-cache/ (name it in the next training call's carry)"
fi
[ -n "${LOGS_ONLY:-}" ] && [ -z "${CALL:-}" ] && { echo "install.sh: LOGS_ONLY needs CALL=N" >&2; exit 2; }
present=""
for d in "$tmp"/*/; do
  [ -n "${LOGS_ONLY:-}" ] && break
  n=$(basename "$d")
  [ -f "$d/model.safetensors" ] || continue
  [ -n "${ONLY:-}" ] && case " $ONLY " in *" $n "*) ;; *) continue ;; esac
  rm -rf "$root/sample-models/$n"
  cp -r "$d" "$root/sample-models/$n"
  present="$present $n"
done
# families.json lists every model now in sample-models/, not only this call's
present=""
for d in "$root"/sample-models/*/; do [ -f "$d/model.safetensors" ] && present="$present $(basename "$d")"; done
mkdir -p "$here/logs"
for f in "$tmp"/*.log; do
  [ -f "$f" ] || continue
  n=$(basename "$f" .log)
  [ -d "$tmp/$n" ] || continue                       # dmon.log and the like
  [ -n "${ONLY:-}" ] && case " $ONLY " in *" $n "*) ;; *) continue ;; esac
  if [ -n "${CALL:-}" ]; then
    [ -n "${FRESH:-}" ] && : > "$here/logs/$n.log"
    "$py" - "$tmp/$n/config.json" "$CALL" >> "$here/logs/$n.log" <<'PY'
import json, sys, time
t = json.load(open(sys.argv[1]))["training"]
d = t.get("data", {})
parts = [t["init"]] if t.get("init") else []
parts += [f"pace {t.get('pace')}", f"lr {t['lr']} {t['schedule']}", f"warmup {t['warmup']}",
          f"p-needle {d.get('p_needle')}", f"p-copy {d.get('p_copy')}", f"p-kv {d.get('p_kv')}",
          f"{t['steps']} steps in {t['wall_seconds']} s"]
if t.get("qk_norm_cap"):
    parts.insert(-1, f"q/k norm cap {t['qk_norm_cap']}")
if t.get("qk_bilinear_cap"):
    parts.insert(-1, f"logit form cap {t['qk_bilinear_cap']}")
print(f"# device call {sys.argv[2]} ({time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, installed): " + ", ".join(parts))
PY
    # a call on a warm machine appends to the log of the calls before it on that machine
    # (train.py opens NAME.log for appending): only the lines after those already installed go in
    "$py" - "$here/logs/$n.log" "$f" >> "$here/logs/$n.log" <<'PY'
import sys
old = [l for l in open(sys.argv[1]).read().splitlines() if not l.startswith("# device call ")]
new = open(sys.argv[2]).read().splitlines()
k = next((k for k in range(min(len(old), len(new)), 0, -1) if old[-k:] == new[:k]), 0)
sys.stdout.write("".join(l + "\n" for l in new[k:]))
PY
  else
    cp "$f" "$here/logs/"
  fi
  [ -f "$tmp/$n.eval.json" ] && cp "$tmp/$n.eval.json" "$here/logs/"
done
[ -n "${LOGS_ONLY:-}" ] && { echo "call $CALL: logs appended (LOGS_ONLY)"; exit 0; }
"$py" - "$root/sample-models/families.json" $present <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(sys.argv[1]), "recipe"))
import family
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(family.families_json(set(sys.argv[2:])), f, indent=1)
    f.write("\n")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
PY
[ -n "${NO_FIXTURES:-}" ] && { echo "fixtures not written (NO_FIXTURES)"; exit 0; }
only=$(echo ${ONLY:-} | tr ' ' ',')
"$py" "$here/fixtures.py" --models "$root/sample-models" --assets "$root/assets" \
  --out "$root/tests/fixtures" --tiny "$root/tests/fixtures/tiny-mix" ${only:+--only "$only"}
du -sh "$root/sample-models" "$root/tests/fixtures"
