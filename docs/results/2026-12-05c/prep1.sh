#!/usr/bin/env bash
# session 33: builds abtest/c1 for call1.sh on the build machine (scripts/variant.py): the converter tiles at
# K_STAGE 256 in two ring depths each, beside copies of the shipped cv and A pre-pass tiles from build/
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/c1
b() { python3 scripts/variant.py abtest/c1 "$@" | tail -1; }
b f4gemm_sm90a_cv_64x80_p k2s3 K_STAGE=256 STAGES=3
b f4gemm_sm90a_cv_64x80_p k2s4 K_STAGE=256 STAGES=4
b f4gemm_sm90a_cv_64x80 k2s3 K_STAGE=256 STAGES=3
b f4gemm_sm90a_cv_64x80 k2s4 K_STAGE=256 STAGES=4
b f4gemm_sm90a_cv_128x80_p k2s2 K_STAGE=256 STAGES=2
b f4gemm_sm90a_cv_128x80_p k2s3 K_STAGE=256 STAGES=3
b f4gemm_sm90a_cv_128x80 k2s2 K_STAGE=256 STAGES=2
b f4gemm_sm90a_cv_128x80 k2s3 K_STAGE=256 STAGES=3
b f4gemm_sm90a_cv_64x128_p k2s3 K_STAGE=256 STAGES=3 CONV_SPAN=1
b f4gemm_sm90a_cv_64x128 k2s3 K_STAGE=256 STAGES=3 CONV_SPAN=1
b f4gemm_sm90a_cv_128x64_p k2s3 K_STAGE=256 STAGES=3 CONV_SPAN=1
b f4gemm_sm90a_cv_128x64 k2s3 K_STAGE=256 STAGES=3 CONV_SPAN=1
b f4gemm_sm90a_cv_64x64_p k2s4 K_STAGE=256 STAGES=4
b f4gemm_sm90a_cv_64x80_p b0 --with-built build $(for n in cv_64x80 cv_128x80_p cv_128x80 cv_64x128_p cv_64x128 \
    cv_128x64_p cv_128x64 cv_64x64_p pab_64x128_p pab_64x128 pab_128x128_p pab_128x128; do echo --also f4gemm_sm90a_$n; done)
# local memory per variant (the shipped cv_128x80 has 11 such instructions, cv_64x128_p 57)
for f in abtest/c1/*_k2s*.cubin; do echo "$f $(cuobjdump -sass "$f" | grep -cE 'STL|LDL') local loads/stores"; done
