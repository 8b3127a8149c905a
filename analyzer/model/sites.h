/*
 * Launch sites: the host call stacks kernels were launched from
 * ("gpuprof run --backtrace"), aggregated by collapsed stack.  Runs offline
 * only.
 *
 * Attribution: kernel -> its correlation's GP_REC_CORR_STACK in the same
 * file; a kernel of a graph -> the GP_REC_GRAPH_NODE of its node when that
 * names a stack, else the graph launch's correlation.  Stack and frame ids
 * are per file.  CORR_STACK records precede the activities they map, while
 * STACK and FRAME records come later (they are written periodically), so
 * kernels are counted per (process, stack id, kernel name) as they stream
 * by and stacks are turned into sites once everything has been read.  A
 * graph node whose GRAPH_NODE record has not been seen yet is counted
 * apart and settled then too.
 *
 * A site is the collapsed stack: the innermost frame outside gpuprof, CUPTI,
 * the CUDA driver and runtime and libunwind (by module), and outside a
 * static runtime and nvcc's launch stubs (by name, or by line in nvcc's
 * .stub.c; sites.c), then its callers up to the depth asked for, joined
 * by " ← ".  Frames read "function (file:line)",
 * "function+0xOFF (module)", or "module+0xOFF" without a symbol; Python
 * frames (GP_REC_PYFRAME) read "file.py:line function" (the file's last
 * component) and are always the program's.
 *
 * Folded frames: the Python frames of runtime libraries stand between the
 * code that launched a kernel and its caller (Triton's and Inductor's
 * launchers, the wrappers torch.compile puts around generated code,
 * nn.Module's call plumbing, "<string>" shims made with exec), so a
 * collapsed site and the frames a site lists leave them out: a Python
 * frame folds when its file contains one of the patterns' paths (and, for
 * a pattern "PATH:FUNCTION", its function is FUNCTION or ends in
 * ".FUNCTION").  GA_SITES_FOLD_DEFAULT is the list unless st->fold
 * names another; a stack whose frames all fold keeps them.
 * Whole stacks (ga_sites_user_frames: pprof) keep every frame.
 *
 * Symbolization (st->symbolize): the frames a site shows are looked up in
 * the symbols and debug information of their modules (symbolize.h, libdw),
 * only in a file whose build-id is the one the trace recorded for the
 * module (GP_REC_MODULE), one session per module and pass, each (module,
 * offset) once; traces recorded without build-ids are looked up at the
 * recorded path, unverified.  Each module's verdict (st->mods) says why
 * its frames kept their module+0xOFF names.  A line found names the frame "function (file:line)" with
 * the function the debug information gives for it (the outermost of those
 * inlined there, the one the address is really in); a function found without a line names a frame dladdr() could not,
 * as "function (module+0xOFF)".  Frames looked up are those the output
 * shows: the first depth frames of the stacks behind kept kernels, and for
 * JSON (st->list_frames) the frames each site lists; lookups go on, pass
 * after pass, while names found move a site's first frame on.
 *
 * Use: ga_sites_setup(), ga_sites_bind() to the model before it reads
 * the files, ga_sites_finish() after ga_model_finish().  Streaming
 * exporters that need a kernel's site while it streams by (CSV) call
 * ga_sites_scan() first: it reads the STACK and FRAME records ahead.
 *
 * Memory: one entry per stack, frame, graph node with a stack, and
 * per distinct (stack, kernel name) pair launched, plus the stacks of the
 * last GA_SITES_CORR_RING correlation ids of the file being read (8 MiB
 * at most): a kernel whose CORR_STACK record came more than a million
 * correlation ids before it is counted without a stack, as a kernel whose
 * call the NVTX scan's ring lost is unattributed (ranges.h).
 */
#ifndef GA_MODEL_SITES_H
#define GA_MODEL_SITES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "model/ranges.h"
#include "base/util.h"

#define GA_SITES_DEPTH 3          /* frames of a collapsed site by default */
#define GA_SITES_CORR_RING (1u << 20) /* correlation ids whose stacks are kept */

