/*
 * cp_diff.h - `cuprobe-analyze diff BASE NEW` (cp_diff.c): what changed
 * between two runs of a job, each a trace, a directory (its last run), a
 * report summary or a `stats --json` document: peak memory per device and
 * per call site (sites matched by their label, file:line and function, never
 * by address), allocation counts, time blocked in synchronous copies, and
 * the findings that appeared or went away.  --fail-on-regression PCT%|SIZE
 * gates a CI job on peak memory.
 */
#ifndef CP_DIFF_H
#define CP_DIFF_H

/*! cp_diff_main() : run `diff` (argv[0] is "diff").  @return : 0 (nothing
 *  beyond the gate), 3 a device's peak grew beyond --fail-on-regression, 2 a
 *  usage error or an input that could not be read. */
int cp_diff_main(int argc, char **argv);

#endif /* CP_DIFF_H */
