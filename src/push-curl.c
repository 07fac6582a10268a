/*
 * push-curl.c: loading libcurl for the uploader (see push-int.h).  It
 * owns the table of the libcurl functions the other push files call.
 *
 * libcurl is loaded with dlopen() by the first push_open(), not linked:
 * it brings some thirty libraries with it, and loading them at every
 * start would cost each "rperf record" tens of milliseconds of CPU time
 * on the main thread before its first sample, push or no push.  So this
 * file must never run at start-up, and nothing may call through the
 * table before push_curl_load() succeeded.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "error.h"
#include "push-int.h"

struct push_curl push_curl;

static pthread_once_t push_curl_once = PTHREAD_ONCE_INIT;
static int push_curl_ok;
static char push_curl_error[200];

/* Load libcurl and initialise it, once per process, before any thread uses it. */
static void
push_curl_init(void)
{
	static const char *const names[] = { "libcurl.so.4",
	    "libcurl-gnutls.so.4", "libcurl.so", NULL };
	void *h = NULL;
	size_t i;

	for (i = 0; h == NULL && names[i] != NULL; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		snprintf(push_curl_error, sizeof push_curl_error,
		    "pushing needs libcurl: %s", dlerror());
		return;
	}
#define PUSH_CURL_SYM(field, name) \
	if ((*(void **)&push_curl.field = dlsym(h, name)) == NULL) { \
		snprintf(push_curl_error, sizeof push_curl_error, \
		    "pushing needs libcurl: no %s in it", name); \
		return; \
	}
	PUSH_CURL_SYM(global_init, "curl_global_init");
	PUSH_CURL_SYM(easy_init, "curl_easy_init");
	PUSH_CURL_SYM(easy_setopt, "curl_easy_setopt");
	PUSH_CURL_SYM(easy_perform, "curl_easy_perform");
	PUSH_CURL_SYM(easy_getinfo, "curl_easy_getinfo");
	PUSH_CURL_SYM(easy_reset, "curl_easy_reset");
	PUSH_CURL_SYM(easy_cleanup, "curl_easy_cleanup");
	PUSH_CURL_SYM(easy_strerror, "curl_easy_strerror");
	PUSH_CURL_SYM(slist_append, "curl_slist_append");
	PUSH_CURL_SYM(slist_free_all, "curl_slist_free_all");
#undef PUSH_CURL_SYM
	if (push_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(push_curl_error, sizeof push_curl_error,
		    "cannot initialise libcurl");
		return;
	}
	push_curl_ok = 1;
}

/* Load libcurl once; the same answer on every later call. */
int
push_curl_load(char *err, size_t errlen)
{
	pthread_once(&push_curl_once, push_curl_init);
	if (!push_curl_ok) {
		error_set(err, errlen, "%s", push_curl_error);
		return -1;
	}
	return 0;
}
