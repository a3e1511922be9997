# Compiler flags for every C file tfdev builds: full optimisation, warnings, sanitizers. Included by the
# top-level CMakeLists.txt.
# The default build is optimised fully: RelWithDebInfo at -O3, not CMake's -O2, so that it and
# Release run the kernels at the same speed.
string(REPLACE "-O2" "-O3" CMAKE_C_FLAGS_RELWITHDEBINFO "${CMAKE_C_FLAGS_RELWITHDEBINFO}")

# Warnings and sanitizers apply to every C file we build (the CUDA kernels' flags are below).
add_compile_options($<$<COMPILE_LANGUAGE:C>:-Wall$<SEMICOLON>-Wextra$<SEMICOLON>-Wshadow$<SEMICOLON>-Wstrict-prototypes$<SEMICOLON>-Wmissing-prototypes>)
if(TFDEV_WERROR)
  add_compile_options($<$<COMPILE_LANGUAGE:C>:-Werror>)
endif()
if(TFDEV_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:C>:-fsanitize=${TFDEV_SANITIZE}$<SEMICOLON>-fno-omit-frame-pointer$<SEMICOLON>-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${TFDEV_SANITIZE})
endif()
add_compile_definitions(_GNU_SOURCE)
