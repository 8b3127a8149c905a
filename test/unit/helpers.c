/*
 * Small helpers the unit tests share (see helpers.h).  Test code,
 * runs offline only.
 */
#include "helpers.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "recorder.h"

int helpers_file_is(const char *path, const char *want)
{
	char buf[256] = { 0 };
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == (ssize_t)strlen(want) && !memcmp(buf, want, (size_t)n);
}

void helpers_put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

void helpers_emit_kernels(int n)
{
	uint32_t name = gp_emit_string("fake_kernel");

	for (int i = 0; i < n; i++) {
		struct gp_rec_kernel *k = gp_emit(GP_REC_KERNEL, sizeof(*k));

		if (k) {
			k->start = 1000 + (uint64_t)i;
			k->end = k->start + 5;
			k->name = name;
		}
	}
}

unsigned long long helpers_rchar(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	unsigned long long v = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %llu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}
