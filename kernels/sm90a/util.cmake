# Builds f4gemm_sm90a_util.cubin, the device-side data preparation (sm90_util.cu: pack a weight into W, pad
# an MXFP4 A, quantize bf16/fp32 into the padded A; entry points and argument blocks in
# include/f4gemm/util_args.h). Included from kernels/sm90a/CMakeLists.txt after F4GEMM_NVCC, F4GEMM_SM90A_FLAGS,
# F4GEMM_SM90A_SRC, F4GEMM_SM90A_OUT and F4GEMM_SM90A_INCLUDE are set. Not a manifest row: the driver loads it
# by name (F4GEMM_UTIL_CUBIN), not through kernel selection. Sets F4GEMM_SM90A_UTIL_OUTPUTS for the kernels
# target and installs the cubin beside the GEMM cubins.
set(F4GEMM_SM90A_UTIL_CUBIN "${F4GEMM_SM90A_OUT}/f4gemm_sm90a_util.cubin")
set(F4GEMM_SM90A_UTIL_DEPS
    "${F4GEMM_SM90A_SRC}/sm90_util.cu"
    "${F4GEMM_SM90A_SRC}/sm90_common.cuh"
    "${F4GEMM_SM90A_INCLUDE}/f4gemm/util_args.h"
    "${F4GEMM_SM90A_INCLUDE}/f4gemm/weight.h"
    "${F4GEMM_SM90A_INCLUDE}/f4gemm/frag16s.h"
    "${F4GEMM_SM90A_INCLUDE}/f4gemm/bitplane.h"
    "${F4GEMM_SM90A_INCLUDE}/f4gemm/mx_quantize.h"
    "${F4GEMM_SM90A_INCLUDE}/f4gemm/kernarg.h")
add_custom_command(OUTPUT "${F4GEMM_SM90A_UTIL_CUBIN}"
    COMMAND "${F4GEMM_NVCC}" ${F4GEMM_SM90A_FLAGS} -cubin -o "${F4GEMM_SM90A_UTIL_CUBIN}"
            "${F4GEMM_SM90A_SRC}/sm90_util.cu"
    DEPENDS ${F4GEMM_SM90A_UTIL_DEPS}
    COMMENT "nvcc sm_90a f4gemm_sm90a_util.cubin" VERBATIM)
set(F4GEMM_SM90A_UTIL_OUTPUTS "${F4GEMM_SM90A_UTIL_CUBIN}")
install(FILES ${F4GEMM_SM90A_UTIL_OUTPUTS} DESTINATION "${CMAKE_INSTALL_DATADIR}/f4gemm/sm90a")
