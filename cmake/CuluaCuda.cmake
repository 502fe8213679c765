# The CUDA backend is built when nvcc is found (CULUA_CUDA=AUTO) or required (ON). Without it the
# project builds the host backend alone.
#
# Architectures (docs/development.md#cuda-architectures), the list CMake builds for:
#   - none given: machine code (NN-real) for each GPU nvidia-smi finds on this machine; without a
#     GPU (CI) PTX for Hopper only (90-virtual): ptxas is about 70% of the CUDA compile time, and
#     where no GPU runs the code the machine code is not needed;
#   - CMAKE_CUDA_ARCHITECTURES given: a plain number NN is machine code only (NN-real; CMake's own
#     reading, compute_NN + sm_NN, puts PTX beside it that a GPU of that architecture never uses);
#     an explicit -real/-virtual suffix, all, all-major and native are kept;
#   - CULUA_CUDA_DIST_ARCHS (a distribution build, e.g. "80;90;100"): machine code for each, and PTX
#     of the newest, which later GPUs compile at first use. It wins over CMAKE_CUDA_ARCHITECTURES.
# The final list is CULUA_CUDA_ARCHITECTURES; the code reads it from generated/build/
# cuda_architectures.hpp (`culua -v` prints it; the CUDA backend checks a GPU against it).
#
# Compression of the device code in the objects (nvcc --compress-mode): CULUA_CUDA_COMPRESS.
set(CULUA_HAVE_CUDA OFF)
set(CULUA_CUDA_ARCHITECTURES "")
set(CULUA_CUDA_DIST_ARCHS "" CACHE STRING
    "Distribution build: machine code for each of these architectures (e.g. 80;90;100), PTX for the newest")
set(CULUA_CUDA_COMPRESS "" CACHE STRING
    "nvcc --compress-mode of the device code: default, size, speed, balance or none (empty: size for a CULUA_CUDA_DIST_ARCHS build, else default)")
set_property(CACHE CULUA_CUDA_COMPRESS PROPERTY STRINGS "" default size speed balance none)

# culua_cuda_real_architectures(<list> <out>): a plain number becomes NN-real, the rest is kept.
function(culua_cuda_real_architectures archs out)
  set(result)
  foreach(arch IN LISTS archs)
    if(arch MATCHES "^[0-9]+[af]?$")
      list(APPEND result ${arch}-real)
    else()
      list(APPEND result ${arch})
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

if(NOT CULUA_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(CULUA_CUDA_DIST_ARCHS)
      set(_dist ${CULUA_CUDA_DIST_ARCHS})
      string(REGEX REPLACE "-(real|virtual)" "" _dist "${_dist}")
      set(_newest 0)
      foreach(_arch IN LISTS _dist)
        if(NOT _arch MATCHES "^[0-9]+$")
          message(FATAL_ERROR "CULUA_CUDA_DIST_ARCHS: '${_arch}' is not an architecture number (e.g. 80;90;100)")
        endif()
        if(_arch GREATER _newest)
          set(_newest ${_arch})
        endif()
      endforeach()
      list(REMOVE_DUPLICATES _dist)
      set(_arch)
      foreach(_a IN LISTS _dist)
        list(APPEND _arch ${_a}-real)
      endforeach()
      list(APPEND _arch ${_newest}-virtual)
    elseif(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      culua_cuda_real_architectures("${CMAKE_CUDA_ARCHITECTURES}" _arch)
    else()
      # The GPUs of this machine when there are some: their machine code only.
      set(_arch "")
      find_program(NVIDIA_SMI nvidia-smi)
      if(NVIDIA_SMI)
        execute_process(COMMAND ${NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                        OUTPUT_VARIABLE _caps RESULT_VARIABLE _rc ERROR_QUIET)
        if(_rc EQUAL 0 AND _caps)
          string(REGEX MATCHALL "[0-9]+\\.[0-9]+" _caps "${_caps}")
          foreach(_cap IN LISTS _caps)
            string(REPLACE "." "" _cap "${_cap}")
            list(APPEND _arch ${_cap}-real)
          endforeach()
          list(REMOVE_DUPLICATES _arch)
        endif()
      endif()
      if(NOT _arch)
        set(_arch 90-virtual)
      endif()
      # Cached as found (a later configure keeps it); a plain number given later is read as above.
      set(CMAKE_CUDA_ARCHITECTURES ${_arch} CACHE STRING "CUDA architectures")
    endif()
    # A normal variable over the cache entry: what every CUDA target is built for.
    set(CMAKE_CUDA_ARCHITECTURES ${_arch})
    set(CULUA_CUDA_ARCHITECTURES ${_arch})
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(CULUA_HAVE_CUDA ON)

    set(_compress ${CULUA_CUDA_COMPRESS})
    if(NOT _compress)
      if(CULUA_CUDA_DIST_ARCHS)
        set(_compress size)
      else()
        set(_compress default)
      endif()
    endif()
    if(NOT _compress MATCHES "^(default|size|speed|balance|none)$")
      message(FATAL_ERROR "CULUA_CUDA_COMPRESS: '${_compress}' is not one of default, size, speed, balance, none")
    endif()
    # (nvcc's own default is `default`: the flag is left out then, and the command lines stay those
    # that ccache already knows)
    if(NOT _compress STREQUAL "default")
      add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:--compress-mode=${_compress}>)
    endif()
    set(CULUA_CUDA_COMPRESS_MODE ${_compress})
    message(STATUS "culua: CUDA backend enabled (architectures ${CULUA_CUDA_ARCHITECTURES}; compression ${_compress})")
  elseif(CULUA_CUDA STREQUAL "ON")
    message(FATAL_ERROR "CULUA_CUDA=ON but no CUDA compiler was found")
  else()
    message(STATUS "culua: no CUDA compiler found; building the host backend only")
  endif()
endif()

# The list for the code: generated/build/cuda_architectures.hpp (written only when it changes, so
# that only the files including it are compiled again).
string(REPLACE ";" "," _archs_text "${CULUA_CUDA_ARCHITECTURES}")
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/generated/build/cuda_architectures.hpp CONTENT
"// Generated by cmake/CuluaCuda.cmake. Do not edit.
#pragma once
// The CUDA architectures of the built-in kernels, as CMake's list (NN-real: machine code sm_NN;
// NN-virtual: PTX compute_NN; NN: both), commas between them; empty without CUDA.
#define CULUA_CUDA_ARCHITECTURES \"${_archs_text}\"
")
