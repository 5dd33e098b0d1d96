/*
 * alloc_counter.h: counts the allocations a test's server makes while a
 * window is open, on every thread but those that mark themselves not
 * counted (the test's clients). For tests that pin "no allocation per
 * tick / per request" in steady state.
 *
 * Counting: in a plain build this header defines malloc, calloc, realloc
 * and free over glibc's __libc_* functions, so libuv's and protobuf-c's
 * allocations count too; under AddressSanitizer (whose allocator must
 * stay) it installs the sanitizer's malloc hook instead. ANIM_ALLOC_TRACE=N
 * prints the stacks of the first N counted allocations, to find them.
 *
 * Header with definitions, included by exactly one file of a test binary:
 * every test binary links all of tests/support, and only these tests may
 * replace malloc.
 */
#ifndef ANIM_TEST_ALLOC_COUNTER_H
#define ANIM_TEST_ALLOC_COUNTER_H

#include <execinfo.h>
#include <stdlib.h>
#include <unistd.h>

static _Atomic int anim_alloc_counting;
static _Atomic long anim_alloc_count;
static __thread int anim_alloc_not_counted; /* set by a client thread */
static int anim_alloc_trace_left;

static void anim_alloc_note(void) {
  if (!anim_alloc_counting || anim_alloc_not_counted) return;
  anim_alloc_count++;
  if (anim_alloc_trace_left > 0) {
    anim_alloc_trace_left--;
    void *frames[16];
    int n = backtrace(frames, 16);
    anim_alloc_not_counted = 1;
    backtrace_symbols_fd(frames, n, 2);
    (void)!write(2, "--\n", 3);
    anim_alloc_not_counted = 0;
  }
}

#if defined(__SANITIZE_ADDRESS__)
#define ANIM_ALLOC_COUNTER "AddressSanitizer's malloc hook"
/* From the sanitizer runtime (sanitizer/allocator_interface.h, not installed with every compiler). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
static void anim_alloc_on_malloc(const volatile void *ptr, size_t size) {
  (void)ptr, (void)size;
  anim_alloc_note();
}
static void anim_alloc_on_free(const volatile void *ptr) { (void)ptr; }
static void anim_alloc_hook(void) {
  __sanitizer_install_malloc_and_free_hooks(anim_alloc_on_malloc, anim_alloc_on_free);
}
#else
#define ANIM_ALLOC_COUNTER "interposed malloc"
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);
void *malloc(size_t size) {
  anim_alloc_note();
  return __libc_malloc(size);
}
void *calloc(size_t n, size_t size) {
  anim_alloc_note();
  return __libc_calloc(n, size);
}
void *realloc(void *ptr, size_t size) {
  anim_alloc_note();
  return __libc_realloc(ptr, size);
}
void free(void *ptr) { __libc_free(ptr); }
static void anim_alloc_hook(void) {}
#endif

/* Installs the counter (window closed) and reads ANIM_ALLOC_TRACE. */
static inline void anim_alloc_counter_install(void) {
  anim_alloc_hook();
  const char *trace = getenv("ANIM_ALLOC_TRACE");
  anim_alloc_trace_left = trace ? atoi(trace) : 0;
  if (anim_alloc_trace_left) {
    void *frames[4];
    backtrace(frames, 4); /* loads what backtrace needs before the window */
  }
}

/* Opens the window (the count starts at 0). */
static inline void anim_alloc_counter_open(void) {
  anim_alloc_count = 0;
  anim_alloc_counting = 1;
}

/* Closes the window; returns what it counted. */
static inline long anim_alloc_counter_close(void) {
  anim_alloc_counting = 0;
  return anim_alloc_count;
}

#endif
