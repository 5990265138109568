/*
 * cp_sym.c - module maps, stacks and libdwfl symbolization (see cp_sym.h).
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_debuginfo.h"
#include "cp_file.h"
#include "cp_grow.h"
#include "cp_path.h"
#include "cp_sym.h"

static int g_symbolize = 1, g_all_frames;
/* Traces are analyzed on several threads (cp_analyze.c): the interned
 * strings, the ELF files and the symbol cache are shared, so every entry
 * point that touches them holds this lock (recursive: labels symbolize,
 * symbolizing interns). */
static pthread_mutex_t g_sym_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static char g_cwd[4096];
static size_t g_cwd_len;

/* --- interned strings --------------------------------------------------------- */

typedef struct cp_istr {
    const char *s;
} cp_istr;

static cp_map g_intern = { .val_size = sizeof(cp_istr) };

static uint64_t cp_fnv(const char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static const char *cp_sym_intern_locked(const char *s, size_t n)
{
    uint64_t k = cp_fnv(s, n, 1469598103934665603ull);
    /* Probe successive keys on a (rare) hash collision. */
    for (;; k++) {
        int created;
        cp_istr *e = cp_map_put(&g_intern, k, &created);
        if (!e)
            return NULL;
        if (!created) {
            if (strlen(e->s) == n && memcmp(e->s, s, n) == 0)
                return e->s;
            continue;
        }
        char *c = malloc(n + 1);
        if (!c) {
            cp_map_del(&g_intern, k, NULL);
            return NULL;
        }
        memcpy(c, s, n);
        c[n] = 0;
        e->s = c;
        return c;
    }
}

const char *cp_sym_intern(const char *s, size_t n)
{
    pthread_mutex_lock(&g_sym_lock);
    const char *r = cp_sym_intern_locked(s, n);
    pthread_mutex_unlock(&g_sym_lock);
    return r;
}

static const char *cp_istr0(const char *s)
{
    return cp_sym_intern(s ? s : "", s ? strlen(s) : 0);
}

/* A path shown relative to the working directory when it lies below it. */
static const char *cp_short_path(const char *p)
{
    if (p && g_cwd_len && strncmp(p, g_cwd, g_cwd_len) == 0 && p[g_cwd_len] == '/')
        return p + g_cwd_len + 1;
    return p;
}

void cp_sym_config(int symbolize, int all_frames)
{
    g_symbolize = symbolize;
    g_all_frames = all_frames;
    if (getcwd(g_cwd, sizeof g_cwd))
        g_cwd_len = strlen(g_cwd);
}

/* --- module classes ------------------------------------------------------------ */

int cp_module_class_of(const char *path)
{
    if (cp_lib_find(path, CP_LIB_INTERNAL))
        return CP_MODC_INTERNAL;
    const char *b = cp_base_name(path);
    /* The interpreter itself: python, python3, python3.12, python3.12d. */
    if (strncmp(b, "python", 6) == 0 && strspn(b + 6, "0123456789.dmu") == strlen(b + 6))
        return CP_MODC_INTERNAL;
    return CP_MODC_USER;
}

int cp_py_user(const char *file)
{
    if (!file || !*file || file[0] == '<')
        return 0;
    if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
        strstr(file, "cuprobe_companion"))
        return 0;
    /* The standard library: .../lib/python3.X/<module>.py */
    const char *l = strstr(file, "/lib/python");
    if (l && strchr(l + 11, '/'))
        return 0;
    return 1;
}

/* --- per-process tables ---------------------------------------------------------- */

void cp_stacks_init(cp_stacks *s)
{
    memset(s, 0, sizeof *s);
    cp_map_init(&s->mod_index, sizeof(uint32_t));
    cp_map_init(&s->stacks, sizeof(cp_stack));
    cp_map_init(&s->pyframes, sizeof(cp_pyframe));
}

