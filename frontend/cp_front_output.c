/*
 * cp_front_output.c - the run's trace names.  The pattern is made absolute
 * here, once, so that a process that changes directory still writes where
 * the run said; -o naming a directory or a device is refused before the
 * program starts.  Afterwards the run's files are the names the pattern
 * matches in its directory that were not there before: the shim never
 * writes over an existing name (O_EXCL), so every file of this run is a new
 * name (the one -f removed excepted).  Names written there by a concurrent
 * run are told apart by the run id each trace records (the analyzer does).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cp_front.h"
#include "cp_outname.h"

/* "/a/./b//c" -> "/a/b/c": the directory is shown to the user. */
static void cp_path_tidy(char *p)
{
    char *r = p, *w = p;
    while (*r) {
        if (r[0] == '/' && (r[1] == '/' || (r[1] == '.' && (r[2] == '/' || !r[2])))) {
            r += r[1] == '/' ? 1 : 2;
            continue;
        }
        *w++ = *r++;
    }
    *w = 0;
    if (!*p)
        strcpy(p, "/");
}

/* base as an fnmatch() pattern: escapes match anything, the rest itself. */
static void cp_out_glob(const char *base, char *g, size_t cap)
{
    char *p = g, *end = g + cap - 2;
    for (; *base && p < end; base++) {
        if (*base == '%' && base[1] && base[1] != '%') {
            *p++ = '*';
            base++;
            continue;
        }
        if (strchr("*?[]\\", *base))
            *p++ = '\\';
        *p++ = *base;
        base += *base == '%' && base[1] == '%';
    }
    *p = 0;
}

/* Does name come from the pattern: NAME, or NAME.PID / NAME.N (the names
 * the shim takes when one is taken)? */
static int cp_out_matches(const cp_outset *s, const char *name)
{
    char alt[PATH_MAX];
    if (fnmatch(s->glob, name, FNM_PERIOD) == 0)
        return 1;
    return cp_outname_tagged(s->glob, "*", alt, sizeof alt) == 0 &&
           fnmatch(alt, name, FNM_PERIOD) == 0;
}

static int cp_str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cp_out_free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The regular files in s->dir the pattern matches, sorted; when old is
 * given, only those not in it (and the -f name).  @return : count or -1. */
static long cp_out_scan(const cp_outset *s, char **old, size_t n_old, char ***out)
{
    DIR *d = opendir(s->dir);
    *out = NULL;
    if (!d)
        return -1;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!cp_out_matches(s, e->d_name))
            continue;
        struct stat st;
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s/%s", s->dir, e->d_name);
        if (lstat(full, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        const char *key = e->d_name;
        if (old && bsearch(&key, old, n_old, sizeof *old, cp_str_cmp) &&
            strcmp(s->forced, e->d_name) != 0)
            continue;
        if (n == cap) {
            size_t c = cap ? cap * 2 : 16;
            char **v = realloc(*out, c * sizeof *v);
            if (!v)
                goto fail;
            *out = v;
            cap = c;
        }
        if (!((*out)[n] = strdup(e->d_name)))
            goto fail;
        n++;
    }
    closedir(d);
    if (n)
        qsort(*out, n, sizeof **out, cp_str_cmp);
    return (long)n;
fail:
    closedir(d);
    cp_out_free_names(*out, n);
    *out = NULL;
    return -1;
}

long cp_out_new(const cp_outset *s, char ***names)
{
    *names = NULL;
    if (!s->dir[0])
        return 0;
    return cp_out_scan(s, s->before, s->n_before, names);
}

/* What an existing name is when no trace can be written under it. */
static const char *cp_out_not_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? cp_outname_kind(st.st_mode) : NULL;
}

static int cp_out_fail(const char *pattern, const char *why)
{
    fprintf(stderr, "cuprobe: run: -o %s: %s\n", pattern, why);
    return -1;
}

int cp_out_resolve(cp_outset *s, const char *pattern)
{
    memset(s, 0, sizeof *s);
    char cwd[PATH_MAX];
    if (pattern[0] == '/') {
        snprintf(s->pattern, sizeof s->pattern, "%s", pattern);
    } else if (!getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "cuprobe: run: cannot resolve '%s' against the working directory: "
                "%s\n", pattern, strerror(errno));
        return -1;
    } else if ((size_t)snprintf(s->pattern, sizeof s->pattern, "%s/%s", cwd, pattern) >=
               sizeof s->pattern) {
        return cp_out_fail(pattern, "the name is too long");
    }
    cp_path_tidy(s->pattern);
    char *slash = strrchr(s->pattern, '/');
    s->base = slash + 1;
    if (!*s->base)
        return cp_out_fail(pattern, "names a directory; give a file name, such as "
                                    "DIR/cuprobe-%p.trace");
    snprintf(s->dir, sizeof s->dir, "%.*s", (int)(slash - s->pattern), s->pattern);
    if (!s->dir[0])
        strcpy(s->dir, "/");
    cp_out_glob(s->base, s->glob, sizeof s->glob);
    if (strchr(s->dir, '%')) {
        s->dir[0] = 0;   /* a directory per host or rank: not listed */
        return 0;
    }
    struct stat st;
    int st_rc = stat(s->dir, &st);
    if (st_rc != 0 || !S_ISDIR(st.st_mode)) {
        char why[PATH_MAX + 64];
        snprintf(why, sizeof why, "cannot write into %s: %s", s->dir,
                 st_rc == 0 ? "not a directory" : strerror(errno));
        return cp_out_fail(pattern, why);
    }
    /* The name the command's own process would get (with our pid for %p:
     * only a name without escapes can be an existing directory or device). */
    char name[PATH_MAX], unknown;
    if (cp_outname_expand(s->pattern, (long)getpid(), time(NULL), name, sizeof name,
                          &unknown) < 0)
        return cp_out_fail(pattern, "the name is too long");
    const char *what = cp_out_not_file(name);
    if (what) {
        char why[PATH_MAX + 96];
        snprintf(why, sizeof why, "%s is %s, not a trace file name%s", name, what,
                 strcmp(what, "a directory") == 0 ? " (give DIR/cuprobe-%p.trace)" : "");
        return cp_out_fail(pattern, why);
    }
    long n = cp_out_scan(s, NULL, 0, &s->before);
    s->n_before = n > 0 ? (size_t)n : 0;
    return 0;
}

void cp_out_force(const cp_outset *s)
{
    char name[PATH_MAX], unknown;
    struct stat st;
    if (cp_outname_expand(s->pattern, (long)getpid(), time(NULL), name, sizeof name,
                          &unknown) == 0 &&
        lstat(name, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
        unlink(name);
}

void cp_out_forced_name(cp_outset *s, pid_t pid)
{
    char name[PATH_MAX], unknown;
    if (cp_outname_expand(s->base, (long)pid, time(NULL), name, sizeof name, &unknown) == 0)
        snprintf(s->forced, sizeof s->forced, "%s", name);
}

void cp_out_release(cp_outset *s)
{
    cp_out_free_names(s->before, s->n_before);
    s->before = NULL;
    s->n_before = 0;
}
