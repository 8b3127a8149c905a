/*
 * Trace loading shared by the subcommands (see load.h).  Runs offline only.
 */
#include "model/load.h"

#include <gpuprof/trace.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STDIN_NAME "(stdin)"
#define SLURP_FIRST (1u << 20)
/* A FIFO with no writer yet: said after this long (ms). */
#define FIFO_SAY_MS 1000

unsigned ga_load_fifo_wait_ms = 30000;

/*
 * How far buf[0..len) is a trace: the header (while *head), then whole
 * chunks whose magic, size and checksum hold.  *next is where the next
 * chunk starts;
 * returns 1 once something that is not a trace was seen (reading can stop:
 * the reader reports it at that offset), 0 while all is well so far.
 */
static int stream_check(const unsigned char *buf, size_t len, size_t *next, int *head)
{
	struct gp_chunk_header ch;

	if (*head) {
		const struct gp_file_header *h = (const void *)buf;

		if (len < sizeof(*h))
			return len >= 8 && memcmp(buf, GP_FILE_MAGIC, 8) != 0;
		if (memcmp(h->magic, GP_FILE_MAGIC, sizeof(h->magic)) || h->header_size < sizeof(*h) ||
		    h->header_size % 8 || h->header_size > 4096)
			return 1;
		*next = h->header_size;
		*head = 0;
	}
	while (len >= *next + sizeof(ch)) {
		memcpy(&ch, buf + *next, sizeof(ch));
		if (ch.magic != GP_CHUNK_MAGIC || ch.comp_size > GP_CHUNK_COMP_MAX ||
		    ch.raw_size > GP_CHUNK_RAW_MAX)
			return 1;
		if (len < *next + sizeof(ch) + ch.comp_size)
			return 0;
		if (gp_chunk_checksum(&ch, buf + *next + sizeof(ch), ch.comp_size) != ch.checksum)
			return 1;
		*next += sizeof(ch) + ch.comp_size;
	}
	return 0;
}

/*
 * Read what fd has into *buf after len bytes, doubling *cap when full
 * (glibc moves large blocks with mremap, not by copying): the bytes read,
 * 0 at its end, or minus an errno value.
 */
static ssize_t read_more(int fd, unsigned char **buf, size_t len, size_t *cap)
{
	unsigned char *p;

	if (len == *cap) {
		size_t ncap = *cap ? *cap * 2 : SLURP_FIRST;

		if (ncap < *cap || !(p = realloc(*buf, ncap)))
			return -ENOMEM;
		*buf = p;
		*cap = ncap;
	}
	for (;;) {
		ssize_t k = read(fd, *buf + len, *cap - len);

		if (k >= 0)
			return k;
		if (errno != EINTR)
			return -errno;
	}
}

/*
 * Read fd into in->buf, checking as it goes: reading stops at the first
 * byte that cannot belong to a trace, so a device or pipe of something
 * else (/dev/zero) costs no more than one read.  Returns 0 or an errno value.
 */
static int slurp(int fd, struct ga_input *in)
{
	unsigned char *buf = NULL, *p;
	size_t len = 0, cap = 0, next = 0;
	int head = 1;

	for (;;) {
		ssize_t k = read_more(fd, &buf, len, &cap);

		if (k < 0) {
			free(buf);
			return (int)-k;
		}
		if (k == 0)
			break;
		len += (size_t)k;
		if (stream_check(buf, len, &next, &head))
			break;
	}
	if (len && len < cap && (p = realloc(buf, len)))
		buf = p;
	in->mem = 1;
	in->buf = buf;
	in->len = len;
	return 0;
}

/*
 * Wait until fd, a FIFO or pipe opened without blocking, has a byte to
 * read or its writers came and went (end of file), at most
 * ga_load_fifo_wait_ms; say so on stderr once it took a second.  Then fd
 * blocks again, for slurp().  Returns 0, or -1 after printing why.
 */
