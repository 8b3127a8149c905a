/*
 * Unit tests of the program's own CUPTI user served beside the recorder
 * (cupti/guest.c), against a stand-in libcupti (test/shims/fakecupti.c,
 * built beside this test as shims/libfakecupti.so) that counts every call:
 *
 *  - one subscriber (CUPTI before 13.3): a user that sets up before the
 *    recorder (buffer functions, a kind) is adopted: the recorder's buffer
 *    functions go back, the user gets copies of its kind; turning that
 *    kind off leaves the recorder's on; a kind CUPTI refuses beside the
 *    recorder's is handed over (flush, the recorder's kinds off, the
 *    user's records counted as GP_LOST_HANDOVER) and taken back when the
 *    user turns it off;
 *  - several subscribers (CUPTI 13.3: cuptiSubscribe_v2 and the
 *    subscriber-scoped activity functions found): recorder and user each
 *    get a subscriber of their own, nothing is copied, and no activity
 *    call goes to the one-subscriber entry points.
 *
 * Each case runs in a forked child (guest.c's state is process-wide).
 * Test code, runs offline only.
 */
#include "tap.h"

#include "recorder.h"

#include "../../cupti/cupti_api.h"
#include "../../cupti/guest.h"

#include <cupti.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../shims/fakecupti.h"

static struct fake_state *fs;
static int (*fake_deliver)(int sub, int n, CUpti_ActivityKind k);
static int guest_got, guest_buffers, rec_own, rec_seen;

static void CUPTIAPI any_req(uint8_t **buf, size_t *size, size_t *max)
{
	*buf = calloc(1, 4096);
	*size = *buf ? 4096 : 0;
	*max = 0;
}

/* The program's completion function: counts what it walks with CUPTI's walker. */
static void CUPTIAPI guest_done(CUcontext c, uint32_t s, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)c, (void)s, (void)size;
	guest_buffers++;
	while (valid && cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		guest_got++;
	free(buf);
}

/* The recorder's (as cupti/tracer.c's): the guest's copies, then its own records. */
static void CUPTIAPI rec_done(CUcontext c, uint32_t s, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)c, (void)s, (void)size;
	gp_guest_copy(buf, valid);
	while (gp_cu.cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		rec_seen++;
		rec_own += gp_guest_own_record(r);
	}
	free(buf);
}

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId c, const void *p)
{
	(void)ud, (void)d, (void)c, (void)p;
}

static char lib[PATH_MAX];

static int load(uint32_t version)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -1;
	fs = dlsym(h, "fake_state");
	fake_deliver = (int (*)(int, int, CUpti_ActivityKind))dlsym(h, "fake_deliver");
	if (!fs || !fake_deliver)
		return -1;
	fs->version = version;
	memset(&gp_cu, 0, sizeof(gp_cu));
	gp_cu.handle = h;
#define B(name) gp_cu.name = (__typeof__(gp_cu.name))dlsym(h, #name)
	B(cuptiGetVersion);
	B(cuptiGetResultString);
	B(cuptiSubscribe);
	B(cuptiUnsubscribe);
	B(cuptiEnableCallback);
	B(cuptiEnableDomain);
	B(cuptiActivityRegisterCallbacks);
	B(cuptiActivityEnable);
	B(cuptiActivityDisable);
	B(cuptiActivityEnableRuntimeApi);
	B(cuptiActivityEnableDriverApi);
	B(cuptiActivitySetAttribute);
	B(cuptiActivityGetNextRecord);
	B(cuptiActivityGetNumDroppedRecords);
	B(cuptiActivityFlushAll);
	B(cuptiGetTimestamp);
#undef B
	return 0;
}

#define KK CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
#define SER CUPTI_ACTIVITY_KIND_KERNEL
#define MC CUPTI_ACTIVITY_KIND_MEMCPY

