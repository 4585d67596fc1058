/*
 * Memory a pool took back is poisoned under AddressSanitizer, so a use after
 * it was given back is still caught though no free() happened (the frame
 * arena, the process entries' slabs). Without ASan the macros do nothing.
 */
#ifndef TRACER_POISON_H
#define TRACER_POISON_H

#if defined(__SANITIZE_ADDRESS__)
#define TRACER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRACER_ASAN 1
#endif
#endif

#ifdef TRACER_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#endif
