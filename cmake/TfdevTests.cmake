# The tests (ctest): C unit tests beside the code they test, the busted specs, the build's own checks
# (layers, cycles, exports, docs), out-of-memory sweeps and the GPU suite. Included by the top-level
# CMakeLists.txt.
if(TFDEV_TESTS)
  enable_testing()
  # Under valgrind each test fails on a memory error or a definite or indirect leak.
  set(test_launcher)
  if(TFDEV_VALGRIND)
    find_program(VALGRIND_EXECUTABLE valgrind REQUIRED)
    set(test_launcher ${VALGRIND_EXECUTABLE} --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
        --errors-for-leak-kinds=definite,indirect --quiet)
  endif()
  # Tests that pin the built-in factory registry (CPU at 60, nothing else) run without backend
  # modules; spec/backend_spec.lua and runtime/device/backend_test.c check what a backend adds.
  set(TFDEV_TESTS_WITHOUT_BACKENDS device_factory_test lua_state_test cli_spec device_set_spec factory_spec)
  # Tests of the device-memory path, against the fake GPU backend (below) alone: with its device math
  # and device kernels (every op that has one runs on the GPU), or without (TFDEV_FAKE_GPU_MATH=0:
  # a GPU that only moves data, for placement fallbacks and soft placement).
  set(TFDEV_TESTS_WITH_FAKE_GPU fake_gpu_test fake_gpu_spec device_kernels_test device_kernels_spec step_graph_test)
  set(TFDEV_TESTS_WITH_DATA_ONLY_FAKE_GPU fake_gpu_test fake_gpu_spec)
  # C unit tests live beside the code they test: runtime/*/*_test.c (runtime/kernels/<family>/ too)
  # and gpu/*_test.c.
  file(GLOB TFDEV_C_TESTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/runtime/*/*_test.c
       ${PROJECT_SOURCE_DIR}/runtime/kernels/*/*_test.c ${PROJECT_SOURCE_DIR}/gpu/*_test.c
       ${PROJECT_SOURCE_DIR}/gpu/kernels/*_test.c)
  list(FILTER TFDEV_C_TESTS EXCLUDE REGEX "/gpu/(cuda_[^/]*|null_cudart)_test\\.c$") # the GPU suite and the null runtime's, below
  foreach(src ${TFDEV_C_TESTS})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
    target_compile_definitions(${name} PRIVATE TFDEV_SOURCE_DIR="${PROJECT_SOURCE_DIR}") # for files under spec/
    target_link_libraries(${name} PRIVATE tfdev_gpu_common tfdev_static)
    set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
    add_test(NAME c.${name} COMMAND ${test_launcher} $<TARGET_FILE:${name}>)
    set(c_env)
    if(TFDEV_VALGRIND)
      list(APPEND c_env "TFDEV_UNDER_VALGRIND=1")
    endif()
    if(name IN_LIST TFDEV_TESTS_WITHOUT_BACKENDS)
      list(APPEND c_env "TFDEV_BACKENDS=none")
    elseif(name IN_LIST TFDEV_TESTS_WITH_FAKE_GPU)
      list(APPEND c_env "TFDEV_BACKENDS=fakegpu")
      if(name IN_LIST TFDEV_TESTS_WITH_DATA_ONLY_FAKE_GPU)
        list(APPEND c_env "TFDEV_FAKE_GPU_MATH=0")
      endif()
      add_dependencies(${name} tfdev_fakegpu)
    endif()
    if(c_env)
      set_tests_properties(c.${name} PROPERTIES ENVIRONMENT "${c_env}")
    endif()
  endforeach()

  # The README's C example (examples/run_model.c, the same text: spec/reference_spec.lua checks it),
  # built against the shared library as a host would and run on a model of the repository and, where
  # this checkout sits beside ../shared/models, on a real one.
  add_executable(run_model examples/run_model.c)
  target_link_libraries(run_model PRIVATE tfdev_shared)
  set_target_properties(run_model PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  add_test(NAME example.run_model COMMAND ${test_launcher} $<TARGET_FILE:run_model> ${PROJECT_SOURCE_DIR}/spec/oom/tiny)
  set_tests_properties(example.run_model PROPERTIES PASS_REGULAR_EXPRESSION
                       "takes 1 input\\(s\\) and gives 1 output\\(s\\)\n  in  x +float32 +\\[1 x 6 x 6 x 1\\]\n  out probs +float32 +\\[1 x 3\\]  first value 0\\.")
  if(EXISTS ${PROJECT_SOURCE_DIR}/../shared/models/emotion/emotion.json)
    add_test(NAME example.run_model_emotion COMMAND ${test_launcher} $<TARGET_FILE:run_model>
             ${PROJECT_SOURCE_DIR}/../shared/models/emotion)
    set_tests_properties(example.run_model_emotion PROPERTIES PASS_REGULAR_EXPRESSION
                         "  in  input_1 +float32 +\\[-1 x 64 x 64 x 1\\]\n  out Identity:0 +float32 +\\[1 x 7\\]  first value")
  endif()

  # The test plug-ins (runtime/testing/test_plugin.c; never installed): one for this API version, one
  # claiming version 99. As plug-ins do, they link no libtfdev: their calls resolve to the runtime
  # that loads them, and custom_op_test exports its statically linked one (as the tfdev executable does).
  foreach(v current v99)
    add_library(tfdev_test_plugin_${v} MODULE runtime/testing/test_plugin.c)
    target_include_directories(tfdev_test_plugin_${v} PRIVATE ${PROJECT_SOURCE_DIR}/include)
    set_target_properties(tfdev_test_plugin_${v} PROPERTIES PREFIX "lib" LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  endforeach()
  target_compile_definitions(tfdev_test_plugin_v99 PRIVATE TFDEV_TEST_PLUGIN_VERSION=99)
  set_target_properties(custom_op_test PROPERTIES ENABLE_EXPORTS ON)
  target_compile_definitions(custom_op_test PRIVATE TFDEV_TEST_PLUGIN="$<TARGET_FILE:tfdev_test_plugin_current>"
                             TFDEV_TEST_PLUGIN_V99="$<TARGET_FILE:tfdev_test_plugin_v99>")
  add_dependencies(custom_op_test tfdev_test_plugin_current tfdev_test_plugin_v99)

  # Binding tests that need a Lua state of their own (several states in one process).
  add_executable(lua_state_test bindings/lua_state_test.c ${TFDEV_BINDING_SOURCES})
  target_include_directories(lua_state_test PRIVATE ${PROJECT_SOURCE_DIR} ${LUA_INCLUDE_DIRS})
  target_link_libraries(lua_state_test PRIVATE tfdev_static PkgConfig::LUA m)
  # Its out-of-memory test fails these makers through wrappers of its own.
  target_link_options(lua_state_test PRIVATE LINKER:--wrap=tfd_status_new,--wrap=tfd_session_options_new
                      LINKER:--wrap=tfd_graph_def_new,--wrap=tfd_run_metadata_new)
  set_target_properties(lua_state_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  add_test(NAME c.lua_state_test COMMAND ${test_launcher} $<TARGET_FILE:lua_state_test>)
  set_tests_properties(c.lua_state_test PROPERTIES ENVIRONMENT "TFDEV_BACKENDS=none")

  # The out-of-memory sweep's targets (scripts/oom-sweep, spec/oom/): the tfdev interpreter and a C
  # host, each linked with the C allocator wrapped by runtime/testing/alloc_faults.c, which fails the
  # allocation TFDEV_FAIL_ALLOC names. Test binaries only: nothing installed carries the wrapper.
  set(TFDEV_ALLOC_WRAP "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc,--wrap=posix_memalign,--wrap=strdup,--wrap=strndup")
  add_executable(tfdev_oom bindings/tfdev.c ${TFDEV_BINDING_SOURCES} runtime/testing/alloc_faults.c)
  target_include_directories(tfdev_oom PRIVATE ${LUA_INCLUDE_DIRS})
  target_link_libraries(tfdev_oom PRIVATE tfdev_static PkgConfig::LUA PkgConfig::CJSON ${CMAKE_DL_LIBS} m)
  target_link_options(tfdev_oom PRIVATE ${TFDEV_ALLOC_WRAP})
  target_compile_definitions(tfdev_oom PRIVATE TFDEV_LUA_LDIR="${TFDEV_LUA_LDIR}" TFDEV_LUA_CDIR="${TFDEV_LUA_CDIR}")
  set_target_properties(tfdev_oom PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin ENABLE_EXPORTS ON)
  add_dependencies(tfdev_oom tfdev_lua_files)
  add_executable(oom_target runtime/testing/oom_target.c runtime/testing/alloc_faults.c)
  target_include_directories(oom_target PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(oom_target PRIVATE tfdev_static PkgConfig::CJSON)
  target_link_options(oom_target PRIVATE ${TFDEV_ALLOC_WRAP})
  set_target_properties(oom_target PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  # The sweeps (label oom) run in the ASan+UBSan build, where a bad access or a leak fails a point:
  # a session script and model loads, from C and from Lua, spec/oom/tiny always and the models of
  # ../shared/models when they are beside the clone. Each takes every K-th point, K from
  # TFDEV_OOM_STRIDE (scripts/test --oom sets 1: every point) or the test's own default, chosen to
  # keep CI's ASan suite within its time.
  if(TFDEV_SANITIZE MATCHES "address")
    set(oom_sweep ${PROJECT_SOURCE_DIR}/scripts/oom-sweep)
    set(oom_stride "\${TFDEV_OOM_STRIDE:-$0}")
    # name, default stride, then the sweep's command: "sweep" (oom_target's own, in one process) or
    # "process" (scripts/oom-sweep, a process per point) and the target's arguments.
    function(tfdev_oom_test name stride kind)
      if(kind STREQUAL "sweep")
        add_test(NAME oom.${name} COMMAND sh -c "t=$1; shift; exec \"$t\" sweep --stride=${oom_stride} \"$@\"" ${stride}
                 $<TARGET_FILE:oom_target> ${ARGN})
      else()
        add_test(NAME oom.${name} COMMAND sh -c "t=$1; shift; exec \"$t\" --stride=${oom_stride} --name=${name} -- \"$@\""
                 ${stride} ${oom_sweep} ${ARGN})
      endif()
      set_tests_properties(oom.${name} PROPERTIES LABELS oom TIMEOUT 7200 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    endfunction()
    tfdev_oom_test(c_session_in_process 1 sweep session)
    tfdev_oom_test(c_session 13 process $<TARGET_FILE:oom_target> session)
    tfdev_oom_test(lua_session 13 process $<TARGET_FILE:tfdev_oom> spec/oom/session.lua)
    tfdev_oom_test(lua_ops 29 process $<TARGET_FILE:tfdev_oom> spec/oom/ops.lua)
    tfdev_oom_test(lua_gpu 11 process $<TARGET_FILE:tfdev_oom> spec/oom/gpu.lua)
    set_tests_properties(oom.lua_gpu PROPERTIES ENVIRONMENT "TFDEV_BACKENDS=fakegpu")
    foreach(f model.json model.pb)
      string(REPLACE "." "_" t ${f})
      tfdev_oom_test(c_tiny_${t}_in_process 1 sweep model spec/oom/tiny/${f})
      tfdev_oom_test(lua_tiny_${t} 17 process $<TARGET_FILE:tfdev_oom> spec/oom/model.lua spec/oom/tiny/${f})
    endforeach()
    foreach(m blazeface emotion facemesh antispoof)
      set(json ${PROJECT_SOURCE_DIR}/../shared/models/${m}/${m}.json)
      if(EXISTS ${json})
        tfdev_oom_test(c_${m} 499 process $<TARGET_FILE:oom_target> model ${json})
        tfdev_oom_test(lua_${m} 499 process $<TARGET_FILE:tfdev_oom> spec/oom/model.lua ${json})
      endif()
    endforeach()
  endif()

  # The GPU suite (label "gpu", scripts/test --gpu): needs a GPU, skipped (exit 77) without one.
  if(TFDEV_WITH_CUDA)
    add_executable(cuda_device_test gpu/cuda_device_test.c)
    target_include_directories(cuda_device_test PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(cuda_device_test PRIVATE tfdev_gpu_common tfdev_static CUDA::cudart)
    set_target_properties(cuda_device_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
    add_test(NAME gpu.cuda_device_test COMMAND ${test_launcher} $<TARGET_FILE:cuda_device_test>)
    set_tests_properties(gpu.cuda_device_test PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
    add_dependencies(cuda_device_test tfdev_cuda)
  endif()
  # The null CUDA runtime (gpu/null_cudart.c): a libcudart.so.13 that reports one GPU and runs no
  # kernel, so the CUDA backend's host side runs in CI and under the sanitizers (null_cudart_test
  # links it: the module's libcudart.so.13 is then that one), and tfdev_gpu_bench, run with
  # LD_LIBRARY_PATH=build/null_cudart, measures tfdev's own host cost.
  if(TFDEV_WITH_CUDA)
    add_library(tfdev_null_cudart SHARED gpu/null_cudart.c)
    target_include_directories(tfdev_null_cudart PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    # It defines the runtime's own functions, several of which (nvcc's __cuda* hooks) no header declares.
    target_compile_options(tfdev_null_cudart PRIVATE -Wno-missing-prototypes)
    set_target_properties(tfdev_null_cudart PROPERTIES OUTPUT_NAME cudart SUFFIX ".so.13" NO_SONAME ON
                          LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/null_cudart)
    target_link_options(tfdev_null_cudart PRIVATE -Wl,-soname,libcudart.so.13
                        -Wl,--version-script=${PROJECT_SOURCE_DIR}/gpu/null_cudart.map)
    add_executable(null_cudart_test gpu/null_cudart_test.c)
    target_include_directories(null_cudart_test PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(null_cudart_test PRIVATE tfdev_static tfdev_null_cudart)
    if(TFDEV_WITH_CUDA_KERNELS)
      target_compile_definitions(null_cudart_test PRIVATE TFDEV_CUDA_KERNELS=1)
      target_include_directories(null_cudart_test SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${CUDNN_INCLUDE_DIR})
      # Null cuBLAS, cuBLASLt and cuDNN (gpu/null_cublas.c, gpu/null_cudnn.c) beside it, under the
      # sonames the module opens: the test links them, so the module's dlopen finds them loaded, and
      # LD_LIBRARY_PATH=build/null_cudart gives them to any other program.
      file(STRINGS ${CUDAToolkit_INCLUDE_DIRS}/cublas_api.h tfdev_cublas_major REGEX "#define CUBLAS_VER_MAJOR ")
      string(REGEX REPLACE ".* ([0-9]+).*" "\\1" tfdev_cublas_major "${tfdev_cublas_major}")
      set(tfdev_null_libs cublas:cublas:${tfdev_cublas_major} cublaslt:cublasLt:${tfdev_cublas_major})
      if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
        file(STRINGS ${CUDNN_INCLUDE_DIR}/cudnn_version.h tfdev_cudnn_major REGEX "#define CUDNN_MAJOR ")
        string(REGEX REPLACE ".* ([0-9]+).*" "\\1" tfdev_cudnn_major "${tfdev_cudnn_major}")
        list(APPEND tfdev_null_libs cudnn:cudnn:${tfdev_cudnn_major})
        target_compile_definitions(null_cudart_test PRIVATE TFDEV_NULL_CUDNN=1)
      endif()
      foreach(entry ${tfdev_null_libs})
        string(REPLACE ":" ";" parts ${entry})
        list(GET parts 0 id)
        list(GET parts 1 name)
        list(GET parts 2 major)
        set(src gpu/null_cublas.c)
        if(id STREQUAL "cudnn")
          set(src gpu/null_cudnn.c)
        endif()
        add_library(tfdev_null_${id} SHARED ${src})
        target_include_directories(tfdev_null_${id} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS} ${CUDNN_INCLUDE_DIR})
        target_compile_options(tfdev_null_${id} PRIVATE -Wno-missing-prototypes)
        if(id STREQUAL "cublaslt")
          target_compile_definitions(tfdev_null_${id} PRIVATE NULL_CUBLAS_LT=1)
        endif()
        set_target_properties(tfdev_null_${id} PROPERTIES OUTPUT_NAME ${name} SUFFIX ".so.${major}" NO_SONAME ON
                              LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/null_cudart)
        # Versioned as the real library's symbols are (lib<name>.so.<major>), so a program linked
        # against the real one binds to these without complaint.
        file(WRITE ${PROJECT_BINARY_DIR}/null_cudart/lib${name}.map "lib${name}.so.${major} {\n  global: *;\n};\n")
        target_link_options(tfdev_null_${id} PRIVATE -Wl,-soname,lib${name}.so.${major}
                            -Wl,--version-script=${PROJECT_BINARY_DIR}/null_cudart/lib${name}.map)
        target_link_libraries(null_cudart_test PRIVATE tfdev_null_${id})
      endforeach()
    endif()
    set_target_properties(null_cudart_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
    add_test(NAME c.null_cudart_test COMMAND ${test_launcher} $<TARGET_FILE:null_cudart_test>)
    set(null_env "TFDEV_BACKENDS=cuda")
    if(TFDEV_VALGRIND)
      list(APPEND null_env "TFDEV_UNDER_VALGRIND=1")
    endif()
    set_tests_properties(c.null_cudart_test PROPERTIES ENVIRONMENT "${null_env}")
    add_dependencies(null_cudart_test tfdev_cuda tfdev_null_cudart)
  endif()
  # The CUDA kernels' test (gpu/cuda_kernels_test.c): every device-math entry against the host.
  if(TFDEV_WITH_CUDA_KERNELS)
    add_executable(cuda_kernels_test gpu/cuda_kernels_test.c)
    target_include_directories(cuda_kernels_test PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(cuda_kernels_test PRIVATE tfdev_static CUDA::cudart m)
    set_target_properties(cuda_kernels_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
    add_test(NAME gpu.cuda_kernels_test COMMAND ${test_launcher} $<TARGET_FILE:cuda_kernels_test>)
    set_tests_properties(gpu.cuda_kernels_test PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 1200)
    add_dependencies(cuda_kernels_test tfdev_cuda)
  endif()

  # The fake GPU backend (runtime/testing/fake_gpu_backend.c): GPU devices whose memory the host
  # must not touch, so CI runs the device-memory path without a GPU. Built beside libtfdev, where
  # the loader looks; never installed. Its tests load it with TFDEV_BACKENDS=fakegpu.
  add_library(tfdev_fakegpu MODULE runtime/testing/fake_gpu_backend.c runtime/testing/fake_gpu_math.c
              runtime/device/backend_shim.c)
  target_include_directories(tfdev_fakegpu PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR})
  set_target_properties(tfdev_fakegpu PROPERTIES PREFIX "lib" OUTPUT_NAME tfdev_fakegpu C_VISIBILITY_PRESET hidden
                        LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
  target_link_options(tfdev_fakegpu PRIVATE -Wl,-Bsymbolic)
  target_link_libraries(tfdev_fakegpu PRIVATE m) # its math's libm calls (fake_gpu_math.c)
  if(NOT TFDEV_SANITIZE)
    target_link_options(tfdev_fakegpu PRIVATE -Wl,--no-undefined)
  endif()
  # Every include inside runtime/ points down DESIGN.md's layer order (packaging/check_layers.sh).
  add_test(NAME build.layers COMMAND sh ${PROJECT_SOURCE_DIR}/packaging/check_layers.sh ${PROJECT_SOURCE_DIR})
  # No files depend on each other in a circle, by the symbols their objects define and use
  # (packaging/check_cycles.lua; tensor/tstring/variant, one concept, are the one cycle allowed); and the check does fail on one.
  set(cycle_groups --binary-dir=${PROJECT_BINARY_DIR} --group=runtime $<TARGET_OBJECTS:tfdev_objects> --group=bindings $<TARGET_OBJECTS:tfdev_lua>)
  if(TFDEV_WITH_CUDA)
    list(APPEND cycle_groups --group=gpu $<TARGET_OBJECTS:tfdev_cuda>)
  endif()
  add_test(NAME build.cycles COMMAND $<TARGET_FILE:tfdev> ${PROJECT_SOURCE_DIR}/packaging/check_cycles.lua ${cycle_groups}
           COMMAND_EXPAND_LISTS)
  add_test(NAME build.cycles_found
           COMMAND sh -c "d=$(mktemp -d) && cd \"$d\" && mkdir -p x.dir && printf 'int b(void);\\nint a(void) { return b(); }\\n' > a.c && printf 'int a(void);\\nint b(void) { return a(); }\\n' > b.c && $0 -c a.c -o x.dir/a.c.o && $0 -c b.c -o x.dir/b.c.o && if \"$1\" \"$2\" --group=t x.dir/a.c.o x.dir/b.c.o > out; then echo 'check_cycles.lua passed a cycle'; cat out; exit 1; fi; grep -q 'new cycle of 2 files' out; r=$?; rm -rf \"$d\"; exit $r"
                   ${CMAKE_C_COMPILER} $<TARGET_FILE:tfdev> ${PROJECT_SOURCE_DIR}/packaging/check_cycles.lua)
  # Every public function that takes a status resets it first (tfdev.h's status rule).
  add_test(NAME build.status_reset
           COMMAND $<TARGET_FILE:tfdev> ${PROJECT_SOURCE_DIR}/packaging/check_status_reset.lua ${PROJECT_SOURCE_DIR})
  # Every public declaration that returns a pointer says who owns the result (tfdev.h's ownership rule).
  add_test(NAME build.ownership_comments
           COMMAND $<TARGET_FILE:tfdev> ${PROJECT_SOURCE_DIR}/packaging/check_ownership.lua ${PROJECT_SOURCE_DIR})
  # The C blocks of README.md and docs/ compile (fragments) or build and run (programs) against the headers.
  list(GET LUA_INCLUDE_DIRS 0 doc_lua_include)
  add_test(NAME docs.c_blocks
           COMMAND $<TARGET_FILE:tfdev> ${PROJECT_SOURCE_DIR}/packaging/check_doc_c.lua ${PROJECT_SOURCE_DIR}
                   ${PROJECT_BINARY_DIR}/doc_c ${CMAKE_C_COMPILER} ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include
                   ${PROJECT_BINARY_DIR}/lib ${doc_lua_include} "${TFDEV_SANITIZE}")
  set_tests_properties(docs.c_blocks PROPERTIES ENVIRONMENT "TFDEV_BACKENDS=none")
  # The shell blocks of README.md and docs/ run as written, or say what runs them (packaging/check_doc_sh.lua).
  # The plain build runs them: under a sanitizer, lua5.4 (uninstrumented) cannot load the instrumented core.so
  # a block requires, and the blocks are the same text in every build.
  if(NOT TFDEV_SANITIZE AND NOT TFDEV_VALGRIND)
    add_test(NAME docs.sh_blocks
             COMMAND $<TARGET_FILE:tfdev> ${PROJECT_SOURCE_DIR}/packaging/check_doc_sh.lua ${PROJECT_SOURCE_DIR}
                     ${PROJECT_BINARY_DIR})
  endif()
  # docs/c-api.md is what packaging/gen_c_api.lua writes from the headers' comments today.
  add_test(NAME docs.c_api_current
           COMMAND sh -c "\"$0\" \"$1\" \"$2\" \"$3/c-api.md\" && cmp -s \"$2/docs/c-api.md\" \"$3/c-api.md\" || { echo 'docs/c-api.md is out of date: run build/bin/tfdev packaging/gen_c_api.lua .'; diff \"$2/docs/c-api.md\" \"$3/c-api.md\" | head -20; exit 1; }"
                   $<TARGET_FILE:tfdev> ${PROJECT_SOURCE_DIR}/packaging/gen_c_api.lua ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  # Every public header compiles on its own, as a host's first include would (C11, warnings as errors).
  add_test(NAME build.headers_self_contained
           COMMAND sh -c "for h in \"$0\"/tfdev/*.h; do printf '#include \"tfdev/%s\"\\n' \"\$(basename \"\$h\")\" > \"$1/hdr.c\"; $2 -std=c11 -Wall -Wextra -Werror -fsyntax-only -I\"$0\" -I\"$1/include\" $3 \"$1/hdr.c\" || { echo \"\$h does not compile on its own\"; exit 1; }; done"
                   ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER} "-I${LUA_INCLUDE_DIRS}")

  # The headers the CUDA kernels share with the C side compile as C++17 too (nvcc compiles .cu files
  # as C++), checked with the host's C++ compiler so a build without nvcc catches a C-only construct.
  find_program(TFDEV_CXX NAMES g++-12 g++ c++)
  if(TFDEV_CXX)
    set(cxx_headers runtime/kernels/device_math_elem.h gpu/kernels/index_math.h gpu/kernels/launch_config.h
        gpu/kernels/algo_cache.h gpu/kernels/conv_plan.h)
    set(cxx_includes "-I${PROJECT_SOURCE_DIR} -I${PROJECT_SOURCE_DIR}/include")
    if(TFDEV_WITH_CUDA)
      list(APPEND cxx_headers gpu/kernels/launch.h)
      foreach(dir ${CUDAToolkit_INCLUDE_DIRS})
        string(APPEND cxx_includes " -I${dir}")
      endforeach()
    endif()
    add_test(NAME build.shared_headers_cxx
             COMMAND sh -c "cxx=$1; inc=$2; shift 2; for h in \"$@\"; do printf '#include \"%s\"\\n' \"$h\" | $cxx -std=c++17 -Wall -Wextra -Werror -fsyntax-only $inc -x c++ - || { echo \"$h does not compile as C++\"; exit 1; }; done"
                     sh ${TFDEV_CXX} "${cxx_includes}" ${cxx_headers}
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  endif()
  # Only the backend module links CUDA: the runtime, core.so and tfdev start without it.
  add_test(NAME build.runtime_links_no_cuda
           COMMAND sh -c "for f in \"$@\"; do if readelf -d \"$f\" | grep -E 'NEEDED.*lib(cudart|cuda|cublas|cudnn)'; then echo \"$f links CUDA\"; exit 1; fi; done"
                   sh $<TARGET_FILE:tfdev_shared> $<TARGET_FILE:tfdev_lua> $<TARGET_FILE:tfdev_lua_core> $<TARGET_FILE:tfdev>)
  if(TFDEV_WITH_CUDA)
    # The CUDA module links the CUDA runtime only: cuBLAS, cuBLASLt and cuDNN are opened on first use
    # (gpu/kernels/cuda_libs.c), so loading the module costs a process megabytes, not hundreds.
    add_test(NAME build.cuda_module_links_cudart_only
             COMMAND sh -c "if readelf -d \"$0\" | grep -E 'NEEDED.*lib(cublas|cublasLt|cudnn)'; then echo \"$0 links a CUDA library it should open on first use\"; exit 1; fi"
                     $<TARGET_FILE:tfdev_cuda>)
  endif()
  # The shared libraries export the API of include/tfdev and nothing else.
  add_test(NAME build.exports_only_public_api
           COMMAND sh ${PROJECT_SOURCE_DIR}/packaging/check_exports.sh ${CMAKE_C_COMPILER} ${PROJECT_SOURCE_DIR}/include
                   "${LUA_INCLUDE_DIRS};${PROJECT_BINARY_DIR}/include" $<TARGET_FILE:tfdev_shared> $<TARGET_FILE:tfdev_lua>)
  # Installs into a temporary prefix and builds a small C host against it with find_package(tfdev),
  # with pkg-config, and with Lua linked statically; runs each (packaging/install_test/).
  if(NOT TFDEV_LUAROCKS) # a LuaRocks build installs the module alone
  add_test(NAME install.host
           COMMAND sh ${PROJECT_SOURCE_DIR}/packaging/install_test/run.sh ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER}
                   "${TFDEV_SANITIZE}" ${CMAKE_COMMAND} "${test_launcher}")
  set_tests_properties(install.host PROPERTIES LABELS install TIMEOUT 300 ENVIRONMENT "TFDEV_BACKENDS=none")
  endif()

  # busted specs, one ctest test each. Plain builds run them under lua5.4
  # through LUA_PATH/LUA_CPATH (the documented way to use the module);
  # sanitized builds run them under the instrumented tfdev interpreter,
  # since an uninstrumented lua5.4 cannot load an instrumented module.
  if(BUSTED_EXECUTABLE)
    file(GLOB TFDEV_SPECS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/spec/*_spec.lua)
    if(TFDEV_SANITIZE)
      set(spec_lua $<TARGET_FILE:tfdev>)
    elseif(TFDEV_VALGRIND)
      # busted re-runs itself with --lua split on spaces: give it one program that runs lua under valgrind.
      list(JOIN test_launcher " " launcher)
      file(WRITE ${PROJECT_BINARY_DIR}/lua-valgrind "#!/bin/sh\nexec ${launcher} ${LUA_EXECUTABLE} \"$@\"\n")
      file(CHMOD ${PROJECT_BINARY_DIR}/lua-valgrind PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
           GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
      set(spec_lua ${PROJECT_BINARY_DIR}/lua-valgrind)
    else()
      set(spec_lua ${LUA_EXECUTABLE})
    endif()
    set(spec_env
      "LUA_PATH=${PROJECT_BINARY_DIR}/${TFDEV_LUA_LDIR}/?.lua\;${PROJECT_BINARY_DIR}/${TFDEV_LUA_LDIR}/?/init.lua\;\;"
      "LUA_CPATH=${PROJECT_BINARY_DIR}/${TFDEV_LUA_CDIR}/?.so\;\;"
      "TFDEV_EXE=$<TARGET_FILE:tfdev>"
      "TFDEV_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "TFDEV_SANITIZER=${TFDEV_SANITIZE}")
    if(TFDEV_VALGRIND)
      list(APPEND spec_env "TFDEV_UNDER_VALGRIND=1") # specs that time or size work shrink it
    endif()
    foreach(spec ${TFDEV_SPECS})
      get_filename_component(name ${spec} NAME_WE)
      add_test(NAME spec.${name}
               COMMAND ${BUSTED_EXECUTABLE} --lua=${spec_lua} --output=utfTerminal ${spec}
               WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
      if(name IN_LIST TFDEV_TESTS_WITHOUT_BACKENDS)
        set_tests_properties(spec.${name} PROPERTIES ENVIRONMENT "${spec_env};TFDEV_BACKENDS=none")
      elseif(name IN_LIST TFDEV_TESTS_WITH_DATA_ONLY_FAKE_GPU)
        set_tests_properties(spec.${name} PROPERTIES ENVIRONMENT "${spec_env};TFDEV_BACKENDS=fakegpu;TFDEV_FAKE_GPU_MATH=0")
      elseif(name IN_LIST TFDEV_TESTS_WITH_FAKE_GPU)
        # TFDEV_DEVICE_SPEC_BACKEND names the backend the spec checks against the CPU (gpu.* below: cuda).
        set_tests_properties(spec.${name} PROPERTIES ENVIRONMENT "${spec_env};TFDEV_BACKENDS=fakegpu")
      else()
        set_tests_properties(spec.${name} PROPERTIES ENVIRONMENT "${spec_env}")
      endif()
    endforeach()
    # The device kernels against the CPU kernels on a real GPU (the GPU suite, label gpu): the same spec
    # with the CUDA backend; without a GPU its cases are pending, and a run where nothing ran but
    # pending cases is reported to ctest as skipped, not passed.
    if(TFDEV_WITH_CUDA)
      add_test(NAME gpu.device_kernels_spec
               COMMAND ${BUSTED_EXECUTABLE} --lua=${spec_lua} --output=utfTerminal ${PROJECT_SOURCE_DIR}/spec/device_kernels_spec.lua
               WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
      set_tests_properties(gpu.device_kernels_spec PROPERTIES LABELS gpu
                           ENVIRONMENT "${spec_env};TFDEV_BACKENDS=cuda;TFDEV_DEVICE_SPEC_BACKEND=cuda"
                           SKIP_REGULAR_EXPRESSION "(^|[^0-9])0 successes / 0 failures / 0 errors / [1-9][0-9]* pending")
    endif()
  else()
    message(WARNING "busted not found: the Lua specs will not run")
  endif()
endif()
