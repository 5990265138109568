/*
 * cp_outfile.h - the files the analyzer writes for people (the summary,
 * the HTML page, the Perfetto export): made under a name nobody can guess
 * beside the one asked for, private to the user (they hold the program's
 * command line and environment, as the traces do), and renamed into place
 * only when whole.
 */
#ifndef CP_OUTFILE_H
#define CP_OUTFILE_H

#include <stdio.h>

/*! cp_outfile_open() : a new file in path's directory (mkstemp: mode 0600,
 *  never an existing file or a link), for cp_outfile_commit().  *tmp gets
 *  its name (malloc'd; NULL on failure).  @return : the stream, or NULL
 *  with errno set. */
FILE *cp_outfile_open(const char *path, char **tmp);

/*! cp_outfile_commit() : close f (NULL: already closed) and, when rc is 0
 *  and everything was written, rename tmp to path; else remove tmp.  Frees
 *  tmp.  @return : 0, rc when it was not 0, or a negative errno. */
int cp_outfile_commit(FILE *f, char *tmp, const char *path, int rc);

#endif /* CP_OUTFILE_H */
