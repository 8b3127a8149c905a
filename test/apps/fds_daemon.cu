/*
 * A program that treats descriptors as its own, as daemons do.
 *
 *   fds_daemon close      after its first GPU work, closes descriptors it did
 *                         not open: the trace file and gpuprof's eventfd
 *   fds_daemon dup2 FILE  opens FILE and dup2()s it over those descriptors,
 *                         writes "program data" to it, then checks at the end
 *                         that FILE holds exactly that
 *   fds_daemon chdir      changes to / and sets umask 077 first thing, before
 *                         CUDA starts
 *
 * Then more GPU work.  Truth: kernel.count.fd_work, kernel.total,
 * own_file_ok (dup2 mode).
 */
#include <cuda_runtime.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

extern "C" __global__ void fd_work(int *x)
{
	if (threadIdx.x == 0)
		x[blockIdx.x] += 1;
}

/* Descriptors that are neither stdio, nor CUDA's device files, nor the listing's. */
static int foreign_fds(int *out, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	REQUIRE(d != NULL, "cannot list /proc/self/fd");
	while ((e = readdir(d)) && n < max) {
		char link[64], target[512];
		int fd = atoi(e->d_name);
		ssize_t len;

		if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		/*
		 * The trace file, and gpuprof's eventfd (above 200, where it
		 * keeps its descriptors); CUDA's own are left alone, or CUDA
		 * itself would break.
		 */
		if (strstr(target, ".gpuprof") || (fd >= 200 && strstr(target, "eventfd")))
			out[n++] = fd;
	}
	closedir(d);
	return n;
}

static void work(int *d, int n)
{
	for (int i = 0; i < n; i++)
		fd_work<<<1, 32>>>(d);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "close";
	int fds[64], nfd = 0, own = -1, *d;

	if (!strcmp(mode, "chdir")) {
		REQUIRE(chdir("/") == 0, "chdir");
		umask(077);
	}
	CK(cudaMalloc(&d, 64 * sizeof(int)));
	work(d, 300);
	if (!strcmp(mode, "close") || !strcmp(mode, "dup2")) {
		nfd = foreign_fds(fds, 64);
		REQUIRE(nfd > 0, "no descriptor of gpuprof's found (is it traced?)");
	}
	if (!strcmp(mode, "close")) {
		for (int i = 0; i < nfd; i++)
			close(fds[i]);
	} else if (!strcmp(mode, "dup2")) {
		REQUIRE(argc > 2, "dup2 needs a file");
		own = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
		REQUIRE(own >= 0, "cannot open %s", argv[2]);
		for (int i = 0; i < nfd; i++)
			REQUIRE(dup2(own, fds[i]) == fds[i], "dup2");
		REQUIRE(write(fds[0], "program data", 12) == 12, "write");
	}
	work(d, 200);
	CK(cudaFree(d));
	if (own >= 0) {
		char buf[64];
		ssize_t got;

		/* Past the recorder's last writes: its end comes at exit, so look then too. */
		got = pread(own, buf, sizeof(buf), 0);
		REQUIRE(got == 12 && !memcmp(buf, "program data", 12), "own file holds %zd bytes", got);
		printf("TRUTH own_file_ok 1\n");
	}
	printf("TRUTH kernel.count.fd_work 500\n");
	printf("TRUTH kernel.total 500\n");
	return 0;
}
