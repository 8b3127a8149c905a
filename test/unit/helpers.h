/*
 * Small helpers the unit tests share (linked into every test, as
 * every non-test_ file here is).  Test code, runs offline only.
 */
#ifndef GP_TEST_HELPERS_H
#define GP_TEST_HELPERS_H

/* Whether the file at path holds exactly want (up to 255 bytes); 0 when it cannot be read. */
int helpers_file_is(const char *path, const char *want);

/* Write text as the whole file at path (created or truncated); failures are the caller's checks. */
void helpers_put(const char *path, const char *text);

/*
 * n kernel records named "fake_kernel" into the recorder's ring (start
 * 1000 + i, 5 ns long), as a source emits them; the caller holds the
 * producer lock (gp_ring_lock()).
 */
void helpers_emit_kernels(int n);

/* Bytes this process has read so far (/proc/self/io rchar); 0 where unknown. */
unsigned long long helpers_rchar(void);

/* 1 in a sanitizer build: sanitizers reserve more address space than a test's limit allows. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#endif
