/*
 * cp_debuginfo.c - finding a module's separate debug information without
 * ever blocking (see cp_debuginfo.h).  The places searched are libdwfl's
 * (dwfl_standard_find_debuginfo): the build-id tree, the module's own
 * directory, its .debug and .dwz folders and /usr/lib/debug; every
 * candidate is opened through cp_file_open_in() and kept only when its
 * build id (or the debuglink's CRC) matches.
 */
#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_debuginfo.h"
#include "cp_file.h"
#include "cp_path.h"

#define CP_DEBUG_ROOT "/usr/lib/debug"
#define CP_ID_MAX 64            /* longest build id looked up (libdw's bound) */

/* What the file looked for must be. */
typedef struct cp_want {
    unsigned char id[CP_ID_MAX];
    int id_len;                 /* > 0: this build id */
    GElf_Word crc;              /* else, when not 0: this CRC of the whole file */
    struct stat self;           /* the file it is the debug file of: never itself */
    int have_self;
} cp_want;

static int g_server;
static _Thread_local int g_alt_given;

/* --- checking a candidate ------------------------------------------------------- */

static uint32_t g_crc_tab[256];

static uint32_t cp_crc32(uint32_t crc, const unsigned char *p, size_t n)
{
    if (!g_crc_tab[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
            g_crc_tab[i] = c;
        }
    crc = ~crc;
    while (n--)
        crc = g_crc_tab[(crc ^ *p++) & 255] ^ (crc >> 8);
    return ~crc;
}

/* The GNU debuglink CRC of the file (CRC-32 of all its bytes). */
static int cp_file_crc(int fd, uint32_t *out)
{
    unsigned char buf[65536];
    uint32_t crc = 0;
    off_t at = 0;
    for (;;) {
        ssize_t r = pread(fd, buf, sizeof buf, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        crc = cp_crc32(crc, buf, (size_t)r);
        at += r;
    }
    *out = crc;
    return 0;
}

static int cp_want_match(int fd, const cp_want *w)
{
    struct stat st;
    if (w->have_self && fstat(fd, &st) == 0 && st.st_dev == w->self.st_dev &&
        st.st_ino == w->self.st_ino)
        return 0;       /* the module itself by another name */
    if (w->id_len > 0) {
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        const void *id = NULL;
        ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
        int ok = n == w->id_len && memcmp(id, w->id, (size_t)n) == 0;
        elf_end(elf);
        return ok;
    }
    uint32_t crc;
    return !w->crc || (cp_file_crc(fd, &crc) == 0 && crc == w->crc);
}

/* dir/sub/name (the parts that are not NULL), when it is a regular file
 * that matches w.  @return : its fd, with its name in *name, or -1. */
static int cp_try(const cp_want *w, const char *dir, const char *sub, const char *file,
                  char **name)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s%s%s%s%s", dir ? dir : "", dir ? "/" : "",
                     sub ? sub : "", sub ? "/" : "", file);
    if (n < 0 || (size_t)n >= sizeof path)
        return -1;
    int fd = cp_file_open_in(path, 0, NULL);
    if (fd < 0)
        return -1;
    if (!cp_want_match(fd, w) || !(*name = strdup(path))) {
        close(fd);
        return -1;
    }
    return fd;
}

/* /usr/lib/debug/.build-id/xx/yyyy.debug of w's build id. */
static int cp_try_build_id(const cp_want *w, char **name)
{
    if (w->id_len < 3)
        return -1;
    char hex[2 * CP_ID_MAX + 8], *o = hex;
    for (int i = 0; i < w->id_len; i++) {
        o += sprintf(o, "%02x", w->id[i]);
        if (i == 0)
            *o++ = '/';
    }
    strcpy(o, ".debug");
    return cp_try(w, CP_DEBUG_ROOT, ".build-id", hex, name);
}

/* --- debuginfod, on demand --------------------------------------------------------- */

typedef struct debuginfod_client debuginfod_client;
static debuginfod_client *(*g_dfd_begin)(void);
static int (*g_dfd_find)(debuginfod_client *, const unsigned char *, int, char **);
static void (*g_dfd_end)(debuginfod_client *);
static debuginfod_client *g_dfd;
static int g_dfd_tried;

