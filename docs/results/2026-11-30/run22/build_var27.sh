#!/usr/bin/env bash
# Off-device: the session-5 dec kernels (HEAD 5bde5e3's source) renamed v_old_*, beside this build's dec and
# ws frag16s kernels, into build/var27 (run27: same-process comparison of the early ring fill).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
O=build/var27; rm -rf $O; mkdir -p $O
git show 5bde5e3:kernels/sm90a/sm90_mxfp4_gemm_dec.cu > kernels/sm90a/.old_dec.cu
echo "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_layout,max_m" > $O/f4gemm_bf16_per1x32Fp4.csv
for c in "v_old_m2:4:8:2:2" "v_old_w16:4:16:1:2" "v_old_32m2:2:8:2:3"; do
  IFS=: read -r n r w mb st <<< "$c"
  name=f4gemm_sm90a_$n; threads=$((32 * w)); tn=$((16 * r))
  red=$((w * 16 * (tn + 4) * 4)); ring=$((st * w * (r * 1088 + 16 * 80 + 64 + 8)))
  [ $red -lt 17920 ] && red=17920; [ $red -lt $ring ] && red=$ring
  smem=$((red + 8 * (16 + tn) + 32))
  echo "16,$tn,0,0,$name,$name.cubin,sm_90a,$threads,$smem,sm90v1,frag16s,plain," >> $O/f4gemm_bf16_per1x32Fp4.csv
  nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Iinclude -Ikernels/sm90a \
    -DF4GEMM_DEC_R=$r -DF4GEMM_DEC_WARPS=$w -DF4GEMM_MIN_BLOCKS=$mb -DF4GEMM_DEC_STAGES=$st \
    -DF4GEMM_KNL_NAME=$name -DF4GEMM_SMEM_BYTES=$smem -DF4GEMM_THREADS=$threads \
    -cubin -o $O/$name.cubin kernels/sm90a/.old_dec.cu
done
rm kernels/sm90a/.old_dec.cu
for k in dec_16x64_m2 dec_16x64_w16 dec_16x32_m2 ws_swap_16x128_fs; do
  cp build/kernels/sm90a/f4gemm_sm90a_$k.cubin $O/
  grep ",f4gemm_sm90a_$k," build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv >> $O/f4gemm_bf16_per1x32Fp4.csv
done
