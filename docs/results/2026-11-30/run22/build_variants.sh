#!/usr/bin/env bash
# Off-device: ws-kernel variants with frag16s R (R_BITPLANE=2) into build/var22 with their own manifest, for
# f4gemm tune --co-dir build/var22 (run22). Formulas as in kernels/sm90a/CMakeLists.txt.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
O=build/var22; mkdir -p $O
echo "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_layout,max_m" > $O/f4gemm_bf16_per1x32Fp4.csv
# name:block_r:block_s:k_stage:stages:parts:depth:min_blocks:reg_wg0
CFGS=(
  "v_m2f_s7:64:16:256:7:1:8:2:64"
  "v_f128_s9:128:16:256:9:1:8:1:96"
  "v_m2f_d4:64:16:256:6:1:4:2:64"
)
for c in "${CFGS[@]}"; do
  IFS=: read -r n br bs ks st pa de mb rw <<< "$c"
  name=f4gemm_sm90a_$n
  threads=$((128 * (1 + br / 64)))
  r_stage=$((br / 16 * ks / 128 * 1088)); bars=$((24 + 32 * br / 64)); s_raw=$((bs * (ks / 2 + 16)))
  ring=$((st * (bs * ks + r_stage + s_raw)))
  smem=$(((ring + 15) / 16 * 16 + bars * st + 8 * bs + 16 + 1024))
  echo "$bs,$br,1,0,$name,$name.cubin,sm_90a,$threads,$smem,sm90v1,frag16s,plain," >> $O/f4gemm_bf16_per1x32Fp4.csv
  nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Iinclude -Ikernels/sm90a -Xptxas -v \
    -DF4GEMM_BLOCK_R=$br -DF4GEMM_BLOCK_S=$bs -DF4GEMM_K_STAGE=$ks -DF4GEMM_STAGES=$st -DF4GEMM_SWAP_AB=1 \
    -DF4GEMM_PARTS=$pa -DF4GEMM_DEPTH=$de -DF4GEMM_MIN_BLOCKS=$mb -DF4GEMM_REG_WG0=$rw -DF4GEMM_R_BITPLANE=2 \
    -DF4GEMM_A_PREPASS=0 -DF4GEMM_KNL_NAME=$name -DF4GEMM_SMEM_BYTES=$smem -DF4GEMM_THREADS=$threads \
    -cubin -o $O/$name.cubin kernels/sm90a/sm90_mxfp4_gemm_ws.cu 2>&1 | grep -oE "Used [0-9]+ registers|[0-9]+ bytes spill stores" | tr '\n' ' '
  echo " $name smem $smem"
done
# the shipped dec kernels beside them, for the same calls
for k in dec_16x64_m2 dec_16x64_w16 dec_16x32_m2 ws_swap_16x64_m2fs ws_swap_16x128_fs; do
  cp build/kernels/sm90a/f4gemm_sm90a_$k.cubin $O/
  grep ",f4gemm_sm90a_$k," build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv >> $O/f4gemm_bf16_per1x32Fp4.csv
done
