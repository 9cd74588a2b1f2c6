# Writes one sm_90a manifest (f4gemm_bf16_per1x32Fp4.csv) from the kernels' .ptx, run by the build after every
# listed .ptx is compiled:
#   cmake -DENTRIES=<file> -DOUT=<csv> -P manifest.cmake
# ENTRIES (written by kernels/sm90a/CMakeLists.txt from kernels.json, in priority order) has one line per
# kernel: knl_name,priority,max_m,min_m,cost_wave_k,cost_prepass,cost_wave_us,decode_round,decode_warps,decode_speed,ptx
# path. Everything else in a row is what the kernel computed itself and
# exported with F4GEMM_EXPORT_ROW (sm90_common.cuh), which the PTX spells
#   .global .align 4 .u32 <knl_name>_<field> = <n>;
# (`.global .align 4 .u32 <knl_name>_<field>;` when it is 0), so threads, smem_bytes, the tile, splitK, abi and
# b_layout are never restated here or in CMakeLists.txt; likewise the accumulation mode it implements (accum)
# and, for a promoted kernel, the K of its FP8 chains (promote_k), and the CTAs per SM its pinned launch register
# budget allows (reg_ctas).
cmake_minimum_required(VERSION 3.19)

if(NOT ENTRIES OR NOT OUT)
    message(FATAL_ERROR "manifest.cmake: pass -DENTRIES=<file> -DOUT=<csv>")
endif()

set(abi_words sm90v1 sm90pp1 sm90pa1 sm90pp2)  # F4GEMM_ABI_* codes 0, 1, 2, 3
set(b_layout_words plain frag16s)      # F4GEMM_B_* codes 0, 1
set(accum_words exact promoted)        # F4GEMM_ACCUM_* codes 0, 1
set(fields smem_bytes threads tile_m tile_n split_k abi b_layout accum promote_k reg_ctas)

string(CONCAT csv "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,"
    "scale_layout,max_m,min_m,priority,accum,cost_wave_k,cost_prepass,cost_wave_us,decode_round,decode_warps,"
    "decode_speed,"
    "promote_k,reg_ctas\n")
file(STRINGS "${ENTRIES}" entries)
foreach(entry IN LISTS entries)
    string(REPLACE "," ";" e "${entry}")
    list(GET e 0 name)
    list(GET e 1 priority)
    list(GET e 2 max_m)
    list(GET e 3 min_m)
    list(GET e 4 cost_wave_k)
    list(GET e 5 cost_prepass)
    list(GET e 6 cost_wave_us)
    list(GET e 7 decode_round)
    list(GET e 8 decode_warps)
    list(GET e 9 decode_speed)
    list(GET e 10 ptx)
    file(STRINGS "${ptx}" exported REGEX "^\\.global \\.align 4 \\.u32 ${name}_[a-z_]+( = [0-9]+)?;")
    foreach(f IN LISTS fields)
        set(${f} "")
        foreach(line IN LISTS exported)
            if(line MATCHES "^\\.global \\.align 4 \\.u32 ${name}_${f}( = ([0-9]+))?;")
                set(${f} "${CMAKE_MATCH_2}")
                if(NOT CMAKE_MATCH_1)
                    set(${f} 0)  # nvcc writes a zero constant without an initializer
                endif()
            endif()
        endforeach()
        if(${f} STREQUAL "")
            message(FATAL_ERROR "manifest.cmake: ${ptx} exports no ${name}_${f}: the kernel source must "
                                "end its config section with F4GEMM_EXPORT_ROW (sm90_common.cuh)")
        endif()
    endforeach()
    list(LENGTH abi_words n_abi)
    list(LENGTH b_layout_words n_bl)
    list(LENGTH accum_words n_acc)
    if(NOT abi LESS n_abi OR NOT b_layout LESS n_bl OR NOT accum LESS n_acc)
        message(FATAL_ERROR "manifest.cmake: ${name} exports abi ${abi} / b_layout ${b_layout} / accum ${accum}: "
                            "unknown code")
    endif()
    list(GET accum_words ${accum} accum_word)
    list(GET abi_words ${abi} abi_word)
    list(GET b_layout_words ${b_layout} b_layout_word)
    if(max_m EQUAL 0)
        set(max_m "")  # an empty cell: any M
    endif()
    if(min_m EQUAL 0)
        set(min_m "")
    endif()
    if(promote_k EQUAL 0)
        set(promote_k "")  # an exact kernel
    endif()
    if(reg_ctas EQUAL 0)
        set(reg_ctas "")  # registers not pinned by the kernel
    endif()
    foreach(c cost_wave_k cost_prepass cost_wave_us decode_round decode_warps decode_speed)
        if("${${c}}" STREQUAL "0")
            set(${c} "")  # no time model
        endif()
    endforeach()
    string(APPEND csv "${tile_m},${tile_n},${split_k},0,${name},${name}.cubin,sm_90a,${threads},${smem_bytes},"
                      "${abi_word},${b_layout_word},plain,${max_m},${min_m},${priority},${accum_word},${cost_wave_k},"
                      "${cost_prepass},${cost_wave_us},${decode_round},${decode_warps},${decode_speed},${promote_k},"
                      "${reg_ctas}\n")
endforeach()

file(WRITE "${OUT}" "${csv}")
