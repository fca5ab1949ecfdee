#!/usr/bin/env bash
# kcheck step (tests/gpu/device_run.sh): the chunked gla/gdn kernels against the verified
# recurrences on random inputs (tolerances in tests/gpu/la_check.cu), the gdn kernels in their
# staged and unstaged forms (gdn; gla's output kernel under SWLA). Exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/../.."
bin=$(bash tests/gpu/la_build.sh "${1:-build}") || { echo "la_check: build failed"; exit 1; }
timeout 120 "$bin" check || exit 1
# the unstaged forms (what devices with less shared memory than Hopper run)
echo "la_check with HS_CUDA_LA_STAGE=0:"
HS_CUDA_LA_STAGE=0 timeout 120 "$bin" check || exit 1
# the gla output kernel staged without its early cut-chunk products (what stage 2 replaced)
echo "la_check with HS_CUDA_LA_STAGE=1:"
HS_CUDA_LA_STAGE=1 timeout 120 "$bin" check || exit 1
# the gla output kernel's diagonal blocks pairwise (the default factors them where the decays allow)
echo "la_check with HS_CUDA_GLA_DIAG=pairwise:"
HS_CUDA_GLA_DIAG=pairwise timeout 120 "$bin" check || exit 1
# gla SWLA by state differences (overlap's default) and by the subtracting scan (exact's) for
# both modes: each form is checked in the mode it does not run by default too
echo "la_check with HS_CUDA_GLA_SWLA_DIFF=1:"
HS_CUDA_GLA_SWLA_DIFF=1 timeout 120 "$bin" check || exit 1
echo "la_check with HS_CUDA_GLA_SWLA_DIFF=0:"
HS_CUDA_GLA_SWLA_DIFF=0 timeout 120 "$bin" check || exit 1
# the gdn state pass in both widths for every case it runs (by default 8 columns a block only
# where 16 would leave SMs idle)
echo "la_check with HS_CUDA_GDN_BV=8:"
HS_CUDA_GDN_BV=8 timeout 120 "$bin" check || exit 1
echo "la_check with HS_CUDA_GDN_BV=16:"
HS_CUDA_GDN_BV=16 timeout 120 "$bin" check
