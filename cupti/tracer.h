/*
 * CUPTI side of the recorder: subscription, activity buffers, translation
 * of CUPTI records into trace records, exit flush.
 * Context: gp_tracer_start runs once inside cuInit (InitializeInjection);
 * gp_tracer_stop from the exit handler; gp_tracer_forked runs in a forked
 * child (atfork handler, async-signal context rules apply).
 */
#ifndef GP_TRACER_H
#define GP_TRACER_H

/* Returns 0 when tracing, -1 when the recorder stays passive (logged). */
int gp_tracer_start(void);
void gp_tracer_stop(void);
void gp_tracer_forked(void);

#endif
