/*
 * cp_front_main.c - `cuprobe COMMAND ...`: `run` here, every other command
 * exec'd as cuprobe-analyze beside the shim.  The pieces are found from our
 * own executable (/proc/self/exe, through any symlink to it) in one of three
 * layouts: the build tree (build/cuprobe beside libcuprobe.so, the companion
 * in scripts/python), the source tree (a front end in scripts/, the build in
 * ../build) or an installed prefix (bin/cuprobe, lib/cuprobe/,
 * share/cuprobe/python).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cp_front.h"

/* dir/rel when it names an existing file, resolved into out. */
static int cp_where_try(const char *dir, const char *rel, const char *file, char *out)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/%s/%s", dir, rel, file);
    if (access(p, F_OK) != 0)
        return 0;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return realpath(p, out) != NULL;
}

/* The three layouts, in order: build tree, source tree, installed. */
static const struct {
    const char *lib, *py;
} cp_layouts[] = {
    { ".", "../scripts/python" },
    { "../build", "python" },
    { "../lib/cuprobe", "../share/cuprobe/python" },
};

static void cp_where_find(cp_where *w)
{
    char self[PATH_MAX];
    w->lib[0] = w->py[0] = 0;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return;
    *slash = 0;
    for (size_t i = 0; i < sizeof cp_layouts / sizeof *cp_layouts; i++) {
        if (!cp_where_try(self, cp_layouts[i].lib, "libcuprobe.so", w->lib))
            continue;
        if (!cp_where_try(self, cp_layouts[i].py, ".", w->py))
            w->py[0] = 0;
        return;
    }
}

/* The analyzer's commands run as cuprobe-analyze COMMAND ARGS...  */
static int cp_exec_analyzer(const cp_where *w, char **argv)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cuprobe-analyze", w->lib);
    if (!w->lib[0] || access(path, X_OK) != 0) {
        fprintf(stderr, "cuprobe: cuprobe-analyze not found next to libcuprobe.so (%s)\n",
                w->lib[0] ? w->lib : "libcuprobe.so not found either");
        return 2;
    }
    argv[-1] = path;   /* argv[0] is the command: cuprobe-analyze COMMAND ARGS */
    execv(path, argv - 1);
    fprintf(stderr, "cuprobe: cannot run %s: %s\n", path, strerror(errno));
    return 2;
}

static const char *const cp_analyzer_cmds[] = { "report", "doctor", "dump", "export", "stats", "diff", NULL };

int main(int argc, char **argv)
{
    if (argc < 2) {
        cp_front_usage(stderr);
        return 2;
    }
    const char *sub = argv[1];
    cp_where w;
    cp_where_find(&w);
    if (strcmp(sub, "run") == 0)
        return cp_run_main(argc - 1, argv + 1, &w);
    for (size_t i = 0; cp_analyzer_cmds[i]; i++)
        if (strcmp(sub, cp_analyzer_cmds[i]) == 0)
            return cp_exec_analyzer(&w, argv + 1);
    if (strcmp(sub, "version") == 0 || strcmp(sub, "--version") == 0) {
        printf("cuprobe %s\n", CP_VERSION);
        return 0;
    }
    if (strcmp(sub, "help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
        cp_front_usage(stdout);
        return 0;
    }
    fprintf(stderr, "cuprobe: unknown command '%s'\n", sub);
    cp_front_usage(stderr);
    return 2;
}