/* A correlation's stack id; stack 0: an empty entry. */
struct ga_sites_corr {
	uint32_t corr, stack;
};
/* The Python frames folded by default (report and export --fold-frames). */
#define GA_SITES_FOLD_DEFAULT                                                         \
	"/triton/,/torch/_inductor/,/torch/_dynamo/,/torch/_functorch/,"            \
	"/torch/autograd/function.py,/torch/nn/modules/module.py:_call_impl,"      \
	"/torch/nn/modules/module.py:_wrapped_call_impl,<string>"

/* getopt_long values of --fold-frames and --full-stacks (report, export; cmd/options.c lists them). */
#define GA_SITES_OPT_FOLD 0x1300
#define GA_SITES_OPT_FULL 0x1301

/*
 * Takes GA_SITES_OPT_FOLD's or _FULL's argument into *fold (st->fold's
 * value): 1 when c is one of them, 0 when not.
 */
static inline int ga_sites_option(int c, const char *arg, const char **fold)
{
	if (c == GA_SITES_OPT_FOLD)
		*fold = arg;
	else if (c == GA_SITES_OPT_FULL)
		*fold = "";
	else
		return 0;
	return 1;
}
#define GA_SITES_MAX_FRAMES 64    /* frames listed per site in exports */

struct ga_stack_frame {
	uint64_t offset;           /* pc - module base */
	uint32_t module, function, file, line;  /* strtab ids; line a number */
	uint32_t sym_offset;
	uint32_t internal;         /* the recorder's, CUPTI's, CUDA's or libunwind's */
	uint32_t text;             /* strtab id of the frame's text, 0 until built */
	uint32_t sym;              /* GA_SITES_SYM_* bits */
	uint32_t python;           /* a Python frame (GP_REC_PYFRAME): file, line, function */
	uint32_t recfn;            /* function as recorded (dladdr in the process), 0 none */
	uint32_t folded;           /* a Python frame of a runtime library (st->fold) */
};


/* A module of the frames, as its GP_REC_MODULE record (or its absence) describes it. */
#define GA_SITES_MOD_RECORDED 0u  /* a MODULE record */
#define GA_SITES_MOD_LEGACY 1u    /* the trace has no MODULE records at all */
#define GA_SITES_MOD_MISSING 2u   /* the trace has MODULE records, none for it */

struct ga_sites_mod {
	uint32_t name, path;       /* strtab ids: as frames name it; absolute path, 0 none */
	uint32_t kind;             /* GA_SITES_MOD_* */
	uint32_t nid;              /* build-id bytes */
	uint8_t id[64];            /* GP_BUILD_ID_MAX */
	int verdict;               /* enum ga_sym_verdict once looked up, 0 before */
	int verdict_sites;         /* verdict once the sites' own frames were looked up */
	uint32_t why;              /* strtab id: the file used, or why none was */
};

#define GA_SITES_SYM_QUEUED 1u    /* looked up, or about to be */
#define GA_SITES_SYM_FN 2u        /* function from debug information, sym_offset unknown */

/* What a lookup found for one (module, offset): strtab ids, line 0 none. */
struct ga_stack_sym {
	uint32_t function, file, line;
};

struct ga_stack {
	uint32_t proc, id;         /* model process, the file's stack id */
	uint32_t off, n;           /* frame ids: pcs[off .. off + n), innermost first */
	uint32_t site;             /* site index + 1 after finish, 0 none */
	uint32_t text;             /* strtab id of the collapsed site, 0 until built */
	uint64_t ns;               /* GPU time of the kernels it launched */
};

/* Kernels of one name launched from one stack (or one deferred graph node). */
struct ga_stack_count {
	uint32_t proc, stack;      /* the file's stack id, 0 none; deferred: the fallback */
	uint32_t name;             /* strtab id of the kernel name */
	uint32_t next;             /* deferred: next count of the same node, + 1 */
	uint64_t node;             /* deferred graph node, else 0 */
	uint64_t count, ns;
	int deferred;
	uint32_t bwd_seq;          /* launched inside a backward node's NVTX range "...Backward..., seq = N": N + 1 */
};

