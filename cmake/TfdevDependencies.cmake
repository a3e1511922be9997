# tfdev's dependencies: what the build finds (Lua 5.4, busted, OpenBLAS, protobuf-c, cJSON, oneDNN, the
# CUDA toolkit and cuDNN) and what it decides from them (TFDEV_WITH_ONEDNN, TFDEV_WITH_CUDA,
# TFDEV_WITH_CUDA_KERNELS, with CUDA enabled as a language here, at the top, since the module and a
# benchmark both compile .cu files). Included by the top-level CMakeLists.txt.
include(GNUInstallDirs)
# Installed binaries keep the paths of what they link outside the system dirs (libcudart).
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

# Lua 5.4: Debian's pkg-config name first, then CMake's own module.
pkg_check_modules(LUA IMPORTED_TARGET lua5.4)
if(NOT LUA_FOUND)
  find_package(Lua 5.4 EXACT REQUIRED)
  add_library(PkgConfig::LUA INTERFACE IMPORTED)
  target_include_directories(PkgConfig::LUA INTERFACE ${LUA_INCLUDE_DIR})
  target_link_libraries(PkgConfig::LUA INTERFACE ${LUA_LIBRARIES})
  set(LUA_INCLUDE_DIRS ${LUA_INCLUDE_DIR})
endif()
find_program(LUA_EXECUTABLE NAMES lua5.4 lua REQUIRED)
find_program(BUSTED_EXECUTABLE busted)

pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)

# Binary GraphDefs are read and written by protobuf-c from proto/ (TensorFlow's field numbers;
# runtime/CMakeLists.txt runs protoc-c).
pkg_check_modules(PROTOBUF_C REQUIRED IMPORTED_TARGET libprotobuf-c)
find_program(PROTOC_C protoc-c REQUIRED)
# TensorFlow.js graph models (model.json) are read with cJSON.
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)

# oneDNN (Debian's libdnnl-dev) is optional. It is left out of ThreadSanitizer builds: it runs on
# libgomp, which is not instrumented, so TSan would report OpenMP's own synchronisation. It is left
# out of valgrind builds too: its JIT kernels read up to a vector past the ends of oneDNN's own
# scratch buffers (at odd product widths), which memcheck reports with no frame to suppress by;
# the plain and ASan+UBSan builds run it.
set(TFDEV_WITH_ONEDNN OFF)
if(NOT TFDEV_ONEDNN STREQUAL "OFF" AND NOT TFDEV_SANITIZE MATCHES "thread" AND NOT TFDEV_VALGRIND)
  find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.h)
  find_library(DNNL_LIBRARY dnnl)
  find_library(GOMP_LIBRARY NAMES gomp libgomp.so.1)
  if(DNNL_INCLUDE_DIR AND DNNL_LIBRARY AND GOMP_LIBRARY)
    set(TFDEV_WITH_ONEDNN ON)
  elseif(TFDEV_ONEDNN STREQUAL "ON")
    message(FATAL_ERROR "TFDEV_ONEDNN=ON but libdnnl (libdnnl-dev) or libgomp was not found")
  endif()
endif()
message(STATUS "tfdev: oneDNN ${TFDEV_WITH_ONEDNN} (TFDEV_ONEDNN=${TFDEV_ONEDNN})")
set(TFDEV_MATH_LIBS PkgConfig::OPENBLAS PkgConfig::PROTOBUF_C PkgConfig::CJSON m)
if(TFDEV_WITH_ONEDNN)
  list(APPEND TFDEV_MATH_LIBS ${DNNL_LIBRARY} ${GOMP_LIBRARY})
endif()

# CUDA is optional: AUTO builds the GPU probe only when the toolkit is there.
set(TFDEV_WITH_CUDA OFF)
if(NOT TFDEV_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(TFDEV_WITH_CUDA ON)
  elseif(TFDEV_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TFDEV_CUDA=ON but the CUDA toolkit was not found")
  endif()
endif()
message(STATUS "tfdev: CUDA backend ${TFDEV_WITH_CUDA} (TFDEV_CUDA=${TFDEV_CUDA})")

# The CUDA kernels (gpu/kernels/): the device math GPU devices carry, so the runtime's device kernels
# run on them. .cu files are C++17 compiled by nvcc (host compiler g++-12 when there is one); the C
# files beside them call cuBLASLt, cuBLAS and cuDNN. Only the module links those libraries.
#
# Architectures (TFDEV_CUDA_ARCHITECTURES): machine code for the GPUs people have, Turing sm_75
# (the oldest CUDA 13 supports), Ampere sm_80 and sm_86, Ada sm_89, Hopper sm_90, plus compute_90 PTX
# that the driver compiles for anything newer (Blackwell), once, into its cache. Measured on the
# 2-core build machine with one job while others used it (load about 2): the six .cu files take
# 75 s of wall time for these six targets (58 s of CPU), well inside the 3 minutes a build may spend
# on CUDA, so nothing is trimmed; each target costs about a sixth, so a local build can name just its
# own GPU (-DTFDEV_CUDA_ARCHITECTURES=89-real).
#
# Sanitizer and valgrind builds leave the kernels out (scripts/build passes TFDEV_CUDA_KERNELS=OFF
# for them): nvcc takes no -fsanitize, and CI has no GPU to run them on anyway.
set(TFDEV_WITH_CUDA_KERNELS OFF)
if(TFDEV_WITH_CUDA AND TFDEV_CUDA_KERNELS)
  if(TFDEV_SANITIZE)
    message(STATUS "tfdev: CUDA kernels left out of a TFDEV_SANITIZE build")
  else()
    set(TFDEV_WITH_CUDA_KERNELS ON)
  endif()
endif()
if(TFDEV_WITH_CUDA_KERNELS)
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  if(NOT CMAKE_CUDA_HOST_COMPILER)
    find_program(TFDEV_GXX12 g++-12)
    if(TFDEV_GXX12)
      set(CMAKE_CUDA_HOST_COMPILER ${TFDEV_GXX12})
    endif()
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES ${TFDEV_CUDA_ARCHITECTURES})
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # cuDNN 9 beside the toolkit (or where CUDNN_ROOT says); without it convolutions are UNIMPLEMENTED.
  find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDNN_ROOT} ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}
            PATH_SUFFIXES include)
  find_library(CUDNN_LIBRARY cudnn HINTS ${CUDNN_ROOT} ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
               PATH_SUFFIXES lib64 lib)
endif()
