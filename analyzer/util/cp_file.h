/*
 * cp_file.h - the files the analyzer opens.  A path comes from the user, a
 * directory listing, a run's list of traces or a trace itself (a module's
 * path, its debug link); any of them may name a FIFO, a device or a socket
 * by now, and a blocking open or read of one waits forever for a writer.
 * So an input is opened without blocking and read only when it is a
 * regular file, unless the caller asked for a stream ("-", a pipe named on
 * the command line).
 */
#ifndef CP_FILE_H
#define CP_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* cp_file_open_in() flags. */
#define CP_FILE_STREAM 1    /* "-" is standard input; a FIFO, socket or
                             * character device is read as a stream */

/*! cp_file_open_in() : open path for reading, never blocking in the open:
 *  O_NONBLOCK, then fstat.  A regular file (or, with CP_FILE_STREAM, a
 *  stream) is returned with O_NONBLOCK cleared, close-on-exec.
 *  @return : the fd, or a negative errno: -EISDIR for a directory, -EINVAL
 *  for anything else that is not a regular file (*mode, if not NULL, then
 *  holds its st_mode for cp_file_kind()), or open's error. */
int cp_file_open_in(const char *path, int flags, mode_t *mode);

/*! cp_file_kind() : what a file of st_mode m is, for messages: "a FIFO",
 *  "a socket", "a character device", "a block device", "a directory",
 *  "a regular file", "a special file". */
const char *cp_file_kind(mode_t m);

/*! cp_file_is_stream() : whether path, named by the user, is to be read as
 *  a stream: "-", or a FIFO, socket or character device (stat follows
 *  links: /dev/stdin of a pipe is one). */
int cp_file_is_stream(const char *path);

/* What cp_file_read_all() read: len bytes at p, and a 0 byte after them. */
typedef struct cp_fbuf {
    char *p;
    size_t len;
    size_t mapped;          /* bytes mapped (a large buffer), 0: malloc'd */
} cp_fbuf;

/*! cp_file_read_all() : read fd to its end into *out, the n_head bytes of
 *  head first (what was already read from it).  @return : 0, or a negative
 *  errno (*out then empty).  Free it with cp_fbuf_free(). */
int cp_file_read_all(int fd, const void *head, size_t n_head, cp_fbuf *out);

/*! cp_fbuf_free() : release what cp_file_read_all() made (an empty one is
 *  fine); *b is left empty. */
void cp_fbuf_free(cp_fbuf *b);

#endif /* CP_FILE_H */
