/*
 * rperf-server.h: the part of the Rperf module for servers and job
 * workers (captures, live reports, the Ruby helpers' load path).
 */
#ifndef RPERF_SERVER_H
#define RPERF_SERVER_H

#include <ruby.h>

/* Define it under MODULE (Rperf).  Needs the GVL. */
void rperf_server_define(VALUE module);

/* Once ruby's options are processed (the script not begun): put the
 * helpers' directory back at the end of $LOAD_PATH.  Needs the GVL. */
void rperf_server_ready(void);

#endif
