# The benchmarks scripts/bench/run builds and runs. Included by the top-level CMakeLists.txt.
add_executable(tfdev_bench scripts/bench/bench_runtime.c)
# The floors are written as a C programmer targeting this machine would compile them: floorf and
# ceilf as vector instructions (gcc keeps them scalar under trapping math), as tfdev's rows are.
set_source_files_properties(scripts/bench/bench_runtime.c PROPERTIES COMPILE_OPTIONS -fno-trapping-math)
target_link_libraries(tfdev_bench PRIVATE tfdev_static m)
set_target_properties(tfdev_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
target_include_directories(tfdev_bench PRIVATE ${PROJECT_SOURCE_DIR})

# The GPU section of scripts/bench/run: host <-> device copies through tfd_tensor_copy_to against
# cudaMemcpy, and a CPU -> GPU -> CPU session step (scripts/bench/gpu_bench.c). Built only with the
# CUDA backend; it prints a SKIP line on a machine without a GPU.
if(TFDEV_WITH_CUDA)
  add_executable(tfdev_gpu_bench scripts/bench/gpu_bench.c)
  target_include_directories(tfdev_gpu_bench PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(tfdev_gpu_bench PRIVATE tfdev_static CUDA::cudart m)
  set_target_properties(tfdev_gpu_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  add_dependencies(tfdev_gpu_bench tfdev_cuda)
  if(TFDEV_WITH_CUDA_KERNELS) # the kernels' rows, with cublasSgemm as the MatMul floor
    target_compile_definitions(tfdev_gpu_bench PRIVATE TFDEV_BENCH_KERNELS=1)
    target_link_libraries(tfdev_gpu_bench PRIVATE CUDA::cublas)
    # The chain rows' floors: the same work as a kernel launched straight, and replayed as a graph.
    target_sources(tfdev_gpu_bench PRIVATE scripts/bench/gpu_floor.cu)
    set_target_properties(tfdev_gpu_bench PROPERTIES LINKER_LANGUAGE C CUDA_RUNTIME_LIBRARY Shared
                          CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
    # Both GPU benchmarks run to their end over the null CUDA runtime and libraries (docs/gpu.md, "GPU
    # benchmarks"), as a user measuring tfdev's host cost runs them: they say so and judge nothing.
    if(TARGET null_cudart_test)
      set(null_path ${PROJECT_BINARY_DIR}/null_cudart)
      add_test(NAME bench.gpu_bench_on_null_runtime
               COMMAND sh -c "LD_LIBRARY_PATH='${null_path}' \"$0\" --quick > bench.out 2>&1; rc=$?; cat bench.out; [ $rc = 0 ] && grep -q 'the null CUDA runtime' bench.out && grep -q 'with step graphs: chain step' bench.out"
                       $<TARGET_FILE:tfdev_gpu_bench>)
      add_test(NAME bench.gpu_models_on_null_runtime
               COMMAND sh -c "LD_LIBRARY_PATH='${null_path}' \"$0\" '${PROJECT_SOURCE_DIR}/scripts/bench/gpu_models.lua' --quick > models.out 2>&1; rc=$?; cat models.out; [ $rc = 0 ] && grep -q 'note: the null CUDA runtime runs no kernel' models.out"
                       $<TARGET_FILE:tfdev>)
      # Without ../shared/models (a clone on its own) the models print SKIP lines: reported skipped.
      set_tests_properties(bench.gpu_models_on_null_runtime PROPERTIES SKIP_REGULAR_EXPRESSION "[|] SKIP: ")
      foreach(t gpu_bench gpu_models)
        set_tests_properties(bench.${t}_on_null_runtime PROPERTIES ENVIRONMENT "TFDEV_BACKENDS=cuda" TIMEOUT 300
                             WORKING_DIRECTORY ${PROJECT_BINARY_DIR}/null_cudart)
      endforeach()
    endif()
  endif()
endif()

# oneDNN against XNNPACK (Debian's libxnnpack-dev with libpthreadpool-dev; scripts/bench/run --peers
# installs them) on every convolution layer of the models tfdev runs: tfdev_conv_libs. XNNPACK is a
# measured peer, not a runtime path: oneDNN won 40 of 47 layers at one thread and 46 at two, and
# picking per layer would save 0.4% (docs/performance.md, "Fast convolutions"). Built only when both are found.
find_path(XNNPACK_INCLUDE_DIR xnnpack.h)
find_path(PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
find_library(XNNPACK_LIBRARY XNNPACK)
find_library(PTHREADPOOL_LIBRARY pthreadpool)
if(TFDEV_WITH_ONEDNN AND XNNPACK_INCLUDE_DIR AND PTHREADPOOL_INCLUDE_DIR AND XNNPACK_LIBRARY AND PTHREADPOOL_LIBRARY)
  add_library(tfdev_xnn_conv STATIC scripts/bench/xnn_conv.c)
  target_compile_definitions(tfdev_xnn_conv PUBLIC TFDEV_WITH_XNNPACK=1)
  target_include_directories(tfdev_xnn_conv PUBLIC ${PROJECT_SOURCE_DIR} ${XNNPACK_INCLUDE_DIR} ${PTHREADPOOL_INCLUDE_DIR})
  target_link_libraries(tfdev_xnn_conv PUBLIC tfdev_static ${XNNPACK_LIBRARY} ${PTHREADPOOL_LIBRARY})
  add_executable(tfdev_conv_libs scripts/bench/conv_libs.c)
  target_compile_definitions(tfdev_conv_libs PRIVATE TFDEV_WITH_ONEDNN=1)
  target_link_libraries(tfdev_conv_libs PRIVATE tfdev_xnn_conv m)
  set_target_properties(tfdev_conv_libs PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  if(TFDEV_TESTS)
    add_executable(xnn_conv_test scripts/bench/xnn_conv_test.c)
    target_link_libraries(xnn_conv_test PRIVATE tfdev_xnn_conv m)
    set_target_properties(xnn_conv_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
    add_test(NAME c.xnn_conv_test COMMAND ${test_launcher} $<TARGET_FILE:xnn_conv_test>)
  endif()
endif()
