#!/usr/bin/env bash
# session 33: builds abtest/c1 (the 64-row tiles, M = 33..64) and abtest/c2 (the 128-row tiles, M = 128..256) for
# call1.sh on the build machine (scripts/variant.py): the converter tiles at K_STAGE 256 in two ring depths each,
# beside copies of the shipped cv and A pre-pass tiles of each height from build/
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/c1 abtest/c2
b() { python3 scripts/variant.py "$@" | tail -1; }
also() { for n in "$@"; do echo --also "f4gemm_sm90a_$n"; done; }
# 64-row tiles
b abtest/c1 f4gemm_sm90a_cv_64x80_p k2s3 K_STAGE=256 STAGES=3
b abtest/c1 f4gemm_sm90a_cv_64x80_p k2s4 K_STAGE=256 STAGES=4
b abtest/c1 f4gemm_sm90a_cv_64x80 k2s3 K_STAGE=256 STAGES=3
b abtest/c1 f4gemm_sm90a_cv_64x80 k2s4 K_STAGE=256 STAGES=4
b abtest/c1 f4gemm_sm90a_cv_64x128_p k2s3 K_STAGE=256 STAGES=3 CONV_SPAN=1
b abtest/c1 f4gemm_sm90a_cv_64x128 k2s3 K_STAGE=256 STAGES=3 CONV_SPAN=1
b abtest/c1 f4gemm_sm90a_cv_64x64_p k2s4 K_STAGE=256 STAGES=4
b abtest/c1 f4gemm_sm90a_cv_64x80_p b0 --with-built build $(also cv_64x80 cv_64x128_p cv_64x128 cv_64x64_p \
    pab_64x128_p pab_64x128)
# 128-row tiles
b abtest/c2 f4gemm_sm90a_cv_128x80_p k2s2 K_STAGE=256 STAGES=2
b abtest/c2 f4gemm_sm90a_cv_128x80_p k2s3 K_STAGE=256 STAGES=3
b abtest/c2 f4gemm_sm90a_cv_128x80 k2s2 K_STAGE=256 STAGES=2
b abtest/c2 f4gemm_sm90a_cv_128x80 k2s3 K_STAGE=256 STAGES=3
b abtest/c2 f4gemm_sm90a_cv_128x64_p k2s3 K_STAGE=256 STAGES=3 CONV_SPAN=1
b abtest/c2 f4gemm_sm90a_cv_128x64 k2s3 K_STAGE=256 STAGES=3 CONV_SPAN=1
# entry 68's two-converter 128 x 128 tile (within 1-2% of pab_128x128_p at M = 128, 256), at 128 and at 256 K a stage
b abtest/c2 f4gemm_sm90a_cv_128x128_p c2 CONV_WG=2 REG_CONV=72 SPAN=1
b abtest/c2 f4gemm_sm90a_cv_128x128_p c2k2s2 CONV_WG=2 REG_CONV=72 SPAN=1 K_STAGE=256 STAGES=2
b abtest/c2 f4gemm_sm90a_cv_128x80_p b0 --with-built build $(also cv_128x80 cv_128x64_p cv_128x64 pab_128x128_p \
    pab_128x128)
# local memory per variant (the shipped cv_128x80 has 11 such instructions, cv_64x128_p 57)
for f in abtest/c*/*_k2s*.cubin abtest/c2/*_c2*.cubin; do
    echo "$f $(cuobjdump -sass "$f" | grep -cE 'STL|LDL') local loads/stores"
done
