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
 * A source saw GPU work (a context was created): creates the trace file
 * when the sources defer it (gp_source.file_on_demand).  Any thread; not a
 * hot path (once per process; later calls return at an atomic load).  When
 * the file cannot be created the recorder goes passive with one line.
 */
void gp_recorder_need_file(void);

#endif