static int fifo_wait(int fd, const char *name)
{
	unsigned waited = 0, said = 0;
	int fl;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		unsigned step = ga_load_fifo_wait_ms - waited;
		int r;

		if (!said && waited < FIFO_SAY_MS && step > FIFO_SAY_MS - waited)
			step = FIFO_SAY_MS - waited;
		r = poll(&p, 1, (int)step);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "gpuprof: %s: cannot read: %s\n", name, strerror(errno));
			return -1;
		}
		if (r > 0)
			break;
		waited += step;
		if (waited >= ga_load_fifo_wait_ms) {
			fprintf(stderr, "gpuprof: %s: a FIFO that nothing wrote to in %u s: no "
				"trace read\n", name, ga_load_fifo_wait_ms / 1000);
			return -1;
		}
		if (!said) {
			fprintf(stderr, "gpuprof: %s: a FIFO without a writer: waiting up to %u s "
				"for one\n", name, ga_load_fifo_wait_ms / 1000);
			said = 1;
		}
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		fprintf(stderr, "gpuprof: %s: cannot read: %s\n", name, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Copy fd into an unlinked temporary file, checking as slurp() does (the
 * header, then each whole chunk's magic, size and checksum, stopping at the
 * first byte that cannot belong to a trace), and keeping in memory only the
 * chunk being checked: a trace read from a pipe costs its largest chunk of
 * memory, not its size.  The reader then reads the file under the input's
 * name (ga_reader_alias), as often as the analysis needs.  Returns 0, an
 * errno value, or -1 when no temporary file can be made (slurp() then).
 */
static int spill(int fd, struct ga_input *in)
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, next = 0;
	int out = ga_util_tmpfd("pipe", NULL), head = 1, rc = 0;

	if (out < 0)
		return -1;
	for (;;) {
		ssize_t k = read_more(fd, &buf, len, &cap);
		int stop;

		if (k <= 0) {
			rc = (int)-k;
			break;
		}
		len += (size_t)k;
		stop = stream_check(buf, len, &next, &head);
		/* What is checked goes to the file; the chunk under way stays. */
		if (!stop && !head && next) {
			if ((rc = ga_util_write_all(out, buf, next)))
				break;
			memmove(buf, buf + next, len - next);
			len -= next;
			next = 0;
		}
		if (stop)
			break;
	}
	/* The rest (a chunk cut short, or what is not a trace): the reader says what. */
	if (!rc)
		rc = ga_util_write_all(out, buf, len);
	free(buf);
	if (!rc && ga_reader_alias(in->name, out) < 0)
		rc = -1;
	if (rc) {
		close(out);
		return rc;
	}
	in->fd1 = out + 1;
	return 0;
}

/* A pipe's trace: copied into a temporary file, else (no room for one) read into memory. */
static int take_pipe(int fd, struct ga_input *in)
{
	int rc = spill(fd, in);

	return rc == -1 ? slurp(fd, in) : rc;
}

/*
 * Standard input, pipes and FIFOs are copied into temporary files (into
 * memory where none can be made: spill()); regular files,
 * directories and what cannot be opened are left to the reader, which
 * reads each file afresh and says what is wrong with it.  A path is
 * opened without blocking and its type checked on the open descriptor:
 * a FIFO that no program writes to is waited for a bounded time
 * (fifo_wait()), and a device (/dev/zero, a terminal, a disk) is refused.
 */
