/*
 * folded.h: the folded (collapsed) stack format of flamegraph.pl,
 * speedscope and inferno: one line per unique stack, "root;...;leaf WEIGHT".
 *
 * rperf's VM-state labels travel as one final pseudo-frame after the leaf:
 *   %GVL=blocked -> [GVL blocked]    %GC=mark  -> [GC marking]
 *   %GVL=wait    -> [GVL wait]       %GC=sweep -> [GC sweeping]
 * and folded_parse() turns them back into labels, so rperf's folded output
 * round-trips exactly through the model.  Frame text is the function name;
 * a function without a name is "[unknown]", ';' and control characters in
 * a name are written as '_' so they cannot break a line apart, and a real
 * function named like a pseudo-frame is written "(GC marking)" so it
 * cannot be read back as a VM state.
 *
 * A parsed folded profile has one sample type, "weight"/"nanoseconds", and
 * one sample per line: rperf writes weights in the unit of the value it
 * folds (nanoseconds for time), while files from other tools usually hold
 * sample counts, which then read as nanoseconds.  Labels other than the
 * VM state (threads, ...) are not carried by the format.
 */
#ifndef RPERF_FOLDED_H
#define RPERF_FOLDED_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"

/*
 * Write P to FP, one line per unique stack (sorted by stack text), weight
 * the sum of value VALUE_INDEX over its samples; stacks weighing 0 are left
 * out.  Returns 0, or -1 on a write error with errno set.
 */
int folded_write(const struct profile *p, FILE *fp, size_t value_index);

/*
 * Parse LEN bytes of folded text into a new profile.  Blank lines are
 * skipped; the weight is the last blank-separated token and must be a
 * non-negative integer; the stack is everything before the blank that
 * precedes it, taken as is.  On error returns NULL with "line N: ..." in
 * ERR.
 */
struct profile *folded_parse(const char *buf, size_t len, char *err,
    size_t errlen);

#endif
