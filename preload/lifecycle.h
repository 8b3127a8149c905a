/*
 * The recorder's lifecycle: one start (inside cuInit), periodic flushes,
 * one end (exit handler or a fatal signal), fork.
 * Context: gp_recorder_start on the thread that initializes CUDA;
 * gp_recorder_stop on the exit path; gp_recorder_forked in a forked child
 * (atfork handler: only flips flags).
 */
#ifndef GP_LIFECYCLE_H
#define GP_LIFECYCLE_H

/*
 * Starts tracing once, whoever calls first.  Returns 0 when tracing, -1
 * when the recorder stays passive (disabled, or the reason was logged).
 */
int gp_recorder_start(void);
/* Finishes the trace (idempotent; only in the process that started it). */
void gp_recorder_stop(void);
void gp_recorder_forked(void);
/*
 * 1 when the recorder traces now (started, not dormant, and under control
 * a window open): a source that claims CUPTI late starts tracing then.
 */
int gp_recorder_tracing(void);
/*
 * A source saw GPU work (a context was created): creates the trace file
 * when the sources defer it (gp_source.file_on_demand).  Any thread; not a
 * hot path (once per process; later calls return at an atomic load).  When
 * the file cannot be created the recorder goes passive with one line.
 */
void gp_recorder_need_file(void);

/*
 * Asks for a flight-recorder dump (trigger GP_DUMP_*, detail as in
 * gp_rec_flight), made soon on the recorder's own thread.  Any thread,
 * async-signal-safe (an atomic and a write(2)); no effect without a
 * flight recorder.  Requests before the dump starts are merged.
 */
void gp_recorder_request_dump(int trigger, int detail);

/*
 * Asks for a flush soon, ahead of the interval: a source whose records
 * wait on others still in CUPTI's buffers (hardware metrics) frees its
 * room sooner.  Any thread; an atomic and, once per request, a write(2).
 */
void gp_recorder_flush_soon(void);

#endif
