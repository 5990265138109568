/*
 * cp_klog.h - the kernel log's word on a run's fatal error (cp_klog.c).
 */
#ifndef CP_KLOG_H
#define CP_KLOG_H

/*! cp_klog_fatal() :
 *  A call returned `result`, an error that ends the run (sticky, or an
 *  uncorrectable ECC error): the first time in the process, record the
 *  kernel log's Xid and AER lines stamped since the process started
 *  (CP_REC_KMSG), and read it again for newer lines whenever the trace is
 *  flushed or closed.  Never blocks (O_NONBLOCK), never allocates; a log
 *  that cannot be read is recorded as such.  Off the hot path: only after
 *  such an error. */
void cp_klog_fatal(int result);

#endif /* CP_KLOG_H */
