#!/usr/bin/env bash
# Builds, off-device, what dev/run_rotate.sh needs: the dev harness and one cubin per config below, with a
# manifest per group, into BUILD (git-ignored; carry it to the device). Also writes BUILD/resources.txt
# (ptxas -v: registers, spills; SASS: QGMMA count, local memory, wgmma wait depths) for the record.
# Usage: kernels/sm90a/dev/build_dev.sh [BUILD=build-dev]
set -euo pipefail
B=${1:-build-dev}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
K="$B/kernels/sm90a"
mkdir -p "$K"
NVCC=${NVCC:-nvcc}
HDR="tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_layout"
# group:NAME:BLOCK_R:BLOCK_S:K_STAGE:STAGES:SWAP_AB:PARTS:DEPTH  (PARTS 0 = the original schedule)
CONFIGS=(
    "large:f4gemm_sm90a_ws_128x128:128:128:128:5:0:0:2"
    "large:f4gemm_sm90a_ws_128x128_r4x4:128:128:128:5:0:4:4"
    "large:f4gemm_sm90a_ws_128x128_r2x2:128:128:128:5:0:2:2"
    "swap:f4gemm_sm90a_ws_swap_16x128:128:16:256:8:1:0:2"
    "swap:f4gemm_sm90a_ws_swap_16x128_d4:128:16:256:8:1:1:4"
    "swap:f4gemm_sm90a_ws_swap_16x128_d8:128:16:256:8:1:1:8"
)
echo "$HDR" > "$K/large.csv"
echo "$HDR" > "$K/swap.csv"
: > "$B/resources.txt"
pids=()
for c in "${CONFIGS[@]}"; do
    IFS=: read -r grp name br bs ks st sw parts depth <<< "$c"
    threads=$((128 * (1 + br / 64)))
    pitch=$((ks / 2 + 16))
    ring=$((st * (bs * ks + br * pitch + bs * pitch)))
    smem=$(((ring + 15) / 16 * 16 + 24 * st + 8 * bs + 16 + 1024))
    if [ "$sw" = 1 ]; then tm=$bs; tn=$br; else tm=$br; tn=$bs; fi
    echo "$tm,$tn,1,0,$name,$name.cubin,sm_90a,$threads,$smem,sm90v1,plain,plain" >> "$K/$grp.csv"
    (
        "$NVCC" -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I"$ROOT/include" -I"$ROOT/kernels/sm90a" \
            -Xptxas -v -DF4GEMM_KNL_NAME=$name -DF4GEMM_SMEM_BYTES=$smem -DF4GEMM_THREADS=$threads \
            -DF4GEMM_BLOCK_R=$br -DF4GEMM_BLOCK_S=$bs -DF4GEMM_K_STAGE=$ks -DF4GEMM_STAGES=$st \
            -DF4GEMM_SWAP_AB=$sw -DF4GEMM_PARTS=$parts -DF4GEMM_DEPTH=$depth \
            -cubin -o "$K/$name.cubin" "$ROOT/kernels/sm90a/sm90_mxfp4_gemm_ws.cu" > "$K/$name.ptxas.txt" 2>&1
    ) &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for c in "${CONFIGS[@]}"; do
    IFS=: read -r grp name rest <<< "$c"
    sass=$(cuobjdump -sass "$K/$name.cubin")
    printf '%s %s QGMMA=%s LDL/STL=%s waits: %s | %s\n' "$name" \
        "$(grep -o 'Used [0-9]* registers' "$K/$name.ptxas.txt")" \
        "$(grep -c QGMMA <<< "$sass")" "$(grep -cE 'LDL|STL' <<< "$sass" || true)" \
        "$(grep -o 'WARPGROUP.DEPBAR.LE gsb0, 0x[0-9]' <<< "$sass" | sort | uniq -c | awk '{printf "%sx%s ", $1, $NF}')" \
        "$(grep -oE '[0-9]+ bytes spill stores|C75[0-9]+' "$K/$name.ptxas.txt" | tr '\n' ' ')" | tee -a "$B/resources.txt"
done
g++ -std=c++17 -O3 -march=x86-64-v3 -pthread -I/usr/local/cuda/include -I"$ROOT/include" \
    "$ROOT/kernels/sm90a/dev/harness.cpp" -L/usr/local/cuda/lib64/stubs -lcuda -o "$B/harness"
echo "built $B"
