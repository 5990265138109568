/*
 * cp_export.h - `cuprobe-analyze export`: the traces in another tool's
 * format (today: --perfetto, the Trace Event Format JSON).
 */
#ifndef CP_EXPORT_H
#define CP_EXPORT_H

/*! cp_export_main() : run `export` with its arguments (argv[0] is
 *  "export").  @return : the exit status: 0 ok, 2 usage error, an
 *  unreadable, corrupt or truncated trace (after writing what decoded), or
 *  an output that could not be written. */
int cp_export_main(int argc, char **argv);

#endif /* CP_EXPORT_H */
