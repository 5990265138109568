/*
 * cp_window_place.h - where a window of the run (cp_window.h) falls in
 * each of its traces (cp_window_place.c).
 */
#ifndef CP_WINDOW_PLACE_H
#define CP_WINDOW_PLACE_H

#include <stddef.h>

#include "cp_opts.h"
#include "cp_window.h"

/*! cp_window_place() : the window of f (since, until) in each trace of
 *  files[0..n) into span[i], from the traces' HEADERs: the run's start is
 *  the earliest of them, each process placed after it by its wall-clock
 *  start (so that processes on several hosts line up), or by its own clock
 *  where a trace does not record the wall clock.  A trace whose HEADER does
 *  not decode gets all of it (its error is the reader's to say).  w gets the
 *  window and the run's start on the first trace's clock (origin). */
void cp_window_place(const cp_filter *f, char *const *files, size_t n, cp_wspan *span,
                     cp_window *w);

#endif /* CP_WINDOW_PLACE_H */
