#!/usr/bin/env bash
# Off-device: dec-kernel ring configs (R:warps:min_blocks:stages) built from the shipped source, beside the shipped
# dec and ws frag16s cubins, into build/var36 with its own manifest (run36, PERF.md entry 23).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
O=build/var36; rm -rf $O; mkdir -p $O
echo "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_layout,max_m" > $O/f4gemm_bf16_per1x32Fp4.csv
# name:R:warps:min_blocks:stages (formulas of kernels/sm90a/CMakeLists.txt)
CFGS=(
  "v_r4_w12_s3:4:12:1:3"
  "v_r4_w8_s4:4:8:1:4"
  "v_r2_w8_m2_s4:2:8:2:4"
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