void cp_stacks_free(cp_stacks *s)
{
    size_t it = 0;
    cp_stack *st;
    while ((st = cp_map_next(&s->stacks, &it, NULL)))
        free(st->native);       /* py shares the same block */
    cp_map_free(&s->stacks);
    cp_map_free(&s->pyframes);
    cp_map_free(&s->mod_index);
    free(s->mods);
    free(s->cur);
    if (s->presym)
        cp_map_free(s->presym);
    free(s->presym);
    memset(s, 0, sizeof *s);
}

int cp_stacks_module(cp_stacks *s, uint64_t base, uint64_t size, uint64_t file_offset,
                     const char *path, size_t path_len, const char *bid, size_t bid_len)
{
    const char *ip = cp_sym_intern(path, path_len);
    if (!ip)
        return -ENOMEM;
    uint64_t k = cp_fnv((const char *)&base, sizeof base,
                        cp_fnv((const char *)&file_offset, sizeof file_offset,
                               (uint64_t)(uintptr_t)ip));
    int created;
    uint32_t *idx = cp_map_put(&s->mod_index, k, &created);
    if (!idx)
        return -ENOMEM;
    if (created) {
        if (cp_grow((void **)&s->mods, &s->cap_mods, s->n_mods + 1, sizeof *s->mods, 64))
            return -ENOMEM;
        cp_module *m = &s->mods[s->n_mods];
        memset(m, 0, sizeof *m);
        m->base = base;
        m->size = size;
        m->file_offset = file_offset;
        m->path = ip;
        m->build_id = cp_sym_intern(bid, bid_len);
        m->mclass = cp_module_class_of(ip);
        *idx = (uint32_t)++s->n_mods;
    }
    if (cp_grow((void **)&s->cur, &s->cap_cur, s->n_cur + 1, sizeof *s->cur, 64))
        return -ENOMEM;
    s->cur[s->n_cur++] = *idx - 1;
    s->cur_dirty = 1;
    return 0;
}

void cp_stacks_module_reset(cp_stacks *s)
{
    s->n_cur = 0;
    s->cur_dirty = 0;
}

static _Thread_local const cp_module *g_sort_mods;

static int cp_cur_cmp(const void *a, const void *b)
{
    uint64_t x = g_sort_mods[*(const uint32_t *)a].base;
    uint64_t y = g_sort_mods[*(const uint32_t *)b].base;
    return x < y ? -1 : x > y;
}

