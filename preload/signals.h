/*
 * Finishing the trace when a signal ends the program.
 *
 * Context: gp_signals_install runs once on the recorder's start path; the
 * handler runs on whichever application thread takes the signal and does
 * only async-signal-safe work: it asks the recorder's own thread to finish
 * the trace (the request callback must be async-signal-safe: an atomic
 * store and a write(2)), waits for it with a bound, then lets the signal do
 * what it would have done without gpuprof.
 *
 * Termination signals (TERM, HUP, INT, QUIT, PIPE) and faults (SEGV, BUS,
 * FPE, ILL) whose disposition the program set itself are passed straight to
 * the program's handler: the program owns them and may well go on running.
 * With the default disposition the trace is finished first, then the
 * default action is restored and the signal raised again, so the exit
 * status is unchanged.  SIGABRT is terminal whatever its handler does, so
 * the trace is finished first, then the program's handler (if any) runs.
 * Ignored signals are left alone.  SIGKILL cannot be caught: a killed
 * program loses at most one flush interval.
 */
#ifndef GP_SIGNALS_H
#define GP_SIGNALS_H

struct gp_signal_ops {
	void (*request_finish)(int sig); /* async-signal-safe; sig: the one that came */
	int (*finished)(void);         /* async-signal-safe: 1 once the file is closed */
	int (*owner)(void);            /* async-signal-safe: 1 in the traced process */
};

/* Installs the handlers (once).  wait_ms bounds each handler's wait. */
void gp_signals_install(const struct gp_signal_ops *ops, int wait_ms);

/*
 * The flight recorder's dump signal: on(sig) runs in the handler (it must
 * be async-signal-safe).  Only a signal the program leaves at its default
 * is taken; returns 0, or -1 when the program handles or ignores sig.
 */
int gp_signals_install_dump(int sig, void (*on)(int sig));

#endif