struct ga_stack_site {
	uint32_t str;              /* strtab id of the collapsed stack */
	uint32_t best;             /* stack index whose frames the site lists, UINT32_MAX none */
	uint64_t best_ns;
	uint64_t gpu_ns, launches;
	uint32_t kernels;          /* distinct kernel names */
	uint32_t klo, khi;         /* its kernels: skern[klo .. khi), most time first */
	uint32_t foff, nf;         /* best's frames after the internal ones: ftext[foff ..) */
};

/* One kernel name at one site. */
struct ga_stack_kernel {
	uint32_t site, name;
	uint64_t count, ns;
};

struct ga_sites {
	unsigned depth;            /* frames in a collapsed site, >= 1 */
	int symbolize;             /* look shown frames up in their modules (0 after setup) */
	int list_frames;           /* the frames sites list are shown (JSON): look them up too */
	struct ga_stack_frame *frames;
	size_t nframes, capframes;
	struct ga_map frame_map;   /* (proc, pc) -> frame index */
	struct ga_stack *stacks;
	size_t nstacks, capstacks;
	struct ga_map stack_map;   /* (proc, stack id) -> stack index */
	uint64_t *pcs;
	size_t npcs, cappcs;
	struct ga_map gnode_map;   /* (proc, graph node) -> stack id */
	/*
	 * Correlation -> stack id of the file being read, for its last
	 * GA_SITES_CORR_RING ids: a ring indexed by the id's low bits, each
	 * entry tagged with its id, grown (a power of two) to the ids seen.
	 */
	uint32_t corr_proc;
	struct ga_sites_corr *corr;
	size_t ncorr;              /* entries: 0 or a power of two */
	struct ga_stack_count *counts;
	size_t ncounts, capcounts;
	struct ga_map count_map;   /* (proc << 32 | stack id, name) -> count index */
	/* Small direct-mapped cache in front of count_map: loops launch the
	 * same kernels from the same place, so most lookups hit it. */
	struct {
		uint64_t key;
		uint32_t name, idx;    /* idx + 1; 0 = empty */
	} hot[64];
	struct ga_map defer_map;   /* (proc << 32 | fallback stack id, node) -> count index + 1 */
	struct ga_stack_site *sites;
	size_t nsites, capsites;
	struct ga_map site_map;    /* strtab id of the collapsed stack -> site index */
	struct ga_stack_kernel *skern;
	size_t nskern, capskern;
	uint32_t *ftext;           /* strtab ids of frame texts, GA_SITES_MAX_FRAMES per site at most */
	size_t nftext, capftext;
	uint32_t *order;           /* site indices, most GPU time first (after finish) */
	struct ga_stack_sym *syms;
	size_t nsyms, capsyms;
	struct ga_map sym_map;     /* (module index, offset) -> syms index */
	const char *symbol_path;   /* --symbol-path: directories, colon-separated, or NULL */
	struct ga_sites_mod *mods;
	size_t nmods, capmods;
	struct ga_map mod_map;     /* (proc, load base) -> module index; (proc, ~0) a MODULE seen */
	struct ga_map modid_map;   /* (name << 32 | path, build-id hash) -> module index */
	/* NVTX ranges of the traces (set by the caller), for backward kernels. */
	const struct ga_ranges *rg;
	struct ga_map fwd_map;     /* (proc, forward op's seq) -> stack id of its first kernel */
	uint64_t backward;         /* kernels attributed to their forward op's Python site */
	uint64_t kernels, with_stack;  /* kernels counted; of those, with a stack */
	uint64_t kernels_unstacked;    /* kernels of processes recorded without stacks */
	uint64_t stack_records;    /* distinct STACK records read */
	uint64_t corr_records;     /* CORR_STACK records naming a stack */
	struct ga_map want;        /* (proc, stack id): stacks other views name (findings) */
	/* Python frames to fold, set before the traces are read: patterns
	 * separated by commas, "PATH" or "PATH:FUNCTION", the word "default"
	 * for GA_SITES_FOLD_DEFAULT; "" folds none (--full-stacks); NULL is
	 * the default.  The caller keeps the string. */
	const char *fold;
	int finished;
};

