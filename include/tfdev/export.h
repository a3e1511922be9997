/* TFD_API: marks the functions of tfdev's public C API (the headers of include/tfdev).
 *
 * libtfdev and libtfdev_lua are compiled with -fvisibility=hidden, so a function is exported from
 * the shared libraries only when its declaration carries TFD_API: internal tfd_* helpers stay
 * private, and a host cannot come to depend on them (the ctest build.exports_only_public_api
 * checks the exported names against these headers). For a program that includes the headers the
 * attribute changes nothing. */
#ifndef TFDEV_EXPORT_H
#define TFDEV_EXPORT_H

/* A build may define TFD_API itself (the export check does, to list the declarations). */
#ifndef TFD_API
#if defined(__GNUC__) || defined(__clang__)
#define TFD_API __attribute__((visibility("default")))
#else
#define TFD_API
#endif
#endif

#endif