void cp_debuginfo_server(int on)
{
    g_server = on;
}

static int cp_try_server(const cp_want *w, const char *what, char **name)
{
    if (!g_server || w->id_len <= 0)
        return -1;
    if (!g_dfd_tried) {
        g_dfd_tried = 1;
        void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (h) {
            *(void **)&g_dfd_begin = dlsym(h, "debuginfod_begin");
            *(void **)&g_dfd_find = dlsym(h, "debuginfod_find_debuginfo");
            *(void **)&g_dfd_end = dlsym(h, "debuginfod_end");
        }
        g_dfd = g_dfd_begin && g_dfd_find && g_dfd_end ? g_dfd_begin() : NULL;
        if (!g_dfd)
            fprintf(stderr, "report: --debuginfod: libdebuginfod.so.1 could not be used: "
                    "debug information is looked for on this machine only\n");
    }
    if (!g_dfd)
        return -1;
    fprintf(stderr, "report: asking debuginfod (DEBUGINFOD_URLS) for the debug information "
            "of %s\n", what);
    char *path = NULL;
    int fd = g_dfd_find(g_dfd, w->id, w->id_len, &path);
    if (fd < 0) {
        free(path);
        return -1;
    }
    close(fd);
    /* Its cache file, opened again the way every input is. */
    fd = path ? cp_file_open_in(path, 0, NULL) : -1;
    if (fd >= 0 && cp_want_match(fd, w)) {
        *name = path;
        return fd;
    }
    if (fd >= 0)
        close(fd);
    free(path);
    return -1;
}

void cp_debuginfo_shutdown(void)
{
    if (g_dfd)
        g_dfd_end(g_dfd);
    g_dfd = NULL;
    g_dfd_tried = 0;
}

/* --- the searches ------------------------------------------------------------------ */

/* The dwz file file_name's DWARF refers to, when its .gnu_debugaltlink
 * names link: its build id into w.  @return : 1 or 0. */
static int cp_altlink_of(const char *file_name, const char *link, cp_want *w)
{
    int fd = file_name ? cp_file_open_in(file_name, 0, NULL) : -1;
    if (fd < 0)
        return 0;
    int found = 0;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    size_t shstr;
    if (elf && elf_getshdrstrndx(elf, &shstr) == 0) {
        for (Elf_Scn *s = NULL; !found && (s = elf_nextscn(elf, s));) {
            GElf_Shdr sh;
            const char *nm = gelf_getshdr(s, &sh) ? elf_strptr(elf, shstr, sh.sh_name) : NULL;
            if (!nm || strcmp(nm, ".gnu_debugaltlink") != 0)
                continue;
            Elf_Data *d = elf_getdata(s, NULL);
            const char *p = d ? d->d_buf : NULL;
            size_t l = p ? strnlen(p, d->d_size) : 0;
            size_t n = p && l < d->d_size ? d->d_size - l - 1 : 0;
            if (n > 0 && n <= CP_ID_MAX && strcmp(p, link) == 0) {
                memcpy(w->id, p + l + 1, n);
                w->id_len = (int)n;
                found = 1;
            }
        }
    }
    elf_end(elf);
    close(fd);
    return found;
}

/* The dwz file altname of file_name (libdwfl's places, and libdw's own:
 * altname beside the file). */
static int cp_find_alt(const cp_want *w, const char *file_name, const char *alt, char **name)
{
    int fd = cp_try_build_id(w, name);
    if (fd < 0 && alt[0] == '/')
        fd = cp_try(w, NULL, NULL, alt, name);
    char dir[PATH_MAX];
    const char *base = cp_base_name(file_name);
    snprintf(dir, sizeof dir, "%.*s", base > file_name ? (int)(base - 1 - file_name) : 1,
             base > file_name ? file_name : ".");
    if (fd < 0 && alt[0] != '/')
        fd = cp_try(w, dir, NULL, alt, name);
    if (fd < 0)
        fd = cp_try(w, dir, ".dwz", cp_base_name(alt), name);
    if (fd < 0 && alt[0] != '/')
        fd = cp_try(w, dir, ".debug", alt, name);
    if (fd < 0)
        fd = cp_try(w, CP_DEBUG_ROOT, NULL, cp_base_name(alt), name);
    if (fd < 0)
        fd = cp_try(w, CP_DEBUG_ROOT, ".dwz", cp_base_name(alt), name);
    return fd;
}