static uint32_t cp_find_module(cp_stacks *s, uint64_t ip)
{
    if (s->cur_dirty) {
        g_sort_mods = s->mods;
        qsort(s->cur, s->n_cur, sizeof *s->cur, cp_cur_cmp);
        s->cur_dirty = 0;
    }
    size_t lo = 0, hi = s->n_cur;
    while (lo < hi) {       /* last module with base <= ip */
        size_t mid = (lo + hi) / 2;
        if (s->mods[s->cur[mid]].base <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    const cp_module *m = &s->mods[s->cur[lo - 1]];
    return ip - m->base < m->size ? s->cur[lo - 1] + 1 : 0;
}

int cp_stacks_pyframe(cp_stacks *s, uint64_t id, const char *file, const char *func,
                      uint64_t line)
{
    cp_pyframe *f = cp_map_put(&s->pyframes, id, NULL);
    if (!f)
        return -ENOMEM;
    f->file = cp_istr0(file ? file : "?");
    f->func = cp_istr0(func ? func : "?");
    f->line = line;
    f->user = cp_py_user(f->file);
    return f->file && f->func ? 0 : -ENOMEM;
}

int cp_stacks_add(cp_stacks *s, uint64_t id, uint64_t n_native, const uint64_t *ip,
                  uint64_t n_py, const uint64_t *py)
{
    if (n_native > 4096 || n_py > 4096)
        return -EINVAL;
    int created;
    cp_stack *st = cp_map_put(&s->stacks, id, &created);
    if (!st)
        return -ENOMEM;
    if (!created)
        free(st->native);
    memset(st, 0, sizeof *st);
    /* One block: native frames, then Python frame ids. */
    void *blk = malloc(n_native * sizeof(cp_frame) + n_py * sizeof(uint64_t) + 1);
    if (!blk) {
        cp_map_del(&s->stacks, id, NULL);
        return -ENOMEM;
    }
    st->native = blk;
    st->py = (uint64_t *)((cp_frame *)blk + n_native);
    st->n_native = (uint32_t)n_native;
    st->n_py = (uint32_t)n_py;
    for (uint64_t i = 0; i < n_native; i++) {
        st->native[i].ip = ip[i];
        st->native[i].mod = cp_find_module(s, ip[i]);
    }
    if (n_py)                   /* py may be NULL then: memcpy's arguments must not be */
        memcpy(st->py, py, n_py * sizeof *py);
    return 0;
}

const cp_stack *cp_stacks_get(const cp_stacks *s, uint64_t id)
{
    return id ? cp_map_get(&s->stacks, id) : NULL;
}

int cp_stacks_has_lib(const cp_stacks *s, uint64_t id, unsigned roles)
{
    const cp_stack *st = cp_stacks_get(s, id);
    if (!st)
        return 0;
    for (uint32_t i = 0; i < st->n_native; i++)
        if (st->native[i].mod && cp_lib_find(s->mods[st->native[i].mod - 1].path, roles))
            return 1;
    return 0;
}

/* --- ELF files and symbols --------------------------------------------------------- */

typedef struct cp_elf {
    const char *path;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    GElf_Addr bias;
    int ok;
    int dwarf;              /* its DWARF is read (cp_debuginfo_dwarf_safe) */
} cp_elf;

static cp_elf *g_elf;
static size_t g_n_elf, g_cap_elf;
static cp_map g_elf_by_path = { .val_size = sizeof(int) };
static cp_map g_symcache = { .val_size = sizeof(cp_symres) };
/* Every module is reported with its file already open: libdwfl never has
 * to find one (its own search asks debuginfod by build id). */
static int cp_no_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
                          Dwarf_Addr base, char **file_name, Elf **elfp)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
    return -1;
}

static const Dwfl_Callbacks g_dwfl_cb = {
    .find_elf = cp_no_find_elf,
    .find_debuginfo = cp_debuginfo_find,
    .section_address = dwfl_offline_section_address,
};

static void cp_hex(const unsigned char *b, int n, char *out)
{
    static const char d[] = "0123456789abcdef";
    for (int i = 0; i < n; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[2 * n] = 0;
}

/* Open m's file once per path; refuse a file whose build id differs from
 * the one recorded (it was rebuilt: its symbols would lie). */
static cp_elf *cp_elf_of(const cp_module *m)
{
    int *slot = cp_map_get(&g_elf_by_path, (uint64_t)(uintptr_t)m->path);
    if (slot)
        return &g_elf[*slot];
    if (g_n_elf == g_cap_elf) {
        size_t c = g_cap_elf ? 2 * g_cap_elf : 32;
        cp_elf *n = realloc(g_elf, c * sizeof *n);
        if (!n)
            return NULL;
        g_elf = n;
        g_cap_elf = c;
    }
    cp_elf *e = &g_elf[g_n_elf];
    memset(e, 0, sizeof *e);
    e->path = m->path;
    slot = cp_map_put(&g_elf_by_path, (uint64_t)(uintptr_t)m->path, NULL);
    if (!slot)
        return NULL;
    *slot = (int)g_n_elf++;
    if (m->path[0] != '/')
        return e;
    /* The path comes from the trace: it may name a FIFO, a device or a
     * directory now; only a regular file is read. */
    int fd = cp_file_open_in(m->path, 0, NULL);
    if (fd < 0)
        return e;
    if (!(e->dwfl = dwfl_begin(&g_dwfl_cb))) {
        close(fd);
        return e;
    }
    dwfl_report_begin(e->dwfl);
    /* On success libdwfl owns fd; on failure it is still ours. */
    e->mod = dwfl_report_elf(e->dwfl, cp_base_name(m->path), m->path, fd, 0, false);
    if (!e->mod)
        close(fd);
    dwfl_report_end(e->dwfl, NULL, NULL);
    if (!e->mod || !dwfl_module_getelf(e->mod, &e->bias))
        return e;
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(e->mod, &bits, &vaddr);
    if (n > 0 && m->build_id[0]) {
        char hex[2 * 64 + 1];
        if (n > 64)
            n = 64;
        cp_hex(bits, n, hex);
        if (strcmp(hex, m->build_id) != 0)
            return e;
    }
    e->ok = 1;
    /* The DWARF now, while it is known what its search handed over: a
     * module that refers to a dwz file it did not find is read from its
     * symbol table only (libdw would look for the file itself, blocking). */
    Dwarf_Addr dbias;
    cp_debuginfo_begin();
    Dwarf *dw = dwfl_module_getdwarf(e->mod, &dbias);
    e->dwarf = dw && cp_debuginfo_dwarf_safe(dw);
    return e;
}

/* The ELF virtual address of file offset off, from the program headers. */
static int cp_off_to_vaddr(cp_elf *e, uint64_t off, GElf_Addr *va)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(e->mod, &bias);
    size_t n;
    if (!elf || elf_getphdrnum(elf, &n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
            *va = off - ph.p_offset + ph.p_vaddr;
            return 0;
        }
    }
    return -1;
}

