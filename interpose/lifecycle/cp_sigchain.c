/*
 * cp_sigchain.c - fatal signals: write what the trace holds before the
 * process dies, without ever changing what the program sees.
 *
 * For SEGV, BUS, ILL, FPE, ABRT, TERM and INT the kernel runs our handler;
 * the program's view of the disposition (what it installed, or what was
 * there before us) lives in g_user[] and is what sigaction()/signal() report.
 *  - program handler installed: record CP_REC_SIGNAL (best effort) and call
 *    it with the flags and mask it asked for.  The process may well live on
 *    (Python's SIGINT handler raises KeyboardInterrupt), so no END here.
 *  - default action: the process dies: write SIGNAL + END(SIGNAL) without
 *    blocking (trylock only), restore SIG_DFL and re-raise.
 *  - ignored: the kernel disposition is SIG_IGN itself.
 * Exported hooks (add to interpose/exports.map): signal, sigaction.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "cp_real.h"
#include "cp_rec.h"
#include "cp_writer.h"

#define CP_EXPORT __attribute__((visibility("default")))

typedef int (*cp_sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static const int cp_fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT};
static struct sigaction g_user[NSIG];   /* the program's view */
static volatile unsigned char g_ours[NSIG];
static void *g_real_sigaction;

static cp_sigaction_fn cp_real_sigaction(void)
{
    return (cp_sigaction_fn)cp_real(&g_real_sigaction, "sigaction", CP_REAL_NEXT);
}

static int cp_is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

static int cp_user_is(const struct sigaction *u, void (*h)(int))
{
    return !(u->sa_flags & SA_SIGINFO) && u->sa_handler == h;
}

static void cp_sig_handler(int sig, siginfo_t *si, void *uc);

/* Put the kernel disposition for sig in line with g_user[sig]. */
static void cp_sig_apply(int sig)
{
    const struct sigaction *u = &g_user[sig];
    cp_sigaction_fn real = cp_real_sigaction();
    if (!real)
        return;
    if (cp_user_is(u, SIG_IGN)) {
        real(sig, u, NULL);
        return;
    }
    struct sigaction ka;
    memset(&ka, 0, sizeof ka);
    ka.sa_sigaction = cp_sig_handler;
    if (cp_user_is(u, SIG_DFL)) {
        sigemptyset(&ka.sa_mask);
        ka.sa_flags = SA_SIGINFO | SA_ONSTACK;
    } else {
        /* Their mask and flags (SA_ONSTACK matters for stack-overflow
         * handlers); SA_RESETHAND is emulated so g_user stays truthful. */
        ka.sa_mask = u->sa_mask;
        ka.sa_flags = (u->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    }
    real(sig, &ka, NULL);
}

static void cp_sig_handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    struct sigaction u = g_user[sig];
    int code = si ? si->si_code : 0;
    uint64_t addr = si && cp_is_fault(sig) ? (uint64_t)(uintptr_t)si->si_addr : 0;

    if (!cp_user_is(&u, SIG_DFL) && !cp_user_is(&u, SIG_IGN)) {
        cp__rec_signal_note(sig, code, addr);
        if (u.sa_flags & SA_RESETHAND) {
            memset(&g_user[sig], 0, sizeof g_user[sig]);
            g_user[sig].sa_handler = SIG_DFL;
            cp_sig_apply(sig);
        }
        errno = saved;
        if (u.sa_flags & SA_SIGINFO)
            u.sa_sigaction(sig, si, uc);
        else
            u.sa_handler(sig);
        return;
    }
    if (cp_user_is(&u, SIG_IGN)) {
        errno = saved;
        return;
    }
    cp__rec_fatal(sig, code, addr);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    cp_sigaction_fn real = cp_real_sigaction();
    if (real)
        real(sig, &dfl, NULL);
    errno = saved;
    /* A fault raised by the kernel recurs when the instruction re-executes,
     * now with the default action and the original siginfo; anything sent
     * (kill, abort, raise) is sent again and delivered on return. */
    if (!(cp_is_fault(sig) && code > 0))
        raise(sig);
}

void cp__sigchain_install(void)
{
    cp_sigaction_fn real = cp_real_sigaction();
    if (!real)
        return;
    for (size_t i = 0; i < sizeof cp_fatal / sizeof *cp_fatal; i++) {
        int sig = cp_fatal[i];
        if (real(sig, NULL, &g_user[sig]) < 0)
            continue;
        g_ours[sig] = 1;
        if (!cp_user_is(&g_user[sig], SIG_IGN))
            cp_sig_apply(sig);
    }
}

CP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig <= 0 || sig >= NSIG || !g_ours[sig]) {
        cp_sigaction_fn real = cp_real_sigaction();
        if (!real) {
            errno = ENOSYS;
            return -1;
        }
        return real(sig, act, old);
    }
    /* No lock: sigaction() must stay async-signal-safe (handlers such as
     * Python's faulthandler call it), and concurrent changes of one signal
     * are already a race in the program itself. */
    struct sigaction prev = g_user[sig];
    if (act) {
        g_user[sig] = *act;
        cp_sig_apply(sig);
    }
    if (old)
        *old = prev;
    return 0;
}

CP_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    /* glibc's BSD semantics: block the signal in its handler, restart
     * interrupted system calls. */
    sigemptyset(&sa.sa_mask);
    if (sig > 0 && sig < NSIG)
        sigaddset(&sa.sa_mask, sig);
    sa.sa_flags = SA_RESTART;
    if (sigaction(sig, &sa, &old) < 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (__sighandler_t)(void *)old.sa_sigaction
                                       : old.sa_handler;
}
