#!/usr/bin/env bash
# session 39 (for call C): abtest/sk2, the shipped decode picks beside the stream-K builds whose working CTAs
# leave the others before pdl_wait: first in the launch (the built *_sk) and last (DEC_SK_LAST 1, *_sk_last)
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/sk2
for k in dec_32x128_wg12_c2_sk dec_16x128_wg12_sk; do
  python3 scripts/variant.py --define F4GEMM_DEC_SK_LAST=1 abtest/sk2 f4gemm_sm90a_$k last | tail -1
done
also=""; for k in dec_32x128_wg12_c2_sk dec_16x128_wg12_sk dec_32x128_wg12_c2 dec_16x128_wg12 dec_16x80_w12; do
  also="$also --also f4gemm_sm90a_$k"; done
python3 scripts/variant.py abtest/sk2 f4gemm_sm90a_dec_16x80_w12 b0 --with-built build $also | tail -1