static char *(*g_demangle)(const char *, char *, size_t *, int *);
static int g_demangle_tried;

/* C++ names through libstdc++'s own demangler, loaded only when needed. */
static const char *cp_demangle(const char *name)
{
    if (!name || strncmp(name, "_Z", 2) != 0)
        return name;
    if (!g_demangle_tried) {
        g_demangle_tried = 1;
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h)
            *(void **)&g_demangle = dlsym(h, "__cxa_demangle");
    }
    if (!g_demangle)
        return name;
    int st = 0;
    char *d = g_demangle(name, NULL, NULL, &st);
    if (!d || st != 0)
        return name;
    const char *r = cp_istr0(d);
    free(d);
    return r ? r : name;
}

/* The innermost function (inlined or not) containing addr, from DWARF. */
static const char *cp_dwarf_func(Dwfl_Module *mod, Dwarf_Addr addr)
{
    Dwarf_Addr cubias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &cubias);
    if (!cu)
        return NULL;
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes(cu, addr - cubias, &scopes);
    const char *name = NULL;
    for (int i = 0; i < n && !name; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
            continue;
        Dwarf_Attribute a;
        if (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &a) ||
            dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name, &a) ||
            dwarf_attr_integrate(&scopes[i], DW_AT_name, &a))
            name = dwarf_formstring(&a);
    }
    free(scopes);
    return name;
}

static void cp_sym_native_locked(const cp_stacks *s, const cp_frame *f, cp_symres *out)
{
    memset(out, 0, sizeof *out);
    if (!f->mod)
        return;
    const cp_module *m = &s->mods[f->mod - 1];
    out->module = m->path;
    out->offset = f->ip - m->base + m->file_offset;
    if (s->presym) {        /* read back from a summary: resolved where it was made */
        const cp_symres *r = cp_map_get(s->presym, cp_presym_key(f->mod, out->offset));
        if (r)
            *out = *r;
        return;
    }
    if (!g_symbolize)
        return;
    cp_elf *e = cp_elf_of(m);
    if (!e || !e->ok)
        return;
    uint64_t key = ((uint64_t)(e - g_elf) << 48) ^ out->offset;
    cp_symres *c = cp_map_get(&g_symcache, key);
    if (c) {
        *out = *c;
        return;
    }
    GElf_Addr va;
    if (cp_off_to_vaddr(e, out->offset, &va) == 0) {
        Dwarf_Addr addr = va + e->bias;
        const char *fn = e->dwarf ? cp_dwarf_func(e->mod, addr) : NULL;
        if (!fn) {
            GElf_Off off;
            GElf_Sym sym;
            fn = dwfl_module_addrinfo(e->mod, addr, &off, &sym, NULL, NULL, NULL);
        }
        out->func = fn ? cp_demangle(cp_istr0(fn)) : NULL;
        Dwfl_Line *l = e->dwarf ? dwfl_module_getsrc(e->mod, addr) : NULL;
        int line = 0;
        const char *src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
        if (src) {
            out->file = cp_istr0(cp_short_path(src));
            out->line = (unsigned)line;
        }
    }
    c = cp_map_put(&g_symcache, key, NULL);
    if (c)
        *c = *out;
}

