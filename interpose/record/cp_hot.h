/*
 * cp_hot.h - the event path's code in one section.
 *
 * Inside a real program the framework and the driver run between two
 * events and evict the shim's lines: an allocation event there costs
 * several times what the same code costs back to back (bench/bench_cold.c
 * reproduces it on the fake driver and bench/footprint.py counts the lines
 * an event touches).
 * CP_HOT puts a function of the event path (wrapper to record) into one
 * section, cp_hot, so that the path's code shares a few pages instead of
 * spreading over the shim's 600 KB of text: fewer instruction-TLB misses,
 * and `hot` optimisation for it.
 */
#ifndef CP_HOT_H
#define CP_HOT_H

#define CP_HOT __attribute__((hot, section("cp_hot")))

#endif /* CP_HOT_H */
