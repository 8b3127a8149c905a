/*
 * The metrics cache (GPUPROF_METRICS_CACHE=DIR): the values of a profiled
 * launch kept in one file per key, so that a later run records them
 * without replaying the kernel.  The key is the GPU model, the driver and
 * CUPTI versions, the hash of the module image that defines the kernel
 * (from CUPTI's module-loaded callback), the kernel's mangled name, its
 * launch configuration and the metric set.
 *
 * A lazily loaded module is reported after the launch that loaded it, so
 * the file is named by the rest of the key and holds the module hash: a
 * launch whose module is not known yet gets the values with the module
 * they were measured with, to be confirmed (gp_mcache_module) before they
 * are recorded.
 *
 * Files are created under a temporary name with O_EXCL and renamed into
 * place, so concurrent processes (ranks of one job) never see half a file;
 * symbolic links are never followed; a file that fails its checks is
 * ignored with one gp_log line and rewritten after the next replay.
 *
 * Context: gp_mcache_open at attach (one thread); gp_mcache_module_loaded
 * from CUPTI's resource callback (any thread, own mutex); the rest under
 * the caller's profiling lock.  No stdio.
 */
#ifndef GP_MCACHE_H
#define GP_MCACHE_H

#include <stddef.h>
#include <stdint.h>

#define GP_MCACHE_KEY_MAX 8192

struct gp_mcache_key {
	uint64_t hash;             /* of text: the file name */
	uint64_t name;             /* hash of the kernel name (gp_mcache_module) */
	uint64_t module;           /* image hash; 0 not known yet */
	size_t len;
	char text[GP_MCACHE_KEY_MAX]; /* everything but the module */
};

#define GP_MCACHE_AMBIGUOUS UINT64_MAX

/*
 * Opens (creating it if missing) the cache directory.  cupti_version is
 * cuptiGetVersion's; cuda_version the driver's CUDA version, used when
 * the kernel module's version cannot be read.  0, or -1 (logged: no cache).
 */
int gp_mcache_open(const char *dir, uint32_t cupti_version, int cuda_version);

/* 1 when a cache directory is open. */
int gp_mcache_on(void);

/* A module was loaded: its kernels' names map to the hash of its image. */
void gp_mcache_module_loaded(const void *image, size_t size);

/*
 * The key of a launch: 0 complete, 1 without its module (not seen yet:
 * values may be read, to be confirmed, but not stored), -1 none (cache
 * off, a name two different images define, a key too long).
 */
int gp_mcache_key(struct gp_mcache_key *k, const char *gpu, const char *chip,
		  const char *kernel, const uint32_t grid[3], const uint32_t block[3],
		  uint32_t smem, uint64_t set_hash);

/*
 * Values stored under k: 1 and values[n], *duration, *passes and *module
 * (the image they were measured with; equal to k->module when that is
 * known) filled; 0 when there is none (or the file was bad: logged once
 * per file).
 */
int gp_mcache_get(const struct gp_mcache_key *k, double *values, size_t n,
		  uint64_t *duration, uint32_t *passes, uint64_t *module);

/* The image hash of a kernel name hash: 0 not seen yet, or GP_MCACHE_AMBIGUOUS. */
uint64_t gp_mcache_module(uint64_t name);

/* Stores values[n] under k (module known), replacing any earlier file atomically. */
void gp_mcache_put(const struct gp_mcache_key *k, const double *values, size_t n,
		   uint64_t duration, uint32_t passes);

/* A 64-bit hash of bytes (not cryptographic). */
uint64_t gp_mcache_hash(uint64_t h, const void *p, size_t n);

#endif
