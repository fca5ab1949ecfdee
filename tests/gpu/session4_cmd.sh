set -u
(cd sample-models/recipe && timeout 150 python3 bench_step.py --reps 15 > $OUT/bench_step.log 2>&1; echo "bench_step rc=$?") 
cat $OUT/bench_step.log
export PARITY_ONLY="probe|chunk gla T|wgmma swa64 \(|chunk gdn64 T"
timeout 300 bash tests/gpu/device_run.sh graph parity > $OUT/dr.log 2>&1; echo "device_run rc=$?"
grep -v "^ *knob acts" $OUT/dr.log | tail -40
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:/tmp/deps/usr/lib/x86_64-linux-gnu/openblas-pthread:${LD_LIBRARY_PATH:-}
for t in gla gdn swa; do timeout 60 build/hs_gpu_bench model --preset 376m --efficient $t --lengths 65536 --reps 2 --analysis 64 2>&1 | tail -3; done | tee $OUT/analysis.log
timeout 100 bash tests/gpu/kcheck_linattn.sh build > $OUT/la.log 2>&1; echo "kcheck_linattn rc=$?"; tail -25 $OUT/la.log