void cp_sym_native(const cp_stacks *s, const cp_frame *f, cp_symres *out)
{
    pthread_mutex_lock(&g_sym_lock);
    cp_sym_native_locked(s, f, out);
    pthread_mutex_unlock(&g_sym_lock);
}

void cp_sym_shutdown(void)
{
    pthread_mutex_lock(&g_sym_lock);
    for (size_t i = 0; i < g_n_elf; i++)
        if (g_elf[i].dwfl)
            dwfl_end(g_elf[i].dwfl);
    free(g_elf);
    g_elf = NULL;
    g_n_elf = g_cap_elf = 0;
    cp_map_free(&g_elf_by_path);
    cp_map_free(&g_symcache);
    cp_debuginfo_shutdown();
    size_t it = 0;
    cp_istr *e;
    while ((e = cp_map_next(&g_intern, &it, NULL)))
        free((void *)e->s);
    cp_map_free(&g_intern);
    pthread_mutex_unlock(&g_sym_lock);
}

/* --- site labels ------------------------------------------------------------------- */

static const char *cp_native_label(const cp_stacks *s, const cp_frame *f)
{
    cp_symres r;
    char buf[1024];
    cp_sym_native(s, f, &r);
    if (r.func && r.file)
        snprintf(buf, sizeof buf, "%s (%s:%u)", r.func, r.file, r.line);
    else if (r.func)
        snprintf(buf, sizeof buf, "%s (%s)", r.func, cp_base_name(r.module));
    else if (r.module)
        snprintf(buf, sizeof buf, "%s+0x%llx", cp_base_name(r.module),
                 (unsigned long long)r.offset);
    else
        snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)f->ip);
    return cp_istr0(buf);
}

static const char *cp_label_compute(cp_stacks *s, const cp_stack *st, int all_frames)
{
    char buf[1024];
    const cp_pyframe *inner = NULL, *user = NULL;
    for (uint32_t i = 0; i < st->n_py; i++) {
        const cp_pyframe *f = cp_map_get(&s->pyframes, st->py[i]);
        if (!f)
            continue;
        if (!inner)
            inner = f;
        if (f->user || all_frames) {
            user = f;
            break;
        }
    }
    const cp_pyframe *pf = user ? user : inner;
    if (pf) {
        snprintf(buf, sizeof buf, "%s:%llu (%s)", cp_short_path(pf->file),
                 (unsigned long long)pf->line, pf->func);
        return cp_istr0(buf);
    }
    for (uint32_t i = 0; i < st->n_native; i++) {
        const cp_frame *f = &st->native[i];
        if (all_frames || (f->mod && s->mods[f->mod - 1].mclass == CP_MODC_USER))
            return cp_native_label(s, f);
    }
    if (st->n_native)
        return cp_native_label(s, &st->native[0]);
    return NULL;
}

const char *cp_site_label_as(cp_stacks *s, uint64_t id, int all_frames)
{
    cp_stack *st = id ? cp_map_get(&s->stacks, id) : NULL;
    if (!st)
        return "(no call site recorded)";
    pthread_mutex_lock(&g_sym_lock);
    const char **slot = all_frames ? &st->label_all : &st->label;
    if (!*slot) {
        const char *l = cp_label_compute(s, st, all_frames);
        *slot = l ? l : "(no call site recorded)";
    }
    pthread_mutex_unlock(&g_sym_lock);
    return *slot;
}

const char *cp_site_label(cp_stacks *s, uint64_t id)
{
    return cp_site_label_as(s, id, g_all_frames);
}
