/*
 * cp_ownfd.h - the descriptors the shim keeps open in the program (the
 * trace file, the host memory files): placed where the program does not
 * look for free numbers, and told apart from whatever the program puts at
 * their number, so that the shim never writes, cuts or closes a file of the
 * program's.  Every call is async-signal-safe.
 */
#ifndef CP_OWNFD_H
#define CP_OWNFD_H

#include <stdint.h>

/* A file's identity: what stays true of it whatever number it has. */
struct cp_ownfd_id {
    uint64_t dev, ino;
};

/* What the program did to a descriptor of the shim's (cp_ownfd_check). */
enum { CP_OWNFD_OURS = 0, CP_OWNFD_CLOSED = 1, CP_OWNFD_REPLACED = 2 };

/*! cp_ownfd_high() : move fd near the top of the soft RLIMIT_NOFILE, taken
 *  as at most 1024 (a higher number makes the kernel's descriptor table,
 *  copied at every fork, that large), close-on-exec: programs that close
 *  their descriptors from 3 up and open files, or dup2() onto fixed low
 *  numbers (daemons, launchers), do not meet it there.
 *  @return : the new number (fd is closed), or fd when it cannot move. */
int cp_ownfd_high(int fd);

/*! cp_ownfd_id() : the identity of the file open at fd ({0, 0} when fstat
 *  fails). */
struct cp_ownfd_id cp_ownfd_id(int fd);

/*! cp_ownfd_check() : whether fd still is the file `id` names.
 *  @return : CP_OWNFD_OURS, CP_OWNFD_CLOSED (nothing open at fd) or
 *  CP_OWNFD_REPLACED (another file is). */
int cp_ownfd_check(int fd, const struct cp_ownfd_id *id);

/*! cp_ownfd_close() : close *fd if it still is the file `id` names (the
 *  number is the program's otherwise), and set *fd to -1. */
void cp_ownfd_close(int *fd, const struct cp_ownfd_id *id);

#endif /* CP_OWNFD_H */