/* link (or, for none, the module's name with .debug) beside file_name, in
 * its .debug folder, and under /usr/lib/debug at every suffix of its
 * directory. */
static int cp_find_link_in(const cp_want *w, const char *file_name, const char *link,
                           char **name)
{
    char dir[PATH_MAX];
    const char *base = cp_base_name(file_name);
    if (base == file_name || base - 1 - file_name >= (long)sizeof dir)
        return -1;
    snprintf(dir, sizeof dir, "%.*s", (int)(base - 1 - file_name), file_name);
    int fd = cp_try(w, dir[0] ? dir : "/", NULL, link, name);
    if (fd < 0)
        fd = cp_try(w, dir[0] ? dir : "/", ".debug", link, name);
    /* /usr/lib/debug/a/b/c/LINK, then b/c/LINK, c/LINK, LINK. */
    for (const char *sub = dir; fd < 0;) {
        while (*sub == '/')
            sub++;
        fd = cp_try(w, CP_DEBUG_ROOT, *sub ? sub : NULL, link, name);
        if (!*sub)
            break;
        const char *next = strchr(sub, '/');
        sub = next ? next : "";
    }
    return fd;
}

static int cp_find_link(const cp_want *w, const char *file_name, const char *link,
                        char **name)
{
    char made[NAME_MAX + 8];
    if (!link) {
        /* No debuglink: the module's own name with .debug, without a CRC. */
        snprintf(made, sizeof made, "%s.debug", cp_base_name(file_name));
        link = made;
    }
    int fd = cp_find_link_in(w, file_name, link, name);
    if (fd < 0) {
        /* A symbolic link's debug file may go with its target's name. */
        char *canon = realpath(file_name, NULL);
        if (canon && strcmp(canon, file_name) != 0)
            fd = cp_find_link_in(w, canon, link, name);
        free(canon);
    }
    return fd;
}

int cp_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                      const char *file_name, const char *debuglink_file,
                      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    (void)userdata;
    (void)base;
    *debuginfo_file_name = NULL;
    if (!mod || !file_name)
        return -1;
    cp_want w;
    memset(&w, 0, sizeof w);
    w.have_self = stat(file_name, &w.self) == 0;
    char *name = NULL;
    int fd;
    if (debuglink_file && debuglink_crc == 0 && cp_altlink_of(file_name, debuglink_file, &w)) {
        fd = cp_find_alt(&w, file_name, debuglink_file, &name);
        if (fd < 0)
            fd = cp_try_server(&w, modname ? modname : file_name, &name);
        g_alt_given |= fd >= 0;
    } else {
        const unsigned char *bits;
        GElf_Addr vaddr;
        int n = dwfl_module_build_id(mod, &bits, &vaddr);
        if (n > 0 && n <= CP_ID_MAX) {
            memcpy(w.id, bits, (size_t)n);
            w.id_len = n;
        } else {
            w.crc = debuglink_file ? debuglink_crc : 0;
        }
        fd = cp_try_build_id(&w, &name);
        if (fd < 0)
            fd = cp_find_link(&w, file_name, debuglink_file, &name);
        if (fd < 0)
            fd = cp_try_server(&w, modname ? modname : file_name, &name);
    }
    if (fd >= 0)
        *debuginfo_file_name = name;
    return fd;
}

void cp_debuginfo_begin(void)
{
    g_alt_given = 0;
}

int cp_debuginfo_dwarf_safe(Dwarf *dw)
{
    const char *alt;
    const void *id;
    return dwelf_dwarf_gnu_debugaltlink(dw, &alt, &id) <= 0 || g_alt_given;
}
