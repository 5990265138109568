/*
 * cp_dump.h - `cuprobe-analyze dump`: every record of a trace as text.
 */
#ifndef CP_DUMP_H
#define CP_DUMP_H

/*! cp_dump_main() : dump TRACE... (argv[0] is "dump").  One line per record:
 *  type name, ts=SECONDS.NANOSECONDS, tid=N, then every field as name=value
 *  (pointers in hex, API ids with their names, enums by name).
 *  @return : 0 when every file is complete, 2 when one is truncated or
 *  corrupt (its error "FILE: offset N: reason" goes to stderr after what
 *  decoded was printed) or on a usage error. */
int cp_dump_main(int argc, char **argv);

#endif /* CP_DUMP_H */
