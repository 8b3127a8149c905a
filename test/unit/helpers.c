/*
 * Small file helpers the unit tests share (see helpers.h).  Test code,
 * runs offline only.
 */
#include "helpers.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
