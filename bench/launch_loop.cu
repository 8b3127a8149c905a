// Empty-kernel launch loop: the worst case for a tracer (every launch is
// a record, the GPU does nothing).
//
//   launch_loop [st] [N]            N launches <<<1,32>>> on the default
//                                   stream (default 200000)
//   launch_loop mt [N] [THREADS]    THREADS host threads (default 8), each
//                                   launching N (default 25000) on its own stream
//
// Prints "BENCH us_per_launch X": host wall time of the timed loop,
// including the final synchronization, divided by the launches in it.
// A warm-up of WARMUP launches per stream precedes it.  "BENCH launched N"
// counts every kernel launched, warm-up included.  "BENCH loop_t0_ns" and
// "BENCH loop_t1_ns" are the timed loop's start and end on CLOCK_REALTIME
// (the trace clock).  With BENCH_SETTLE_S=S it sleeps S seconds after
// creating the context, before the warm-up.  With BENCH_MARKS=1 the single-
// thread loop also prints "BENCH batch_end_ns K T": when launch K*100000 +
// 100000 returned, on CLOCK_REALTIME (read once a batch, printed after the loop).
#include <pthread.h>

#include "common.cuh"

#define WARMUP 1000

__global__ void empty_kernel(void) {}

struct worker {
	pthread_t thread;
	cudaStream_t stream;
	long n;
	pthread_barrier_t *start;
};

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;

	for (int i = 0; i < WARMUP; i++)
		empty_kernel<<<1, 32, 0, w->stream>>>();
	CK(cudaStreamSynchronize(w->stream));
	pthread_barrier_wait(w->start);
	for (long i = 0; i < w->n; i++)
		empty_kernel<<<1, 32, 0, w->stream>>>();
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(w->stream));
	return NULL;
}

static int run_mt(long n, int threads)
{
	struct worker *w = (struct worker *)calloc((size_t)threads, sizeof(*w));
	pthread_barrier_t start;
	double t0, t1;
	long long r0, r1;

	if (!w)
		return 1;
	CK(cudaFree(0));
	settle();
	pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
	for (int i = 0; i < threads; i++) {
		CK(cudaStreamCreateWithFlags(&w[i].stream, cudaStreamNonBlocking));
		w[i].n = n;
		w[i].start = &start;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	pthread_barrier_wait(&start);
	r0 = realtime_ns();
	t0 = now_s();
	for (int i = 0; i < threads; i++)
		pthread_join(w[i].thread, NULL);
	CK(cudaDeviceSynchronize());
	t1 = now_s();
	r1 = realtime_ns();
	printf("BENCH us_per_launch %.4f\n", (t1 - t0) * 1e6 / ((double)n * threads));
	printf("BENCH loop_s %.4f\n", t1 - t0);
	printf("BENCH launched %ld\n", (long)threads * (n + WARMUP));
	printf("BENCH loop_t0_ns %lld\nBENCH loop_t1_ns %lld\n", r0, r1);
	fflush(stdout);
	for (int i = 0; i < threads; i++)
		CK(cudaStreamDestroy(w[i].stream));
	pthread_barrier_destroy(&start);
	free(w);
	return 0;
}

/* BENCH_MARKS=1: the loop's clock every BATCH launches, printed after it (where it stalled). */
#define BATCH 100000L

static int run_st(long n)
{
	double t0, t1;
	long long r0, r1;
	const char *mk = getenv("BENCH_MARKS");
	long long *marks = mk && *mk == '1' ? (long long *)calloc((size_t)(n / BATCH + 1), sizeof(long long)) : NULL;

	CK(cudaFree(0));
	settle();
	for (int i = 0; i < WARMUP; i++)
		empty_kernel<<<1, 32>>>();
	CK(cudaDeviceSynchronize());
	r0 = realtime_ns();
	t0 = now_s();
	if (marks) {
		/* The same loop, the clock read once every BATCH launches. */
		for (long b = 0, i = 0; i < n; b++) {
			long e = i + BATCH < n ? i + BATCH : n;

			for (; i < e; i++)
				empty_kernel<<<1, 32>>>();
			marks[b] = realtime_ns();
		}
	} else {
		for (long i = 0; i < n; i++)
			empty_kernel<<<1, 32>>>();
	}
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	t1 = now_s();
	r1 = realtime_ns();
	for (long b = 0; marks && b * BATCH < n; b++)
		printf("BENCH batch_end_ns %ld %lld\n", b, marks[b]);
	free(marks);
	printf("BENCH us_per_launch %.4f\n", (t1 - t0) * 1e6 / (double)n);
	printf("BENCH loop_s %.4f\n", t1 - t0);
	printf("BENCH launched %ld\n", n + WARMUP);
	printf("BENCH loop_t0_ns %lld\nBENCH loop_t1_ns %lld\n", r0, r1);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int mt = 0, arg = 1;

	if (arg < argc && (strcmp(argv[arg], "mt") == 0 || strcmp(argv[arg], "st") == 0))
		mt = strcmp(argv[arg++], "mt") == 0;
	if (mt) {
		long n = arg < argc ? parse_count(argv[arg++]) : 25000;
		int threads = arg < argc ? (int)parse_count(argv[arg++]) : 8;

		return run_mt(n, threads);
	}
	return run_st(arg < argc ? parse_count(argv[arg]) : 200000);
}
