/*
 * Output-name templates: the one grammar that "gpuprof run -o", the
 * recorder's GPUPROF_OUTPUT and the analyzer's check of it share.
 *
 *   %p       process id
 *   %h       host name
 *   %n       the lowest number that gives a file that does not exist yet
 *   %q{VAR}  value of environment variable VAR (empty when unset), as part
 *            of one path component: '/' becomes '_', "." and ".." become "_"
 *   %%       a percent sign
 *
 * Any other '%' (an unknown escape, a '%' at the end, %q without {NAME})
 * makes the template invalid, and so does a newline in it or in what it
 * expands to (file names are lines of gpuprof run's list).  ".gpuprof" is appended unless the name
 * ends with it.  Header-only, no allocation, no stdio: the recorder
 * expands templates inside the traced program.
 */
#ifndef GPUPROF_TEMPLATE_H
#define GPUPROF_TEMPLATE_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gpuprof/trace.h"

/* What a template uses (gp_template_expand's *uses). */
#define GP_TEMPLATE_PID 1u
#define GP_TEMPLATE_HOST 2u
#define GP_TEMPLATE_NUMBER 4u
#define GP_TEMPLATE_VAR 8u

/* What a template is expanded with. */
struct gp_template_env {
	int pid;
	unsigned n;                /* the number %n stands for */
	const char *host;
	/* Value of an environment variable, NULL when unset. */
	const char *(*getvar)(void *ctx, const char *name);
	void *ctx;
};

static inline int gp_template_put(char *out, size_t outsz, size_t *pos, const char *s,
				  size_t len)
{
	if (*pos + len >= outsz)
		return -ENAMETOOLONG;
	memcpy(out + *pos, s, len);
	*pos += len;
	out[*pos] = 0;
	return 0;
}

static inline int gp_template_var_char(char c, int first)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (!first && c >= '0' && c <= '9');
}

/*
 * Expand tmpl into out (outsz bytes, NUL-terminated).  env may be NULL to
 * check the template only (out then gets what does not depend on the
 * process).  *uses receives GP_TEMPLATE_* bits.  Returns 0, -EINVAL for
 * an invalid template (why, if not NULL, says what is wrong), or
 * -ENAMETOOLONG.
 */
static inline int gp_template_expand(const char *tmpl, const struct gp_template_env *env,
				     char *out, size_t outsz, unsigned *uses, const char **why)
{
	size_t pos = 0, extlen = sizeof(GP_FILE_EXT) - 1;
	char num[32], var[256];
	const char *p, *val;
	int rc = 0;

	*uses = 0;
	if (why)
		*why = NULL;
	if (!outsz)
		return -ENAMETOOLONG;
	out[0] = 0;
	for (p = tmpl; *p && !rc; p++) {
		if (*p == '\n') {
			if (why)
				*why = "a newline in the name";
			return -EINVAL;
		}
		if (*p != '%') {
			rc = gp_template_put(out, outsz, &pos, p, 1);
			continue;
		}
		switch (*++p) {
		case 'p':
			*uses |= GP_TEMPLATE_PID;
			snprintf(num, sizeof(num), "%d", env ? env->pid : 0);
			rc = env ? gp_template_put(out, outsz, &pos, num, strlen(num)) : 0;
			break;
		case 'n':
			*uses |= GP_TEMPLATE_NUMBER;
			snprintf(num, sizeof(num), "%u", env ? env->n : 0);
			rc = env ? gp_template_put(out, outsz, &pos, num, strlen(num)) : 0;
			break;
		case 'h':
			*uses |= GP_TEMPLATE_HOST;
			if (env && env->host && strchr(env->host, '\n')) {
				if (why)
					*why = "a newline in the host name";
				return -EINVAL;
			}
			if (env && env->host)
				rc = gp_template_put(out, outsz, &pos, env->host, strlen(env->host));
			break;
		case 'q': {
			size_t len = 0;

			*uses |= GP_TEMPLATE_VAR;
			if (p[1] != '{' || !gp_template_var_char(p[2], 1)) {
				if (why)
					*why = "%q must be followed by {VARIABLE}";
				return -EINVAL;
			}
			for (p += 2; gp_template_var_char(*p, 0); p++)
				if (len < sizeof(var) - 1)
					var[len++] = *p;
			var[len] = 0;
			if (*p != '}' || len >= sizeof(var) - 1) {
				if (why)
					*why = "%q must be followed by {VARIABLE}";
				return -EINVAL;
			}
			val = env && env->getvar ? env->getvar(env->ctx, var) : NULL;
			if (!val)
				break;
			/* Names are lines in gpuprof run's list of files. */
			if (strchr(val, '\n')) {
				if (why)
					*why = "a newline in the value of a %q{VARIABLE}";
				return -EINVAL;
			}
			/* One path component: no directory, never "." or "..". */
			if (!strcmp(val, ".") || !strcmp(val, "..")) {
				rc = gp_template_put(out, outsz, &pos, "_", 1);
				break;
			}
			for (; *val && !rc; val++)
				rc = gp_template_put(out, outsz, &pos, *val == '/' ? "_" : val, 1);
			break;
		}
		case '%':
			rc = gp_template_put(out, outsz, &pos, "%", 1);
			break;
		case 0:
			if (why)
				*why = "a '%' at the end (write %% for a percent sign)";
			return -EINVAL;
		default:
			if (why)
				*why = "unknown escape (known: %p %h %n %q{VAR} %%)";
			return -EINVAL;
		}
	}
	if (rc)
		return rc;
	if (pos < extlen || strcmp(out + pos - extlen, GP_FILE_EXT))
		rc = gp_template_put(out, outsz, &pos, GP_FILE_EXT, extlen);
	return rc;
}

#endif /* GPUPROF_TEMPLATE_H */
