/* TFD_VECTOR_CLONES marks a hot loop to be compiled three times: for the build's baseline (x86-64:
 * SSE2, what Debian's compilers target), for AVX2 and for AVX-512 (x86-64-v4), the dynamic loader
 * picking one per CPU (a GNU ifunc). tfdev is built without -march flags so that one library runs on
 * any x86-64 machine; these loops would otherwise run 4 floats at a time on a CPU that does 16
 * (Prelu after a 96x96x16 convolution: 23 us at SSE2 width, 12 us with the clones, on a Zen 4 core).
 *
 * Empty under ThreadSanitizer (the loader runs ifunc resolvers before TSan's runtime is up, and the
 * process dies before main), and where the compiler is not GCC or clang on x86-64. */
#ifndef TFDEV_RUNTIME_VECTOR_CLONES_H
#define TFDEV_RUNTIME_VECTOR_CLONES_H

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TFD_NO_VECTOR_CLONES 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TFD_NO_VECTOR_CLONES 1
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(TFD_NO_VECTOR_CLONES)
#define TFD_VECTOR_CLONES __attribute__((target_clones("default", "avx2", "arch=x86-64-v4")))
#else
#define TFD_VECTOR_CLONES
#endif

#endif