/* One subscriber: adoption, copies, the recorder's kinds kept, the hand-over. */
static int one_subscriber(void)
{
	CUpti_SubscriberHandle sub = NULL;

	tap_begin("one subscriber: a user set up before the recorder is adopted and served");
	CHECK(load(130001) == 0);
	if (!fs)
		return tap_end(), 1;
	/* The program first (before CUDA, so before the recorder). */
	CHECK(cuptiActivityRegisterCallbacks(any_req, guest_done) == CUPTI_SUCCESS);
	CHECK(cuptiActivityEnable(KK) == CUPTI_SUCCESS);
	CHECK(fs->register_callbacks == 1 && fs->enable[KK] == 1);
	/* The recorder takes CUPTI (cupti/tracer.c's attach). */
	gp_guest_attach();
	CHECK(gp_cu.cuptiSubscribe(&sub, on_cb, NULL) == CUPTI_SUCCESS && fs->subscribe == 1 &&
	      fs->subscribe_v2 == 0);
	CHECK(gp_cu.cuptiActivityRegisterCallbacks(any_req, rec_done) == CUPTI_SUCCESS);
	gp_guest_start(sub);
	/* The recorder's buffer functions are CUPTI's again. */
	CHECKF(fs->register_callbacks == 3 && fs->done == rec_done, "register %d",
	       fs->register_callbacks);
	CHECK(gp_cu.cuptiActivityEnable(KK) == CUPTI_SUCCESS);
	CHECK(gp_cu.cuptiActivityEnable(MC) == CUPTI_SUCCESS);
	CHECK(fake_deliver(0, 5, KK) == 0);
	CHECKF(rec_seen == 5 && rec_own == 5, "recorder saw %d, kept %d", rec_seen, rec_own);
	CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
	CHECKF(guest_got == 5, "the program got %d of 5 records", guest_got);
	/* The program stops: the recorder's kind stays on. */
	CHECK(cuptiActivityDisable(KK) == CUPTI_SUCCESS);
	CHECK(fs->disable[KK] == 0 && fs->on[KK] == 1);
	tap_end();

	tap_begin("one subscriber: a kind CUPTI refuses beside the recorder's is handed over");
	guest_got = rec_seen = rec_own = 0;
	{
		/* The recorder's one line about it goes to stderr: caught here. */
		FILE *f = tmpfile();
		int saved = dup(2);
		char line[512] = "";
		size_t got;

		CHECK(f && saved >= 0 && dup2(fileno(f), 2) == 2);
		CHECK(cuptiActivityEnable(SER) == CUPTI_SUCCESS);
		if (f && saved >= 0) {
			dup2(saved, 2);
			close(saved);
			rewind(f);
			got = fread(line, 1, sizeof(line) - 1, f);
			line[got] = 0;
			fclose(f);
		}
		CHECKF(strstr(line, "gpuprof: the program's CUPTI profiler enabled activity kind 3") &&
		       strstr(line, "steps aside") && strchr(line, '\n') == line + strlen(line) - 1,
		       "stderr: %s", line);
	}
	CHECK(fs->on[SER] == 1 && fs->on[KK] == 0 && fs->on[MC] == 0 && fs->flush_forced >= 2);
	CHECK(fake_deliver(0, 4, SER) == 0);
	CHECKF(rec_seen == 4 && rec_own == 0, "recorder saw %d, kept %d", rec_seen, rec_own);
	CHECKF(atomic_load(&gp_rec.lost[GP_LOST_HANDOVER]) == 4, "hand-over losses %llu",
	       (unsigned long long)atomic_load(&gp_rec.lost[GP_LOST_HANDOVER]));
	CHECK(cuptiActivityDisable(SER) == CUPTI_SUCCESS);
	CHECK(fs->on[SER] == 0 && fs->on[KK] == 1 && fs->on[MC] == 1);
	CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS);
	CHECKF(guest_got == 4, "the program got %d of 4 records", guest_got);
	/* Back to normal: the recorder keeps its records again. */
	rec_seen = rec_own = 0;
	CHECK(fake_deliver(0, 2, KK) == 0 && rec_seen == 2 && rec_own == 2);
	tap_end();
	return tap_exit();
}

/* Several subscribers (CUPTI 13.3): a subscriber each, nothing copied. */
static int several_subscribers(void)
{
	CUpti_SubscriberHandle sub = NULL;
	int v1_activity = 0;

	tap_begin("CUPTI 13.3: recorder and program each get a subscriber, nothing is copied");
	CHECK(load(130300) == 0);
	if (!fs)
		return tap_end(), 1;
	gp_guest_attach();
	CHECK(gp_cu.cuptiSubscribe(&sub, on_cb, NULL) == CUPTI_SUCCESS);
	CHECK(fs->subscribe == 0 && fs->subscribe_v2 == 1 && fs->subs[1].allow_multiple == 1 &&
	      !strcmp(fs->subs[1].name, "gpuprof"));
	CHECK(gp_cu.cuptiActivityRegisterCallbacks(any_req, rec_done) == CUPTI_SUCCESS &&
	      fs->register_v2 == 1);
	CHECK(gp_cu.cuptiActivityEnable(KK) == CUPTI_SUCCESS && fs->subs[1].enabled[KK]);
	gp_guest_start(sub);
	CHECK(cuptiActivityRegisterCallbacks(any_req, guest_done) == CUPTI_SUCCESS);
	CHECK(fs->subscribe_v2 == 2 && fs->subs[2].used && fs->subs[2].allow_multiple == 1 &&
	      fs->register_v2 == 2);
	CHECK(cuptiActivityEnable(KK) == CUPTI_SUCCESS && fs->subs[2].enabled[KK]);
	CHECK(fake_deliver(2, 5, KK) == 0);
	CHECKF(guest_got == 5 && guest_buffers == 1, "the program got %d records", guest_got);
	CHECK(fake_deliver(1, 3, KK) == 0);
	CHECKF(rec_seen == 3 && rec_own == 3, "recorder saw %d, kept %d", rec_seen, rec_own);
	CHECK(fs->next_v2 > 0);
	CHECK(cuptiActivityDisable(KK) == CUPTI_SUCCESS && !fs->subs[2].enabled[KK] &&
	      fs->subs[1].enabled[KK]);
	CHECK(cuptiFinalize() == CUPTI_SUCCESS && fs->unsubscribe == 1 && !fs->subs[2].used &&
	      fs->finalize == 0);
	for (int k = 0; k < FAKE_KINDS; k++)
		v1_activity += fs->enable[k] + fs->disable[k];
	CHECKF(v1_activity == 0 && fs->register_callbacks == 0,
	       "%d one-subscriber activity calls, %d registrations", v1_activity,
	       fs->register_callbacks);
	tap_end();
	return tap_exit();
}

static void in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		fflush(stdout);
		_exit(fn());
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		tap_st.groups_failed++;
}

int main(void)
{
	char *slash;
	ssize_t n = readlink("/proc/self/exe", lib, sizeof(lib) - 40);

	if (n <= 0)
		return 1;
	lib[n] = 0;
	slash = strrchr(lib, '/');
	if (!slash)
		return 1;
	strcpy(slash, "/shims/libfakecupti.so");
	if (access(lib, R_OK) != 0) {
		printf("not ok - guest: %s is not built\n", lib);
		return 1;
	}
	fflush(stdout);
	in_child(one_subscriber);
	in_child(several_subscribers);
	return tap_exit();
}
