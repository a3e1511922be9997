/* cuBLAS, cuBLASLt and cuDNN opened on first use (see cuda_libs.h). */
#include "cuda_libs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define TFD_STR_(x) #x
#define TFD_STR(x) TFD_STR_(x) /* expands the headers' macros first: cublasCreate -> "cublasCreate_v2" */

/* Where to look, in order: the dynamic loader's search path by soname, then the directory the build
 * found the library in (the module's own RUNPATH does not apply to dlopen from it on every glibc). */
#ifndef TFD_CUDA_LIBRARY_DIR
#define TFD_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif
#ifndef TFD_CUDNN_LIBRARY_DIR
#define TFD_CUDNN_LIBRARY_DIR TFD_CUDA_LIBRARY_DIR
#endif

/* The first of names[] that opens; NULL with why naming the first one and dlerror's text. */
static void *open_first(const char *const *names, size_t n, char *why, size_t cap) {
  const char *err = NULL;
  for (size_t i = 0; i < n; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    if (!err) err = dlerror();
  }
  snprintf(why, cap, "could not open %s: %s", names[0], err ? err : "not found");
  return NULL;
}

/* A symbol of h into *slot; false with why when it is missing. */
static bool lookup(void *h, const char *lib, const char *name, void **slot, char *why, size_t cap) {
  *slot = dlsym(h, name);
  if (!*slot) snprintf(why, cap, "%s has no %s", lib, name);
  return *slot != NULL;
}

/* ---- cuBLAS and cuBLASLt ---- */
static struct {
  pthread_once_t once;
  tfd_cuda_blas fns;
  bool ok;
  char why[512];
} blas = {PTHREAD_ONCE_INIT};

static void load_blas(void) {
  static const char *const blas_names[] = {"libcublas.so." TFD_STR(CUBLAS_VER_MAJOR), "libcublas.so",
                                           TFD_CUDA_LIBRARY_DIR "/libcublas.so." TFD_STR(CUBLAS_VER_MAJOR)};
  static const char *const lt_names[] = {"libcublasLt.so." TFD_STR(CUBLAS_VER_MAJOR), "libcublasLt.so",
                                         TFD_CUDA_LIBRARY_DIR "/libcublasLt.so." TFD_STR(CUBLAS_VER_MAJOR)};
  void *b = open_first(blas_names, sizeof blas_names / sizeof blas_names[0], blas.why, sizeof blas.why);
  void *lt = b ? open_first(lt_names, sizeof lt_names / sizeof lt_names[0], blas.why, sizeof blas.why) : NULL;
  bool ok = b && lt;
#define FROM_BLAS(f) ok = ok && lookup(b, blas_names[0], TFD_STR(f), (void **)&blas.fns.f, blas.why, sizeof blas.why);
#define FROM_LT(f) ok = ok && lookup(lt, lt_names[0], TFD_STR(f), (void **)&blas.fns.f, blas.why, sizeof blas.why);
  TFD_CUBLAS_FUNCTIONS(FROM_BLAS)
  TFD_CUBLASLT_FUNCTIONS(FROM_LT)
#undef FROM_BLAS
#undef FROM_LT
  blas.ok = ok; /* the libraries stay open for the process's life, as the module does */
}

const tfd_cuda_blas *tfd_cuda_blas_load(char *why, size_t cap) {
  pthread_once(&blas.once, load_blas);
  if (!blas.ok && why && cap) snprintf(why, cap, "%s", blas.why);
  return blas.ok ? &blas.fns : NULL;
}

/* ---- cuDNN ---- */
#ifdef TFDEV_HAVE_CUDNN
static struct {
  pthread_once_t once;
  tfd_cuda_dnn fns;
  bool ok;
  char why[512];
} dnn = {PTHREAD_ONCE_INIT};

static void load_dnn(void) {
  static const char *const names[] = {"libcudnn.so." TFD_STR(CUDNN_MAJOR), "libcudnn.so",
                                      TFD_CUDNN_LIBRARY_DIR "/libcudnn.so." TFD_STR(CUDNN_MAJOR)};
  void *h = open_first(names, sizeof names / sizeof names[0], dnn.why, sizeof dnn.why);
  bool ok = h != NULL;
#define FROM_DNN(f) ok = ok && lookup(h, names[0], TFD_STR(f), (void **)&dnn.fns.f, dnn.why, sizeof dnn.why);
  TFD_CUDNN_FUNCTIONS(FROM_DNN)
#undef FROM_DNN
  dnn.ok = ok;
}

const tfd_cuda_dnn *tfd_cuda_dnn_load(char *why, size_t cap) {
  pthread_once(&dnn.once, load_dnn);
  if (!dnn.ok && why && cap) snprintf(why, cap, "%s", dnn.why);
  return dnn.ok ? &dnn.fns : NULL;
}
#endif
