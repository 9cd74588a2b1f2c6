#!/usr/bin/env bash
# Off-device (needs dec_early_start.cu.diff applied; measured slower and not kept, PERF.md entry 20): the dec kernels with the early start (dec_fill before the start-up's scan completes, PERF.md
# entry 20) built from the working tree's sm90_mxfp4_gemm_dec.cu as v_early_*, beside the shipped dec and ws
# frag16s cubins of build/ (built from the committed source), into build/var33 with its own manifest.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
O=build/var33; rm -rf $O; mkdir -p $O
echo "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_layout,max_m" > $O/f4gemm_bf16_per1x32Fp4.csv
# name:R:warps:min_blocks:stages (the shipped configs, kernels/sm90a/CMakeLists.txt)
CFGS=(
  "v_early_m2:4:8:2:2"
  "v_early_32m2:2:8:2:3"
  "v_early_w16:4:16:1:2"
)
for c in "${CFGS[@]}"; do
  IFS=: read -r n r w mb st <<< "$c"
  name=f4gemm_sm90a_$n
  threads=$((32 * w)); tn=$((16 * r))
  red=$((w * 16 * (tn + 4) * 4)); ring=$((st * w * (r * 1088 + 16 * 80 + 64 + 8)))
  [ $red -lt 17920 ] && red=17920; [ $red -lt $ring ] && red=$ring
  smem=$((red + 8 * (16 + tn) + 32))
  echo "16,$tn,0,0,$name,$name.cubin,sm_90a,$threads,$smem,sm90v1,frag16s,plain," >> $O/f4gemm_bf16_per1x32Fp4.csv
  nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Iinclude -Ikernels/sm90a -Xptxas -v \
    -DF4GEMM_DEC_R=$r -DF4GEMM_DEC_WARPS=$w -DF4GEMM_MIN_BLOCKS=$mb -DF4GEMM_DEC_STAGES=$st \
    -DF4GEMM_KNL_NAME=$name -DF4GEMM_SMEM_BYTES=$smem -DF4GEMM_THREADS=$threads \
    -cubin -o $O/$name.cubin kernels/sm90a/sm90_mxfp4_gemm_dec.cu 2>&1 | grep -oE "Used [0-9]+ registers|[0-9]+ bytes spill stores" | sort -u | tr '\n' ' '
  echo " $name smem $smem"
done
for k in dec_16x64_m2 dec_16x64_w16 dec_16x32_m2 ws_swap_16x128_fs; do
  cp build/kernels/sm90a/f4gemm_sm90a_$k.cubin $O/
  grep ",f4gemm_sm90a_$k," build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv >> $O/f4gemm_bf16_per1x32Fp4.csv
done