static int open_one(struct ga_input *in, const char *path)
{
	struct stat st;
	int fd, rc;

	memset(in, 0, sizeof(*in));
	in->path = path;
	in->name = path;
	if (!strcmp(path, "-")) {
		in->name = STDIN_NAME;
		rc = take_pipe(STDIN_FILENO, in);
	} else {
		/* O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise. */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			return 0;
		if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ||
		    S_ISSOCK(st.st_mode)) {
			close(fd);
			return 0;
		}
		if (!S_ISFIFO(st.st_mode)) {
			close(fd);
			fprintf(stderr, "gpuprof: %s: a device, not a trace: refused (a trace is "
				"a file, a pipe or '-')\n", path);
			return -1;
		}
		if (fifo_wait(fd, path)) {
			close(fd);
			return -1;
		}
		rc = take_pipe(fd, in);
		close(fd);
	}
	if (rc) {
		fprintf(stderr, "gpuprof: %s: cannot read: %s\n", in->name, strerror(rc));
		return -1;
	}
	return 0;
}

int ga_load_open(struct ga_input *in, char *const *paths, int n)
{
	int i, stdin_seen = 0;

	for (i = 0; i < n; i++) {
		if (!strcmp(paths[i], "-") && stdin_seen++) {
			fputs("gpuprof: standard input ('-') named more than once\n", stderr);
			ga_load_close(in, i);
			return -1;
		}
		if (open_one(&in[i], paths[i])) {
			ga_load_close(in, i);
			return -1;
		}
	}
	return 0;
}

void ga_load_close(struct ga_input *in, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free(in[i].buf);
		if (in[i].fd1) {
			ga_reader_unalias(in[i].name);
			close(in[i].fd1 - 1);
		}
		memset(&in[i], 0, sizeof(in[i]));
	}
}

int ga_load_warnings(const struct ga_model *m, struct ga_buf *out)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < m->nfiles; i++) {
		const struct ga_file *f = &m->files[i];
		char line[512];

		if (f->info.damaged) {
			ga_reader_describe(&f->info, line, sizeof(line));
			rc |= ga_buf_printf(out, "%s: %s\n", f->path, line);
		} else if (!f->info.finished) {
			rc |= ga_buf_printf(out, "%s: no end record: the recorder did not "
					    "finish (program killed, or still running); the "
					    "report covers what was written\n", f->path);
		}
	}
	if (m->malformed)
		rc |= ga_buf_printf(out, "%" PRIu64 " records too short for their type "
				    "were skipped\n", m->malformed);
	if (m->bad_refs)
		rc |= ga_buf_printf(out, "%" PRIu64 " references to strings the trace "
				    "never defined\n", m->bad_refs);
	if (m->unknown)
		rc |= ga_buf_printf(out, "%" PRIu64 " records of types this reader does "
				    "not know were skipped (written by a newer gpuprof?)\n",
				    m->unknown);
	return rc ? -1 : 0;
}

int ga_load_print_warnings(const struct ga_model *m)
{
	struct ga_buf w = { 0 };
	const char *p, *nl;

	if (ga_load_warnings(m, &w)) {
		ga_buf_free(&w);
		fprintf(stderr, "gpuprof: out of memory\n");
		return -1;
	}
	for (p = w.p; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		fprintf(stderr, "gpuprof: warning: %.*s\n", (int)(nl - p), p);
	}
	ga_buf_free(&w);
	return 0;
}

int ga_load_inputs(struct ga_model *m, const struct ga_input *in, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		int rc;

		if (in[i].mem)
			rc = ga_model_add_mem(m, in[i].name, in[i].buf, in[i].len);
		else /* a pipe's copy is read under the input's name */
			rc = ga_model_add_file(m, in[i].fd1 ? in[i].name : in[i].path);

		if (rc != GA_READ_OK) {
			/* Built again by the caller without pacing (model.h ahead_retry): no error. */
			if (!m->ahead_retry)
				fprintf(stderr, "gpuprof: %s\n", m->err);
			return -1;
		}
	}
	if (ga_model_finish(m)) {
		/* The timeline's rows say why they failed (a temporary file, say). */
		if (!m->ahead_retry)
			fprintf(stderr, "gpuprof: %s\n", m->err[0] ? m->err : "out of memory");
		return -1;
	}
	return m->warnings_later ? 0 : ga_load_print_warnings(m);
}