/* depth: frames per collapsed site, 1 .. GA_SITES_MAX_FRAMES. */
void ga_sites_setup(struct ga_sites *st, unsigned depth);
void ga_sites_free(struct ga_sites *st);

/*
 * Observe m while it reads traces, one of its own analyses
 * (model.h ga_model_observe()): called first of them if bound last.  0, or
 * -1 where m has as many as it takes.
 */
int ga_sites_bind(struct ga_sites *st, struct ga_model *m);

/*
 * Read the STACK, FRAME and GRAPH_NODE records of the regular files among
 * paths ahead, as the processes m will read next, in this order.  Files
 * that say they were recorded without stacks are left early; unreadable
 * ones are left for the model to report.  Returns 0, or -1 when memory
 * runs out.
 */
int ga_sites_scan(struct ga_sites *st, struct ga_model *m, char *const *paths, int n);

/*
 * With st->symbolize, look up the first depth frames (after the internal
 * ones) of every stack read so far, for exporters that print sites while
 * the activities stream by: call it after ga_sites_scan().  Returns 0,
 * or -1 when memory runs out.
 */
int ga_sites_symbolize(struct ga_sites *st, struct ga_model *m);

/* Non-zero when the traces hold call stacks. */
int ga_sites_any(const struct ga_sites *st);

/*
 * The collapsed site of a GPU activity as it streams by (before finish):
 * its strtab id, 0 when it has no stack or the stack is not known yet,
 * GA_STR_NOMEM when memory runs out.
 */
uint32_t ga_sites_site_of(struct ga_sites *st, struct ga_model *m, const struct ga_act *a);

/*
 * The file's stack id of the call stack a GPU activity was launched from,
 * as known while it streams by (the observer has seen it): a graph node's
 * own stack when its GRAPH_NODE record came first, else its correlation's
 * (the graph launch's); 0 when it has none.
 */
uint32_t ga_sites_stack_of(const struct ga_sites *st, const struct ga_act *a);

/*
 * 0 while no correlation of the file being read and no graph node has a
 * stack (a trace recorded without --backtrace): ga_sites_stack_of() is
 * then 0 for every activity, and a caller may skip the call.
 */
static inline int ga_sites_any_stacks(const struct ga_sites *st)
{
	return st->ncorr != 0 || st->gnode_map.n != 0;
}

/*
 * Ask for the stack (proc, the file's stack id) to be named like kernels'
 * sites, though no kernel was launched from it (a copy's, for findings):
 * its shown frames are looked up at finish.  0, or -1 out of memory.
 */
int ga_sites_want(struct ga_sites *st, uint32_t proc, uint32_t stack);

/*
 * After finish: the collapsed site text of stack (proc, the file's stack
 * id) as a strtab id, 0 when unknown or out of memory.
 */
uint32_t ga_sites_stack_text(struct ga_sites *st, struct ga_model *m, uint32_t proc,
			     uint32_t stack);

/*
 * The frames of stack (proc, the file's stack id) that are the program's,
 * innermost first, past the recorder's, CUPTI's, the driver's and the
 * runtime's (as launch sites start): *pcs and *n receive them (frame ids:
 * program counters, or GP_PYFRAME_BIT ids).  Returns 0, or -1 when the
 * stack is unknown.  For exporters that list whole stacks (pprof).
 */
int ga_sites_user_frames(const struct ga_sites *st, const struct ga_model *m, uint32_t proc,
			 uint32_t stack, const uint64_t **pcs, uint32_t *n);

/*
 * After the model is finished: settle deferred graph nodes, symbolize
 * (st->symbolize), build the sites.  Returns 0, or -1 when memory runs out.
 */
int ga_sites_finish(struct ga_sites *st, struct ga_model *m);

/*
 * Each site's kernels, most time first (klo, khi), and the sites, most GPU
 * time first (order), as ga_sites_finish() leaves them: for sites made
 * elsewhere (summaries).  0, or -1 out of memory.
 */
int ga_sites_order(struct ga_sites *st, const struct ga_model *m);

#endif
