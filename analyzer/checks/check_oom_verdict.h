/*
 * check_oom_verdict.h - the post-mortem of an out-of-memory episode
 * (check_oom_ep.h): verdict and advice (check_oom_verdict.c).
 */
#ifndef CHECK_OOM_VERDICT_H
#define CHECK_OOM_VERDICT_H

#include "check_oom_ep.h"

/*! cp_oom_verdict() : enum cp_verdict of episode e, with the reason as one
 *  sentence in why. */
int cp_oom_verdict(const cp_proc *p, const cp_oom_ep *e, char *why, size_t cap);

/*! cp_oom_postmortem() : a finding (error) of `check` for an unrecovered
 *  episode: request, device, free/total, what was held by kind, other
 *  processes, the largest allocations with sites, the retry, PyTorch's view,
 *  the verdict and advice that fits it. */
void cp_oom_postmortem(const cp_check *check, cp_proc *p, const cp_oom_ep *e, cp_report *rep);

#endif /* CHECK_OOM_VERDICT_H */
