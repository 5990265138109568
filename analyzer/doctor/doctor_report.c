/*
 * doctor_report.c - the checks of `cuprobe doctor`: collecting them, sending
 * them from the driver child to the parent, and printing the checklist as
 * text or JSON with the verdict.
 *
 * Wire format child -> parent, one record a line, fields separated by 0x1f
 * (newlines and 0x1f inside fields are replaced by spaces):
 *   C <layer> <mark> <id> <head> <evidence> <fix> <data>
 *   S <layer> <step>            (the child is about to run <step>)
 *   D <pci> <uuid> <ordinal>    (the GPU at <pci>: its UUID, its CUDA ordinal or -1)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor_int.h"

#define SEP '\x1f'

static const char *const layer_names[CP_DR_LAYERS + 1] = {
    "", "hardware", "driver", "runtime", "allocation and transfer",
};

static void vappend(char *buf, size_t n, const char *fmt, va_list ap)
{
    size_t len = strlen(buf);

    if (len + 1 >= n)
        return;
    vsnprintf(buf + len, n - len, fmt, ap);
}

struct cp_dr_check *cp_dr_add(struct cp_dr_report *r, int layer, enum cp_dr_mark mark,
                              const char *id, const char *fmt, ...)
{
    struct cp_dr_check *c;
    va_list ap;

    /* The previous check is complete once the next one starts. */
    if (r->out_fd >= 0)
        cp_dr_send(r, 0, NULL);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        struct cp_dr_check *v = realloc(r->v, cap * sizeof(*v));

        if (!v) {
            fputs("cuprobe doctor: out of memory\n", stderr);
            exit(1);
        }
        r->v = v;
        r->cap = cap;
    }
    c = &r->v[r->n++];
    memset(c, 0, sizeof(*c));
    c->layer = layer;
    c->mark = mark;
    snprintf(c->id, sizeof(c->id), "%s", id);
    va_start(ap, fmt);
    vappend(c->head, sizeof(c->head), fmt, ap);
    va_end(ap);
    return c;
}

void cp_dr_ev(struct cp_dr_check *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vappend(c->evidence, sizeof(c->evidence), fmt, ap);
    va_end(ap);
}

void cp_dr_fix(struct cp_dr_check *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vappend(c->fix, sizeof(c->fix), fmt, ap);
    va_end(ap);
}

int cp_dr_fmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    int len;

    va_start(ap, fmt);
    len = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

void cp_dr_json_str(char *buf, size_t n, const char *s)
{
    size_t len = strlen(buf);

#define PUT(ch) do { if (len + 2 < n) buf[len++] = (ch); } while (0)
    PUT('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '"' || ch == '\\') {
            PUT('\\');
            PUT((char)ch);
        } else if (ch < 0x20) {
            if (len + 8 < n)
                len += (size_t)snprintf(buf + len, n - len, "\\u%04x", ch);
        } else {
            PUT((char)ch);
        }
    }
    PUT('"');
#undef PUT
    buf[len] = '\0';
}

static void kv_key(struct cp_dr_check *c, const char *key)
{
    if (c->data[0])
        strncat(c->data, ",", sizeof(c->data) - strlen(c->data) - 1);
    cp_dr_json_str(c->data, sizeof(c->data), key);
    strncat(c->data, ":", sizeof(c->data) - strlen(c->data) - 1);
}

void cp_dr_kv_str(struct cp_dr_check *c, const char *key, const char *val)
{
    kv_key(c, key);
    cp_dr_json_str(c->data, sizeof(c->data), val);
}

void cp_dr_kv_int(struct cp_dr_check *c, const char *key, long long val)
{
    size_t len;

    kv_key(c, key);
    len = strlen(c->data);
    snprintf(c->data + len, sizeof(c->data) - len, "%lld", val);
}

void cp_dr_kv_num(struct cp_dr_check *c, const char *key, double val)
{
    size_t len;

    kv_key(c, key);
    len = strlen(c->data);
    snprintf(c->data + len, sizeof(c->data) - len, "%.3f", val);
}

void cp_dr_kv_raw(struct cp_dr_check *c, const char *key, const char *json)
{
    kv_key(c, key);
    strncat(c->data, json, sizeof(c->data) - strlen(c->data) - 1);
}

bool cp_dr_layer_failed(const struct cp_dr_report *r, int layer)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].layer == layer && r->v[i].mark == CP_DR_FAIL)
            return true;
    return false;
}

/* Field text for the wire: separators and newlines would split records. */
static void put_field(FILE *f, const char *s)
{
    fputc(SEP, f);
    for (; *s; s++)
        fputc(*s == '\n' || *s == SEP || *s == '\r' ? ' ' : *s, f);
}

int cp_dr_send(struct cp_dr_report *r, int layer, const char *step)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = 0;

    if (!f)
        return -errno;
    for (; r->sent < r->n; r->sent++) {
        const struct cp_dr_check *c = &r->v[r->sent];
        char num[16];

        fputc('C', f);
        snprintf(num, sizeof(num), "%d", c->layer);
        put_field(f, num);
        snprintf(num, sizeof(num), "%d", (int)c->mark);
        put_field(f, num);
        put_field(f, c->id);
        put_field(f, c->head);
        put_field(f, c->evidence);
        put_field(f, c->fix);
        put_field(f, c->data);
        fputc('\n', f);
    }
    if (step)
        fprintf(f, "S%c%d%c%s\n", SEP, layer, SEP, step);
    fclose(f);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(r->out_fd, buf + off, len - off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -EPIPE;
            break;
        }
        off += (size_t)w;
    }
    free(buf);
    return rc;
}

int cp_dr_send_gpu(struct cp_dr_report *r, const char *pci, const char *uuid, int ordinal)
{
    char line[256];
    int len;

    if (r->out_fd < 0)
        return 0;
    cp_dr_send(r, 0, NULL); /* keep the checks before it in order */
    len = snprintf(line, sizeof(line), "D%c%s%c%s%c%d\n", SEP, pci, SEP, uuid[0] ? uuid : "?", SEP, ordinal);
    if (len <= 0 || (size_t)len >= sizeof(line))
        return -EINVAL;
    return write(r->out_fd, line, (size_t)len) == len ? 0 : -EPIPE;
}

int cp_dr_recv_line(struct cp_dr_report *r, char *line, int *layer, char *step, size_t n)
{
    char *f[8];
    int nf = 0;
    char *p = line;

    while (nf < 8) {
        f[nf++] = p;
        p = strchr(p, SEP);
        if (!p)
            break;
        *p++ = '\0';
    }
    if (nf == 3 && strcmp(f[0], "S") == 0) {
        *layer = atoi(f[1]);
        snprintf(step, n, "%s", f[2]);
        return 2;
    }
    if (nf == 8 && strcmp(f[0], "C") == 0) {
        int out_fd = r->out_fd;
        struct cp_dr_check *c;

        r->out_fd = -1;
        c = cp_dr_add(r, atoi(f[1]), (enum cp_dr_mark)atoi(f[2]), f[3], "%s", f[4]);
        r->out_fd = out_fd;
        snprintf(c->evidence, sizeof(c->evidence), "%s", f[5]);
        snprintf(c->fix, sizeof(c->fix), "%s", f[6]);
        snprintf(c->data, sizeof(c->data), "%s", f[7]);
        return 1;
    }
    return -EINVAL;
}

/* --- printing ----------------------------------------------------------- */

enum lstat { L_OK, L_WARN, L_FAIL, L_SKIP };

static enum lstat layer_status(const struct cp_dr_report *r, int layer, int failed_layer)
{
    bool any = false, warn = false;

    if (failed_layer && layer > failed_layer)
        return L_SKIP;
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].layer != layer)
            continue;
        any = true;
        if (r->v[i].mark == CP_DR_FAIL)
            return L_FAIL;
        warn |= r->v[i].mark == CP_DR_WARN;
    }
    if (!any)
        return L_SKIP;
    return warn ? L_WARN : L_OK;
}

static int first_failed_layer(const struct cp_dr_report *r)
{
    for (int l = 1; l <= CP_DR_LAYERS; l++)
        if (cp_dr_layer_failed(r, l))
            return l;
    return 0;
}

/* A finding of the kernel log itself (not the line saying what was read). */
static bool log_finding(const struct cp_dr_check *c)
{
    return strcmp(c->id, "xid") == 0 || strcmp(c->id, "pcie.aer") == 0;
}

/* The verdict text after "verdict: ": the heads of the failures of the
 * failed layer, else of all warnings; for --kernel-log, whose only checks
 * are the log's, of its notes when nothing worse was found, so that a log
 * with findings never reads as clean. */
static void verdict(const struct cp_dr_ctx *ctx, int failed, char *buf, size_t n)
{
    const struct cp_dr_report *r = &ctx->rep;
    enum cp_dr_mark want = failed ? CP_DR_FAIL : CP_DR_WARN;
    int count = 0, notes = 0;
    size_t len;

    for (size_t i = 0; i < r->n; i++) {
        count += r->v[i].mark == want && (!failed || r->v[i].layer == failed);
        notes += r->v[i].mark == CP_DR_NOTE && log_finding(&r->v[i]);
    }
    if (failed)
        snprintf(buf, n, "FAIL at layer %d (%s): ", failed, layer_names[failed]);
    else if (count)
        snprintf(buf, n, "PASS with %d warning%s: ", count, count == 1 ? "" : "s");
    else if (ctx->kernel_log && notes)
        snprintf(buf, n, "PASS: nothing in %s needs action; %d note%s: ", ctx->kernel_log, notes,
                 notes == 1 ? "" : "s");
    else if (ctx->kernel_log)
        snprintf(buf, n, "PASS: no Xid event, no PCIe AER error in %s", ctx->kernel_log);
    else
        snprintf(buf, n, "PASS: all %d layers passed", CP_DR_LAYERS);
    if (!failed && !count && ctx->kernel_log && notes)
        want = CP_DR_NOTE;
    len = strlen(buf);
    for (size_t i = 0, k = 0; i < r->n; i++) {
        if (r->v[i].mark != want || (failed && r->v[i].layer != failed) ||
            (want == CP_DR_NOTE && !log_finding(&r->v[i])))
            continue;
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s", k++ ? "; " : "",
                                r->v[i].head);
        if (len >= n)
            break;
    }
}

static const char *mark_sym(enum cp_dr_mark m)
{
    static const char *const s[] = {"\u2713", "!", "\u2717", "\u00b7"};

    return s[m];
}

static const char *mark_name(enum cp_dr_mark m)
{
    static const char *const s[] = {"ok", "warn", "fail", "note"};

    return s[m];
}

static void print_text(const struct cp_dr_ctx *ctx, int failed, const char *vtext)
{
    const struct cp_dr_report *r = &ctx->rep;

    if (ctx->kernel_log)
        printf("cuprobe doctor: reading the kernel log %s (another machine's: only the log is checked)\n",
               ctx->kernel_log);
    else
        printf("cuprobe doctor: checking the GPU stack layer by layer\n");
    for (int l = 1; l <= CP_DR_LAYERS; l++) {
        bool any = false;

        for (size_t i = 0; i < r->n; i++)
            any |= r->v[i].layer == l;
        if (layer_status(r, l, failed) != L_SKIP)
            printf("\nlayer %d  %s\n", l, layer_names[l]);
        else if (ctx->kernel_log && !(failed && l > failed))
            printf("\nlayer %d  %s: not checked (--kernel-log)\n", l, layer_names[l]);
        else if (any) /* a skipped layer can still hold the kernel log's findings */
            printf("\nlayer %d  %s: probe skipped (layer %d failed); from the kernel log:\n", l, layer_names[l],
                   failed);
        else
            printf("\nlayer %d  %s: skipped (layer %d failed)\n", l, layer_names[l], failed ? failed : l - 1);
        for (size_t i = 0; i < r->n; i++) {
            const struct cp_dr_check *c = &r->v[i];

            if (c->layer != l)
                continue;
            printf("  %s %s%s%s\n", mark_sym(c->mark), c->head, c->evidence[0] ? ": " : "",
                   c->evidence);
            if (c->fix[0])
                printf("      fix: %s\n", c->fix);
        }
    }
    printf("\nverdict: %s\n", vtext);
}

static void jput(const char *s)
{
    char buf[2 * CP_DR_DATA + 64] = "";

    cp_dr_json_str(buf, sizeof(buf), s);
    fputs(buf, stdout);
}

/* The kernel log as read: the top-level "kernel_log" object. */
static void print_json_log(const struct cp_dr_klog *log)
{
    printf("\"kernel_log\":{\"source\":");
    jput(log->source);
    printf(",\"readable\":%s,\"foreign\":%s,\"lines\":%llu,\"xid_lines\":%llu,\"aer_lines\":%llu,"
           "\"not_used\":",
           log->readable ? "true" : "false", log->foreign ? "true" : "false", log->lines, log->xid_lines,
           log->aer_lines);
    jput(log->tried);
    printf("},");
}

/*
 * JSON schema (also in docs/doctor.md):
 * { "schema": "cuprobe-doctor/2",
 *   "mode": "machine" | "kernel-log",        kernel-log: --kernel-log FILE
 *   "verdict": "pass" | "warn" | "fail",     warn = passed with warnings
 *   "exit": 0 | 1,
 *   "failed_layer": 1..4 | null,
 *   "summary": string,                       the text after "verdict: "
 *   "kernel_log": { "source": string, "readable": bool, "foreign": bool,
 *                   "lines", "xid_lines", "aer_lines": number,
 *                   "not_used": string },    the sources not used, and why
 *   "layers": [ { "layer": 1..4, "name": string,
 *                 "status": "ok" | "warn" | "fail" | "skipped",
 *                 "checks": [ { "id": string, "mark": "ok"|"warn"|"fail"|"note",
 *                               "head": string, "evidence": string,
 *                               "fix": string | null, "data": object } ] } ] }
 */
static void print_json(const struct cp_dr_ctx *ctx, int failed, const char *vtext)
{
    static const char *const lnames[] = {"ok", "warn", "fail", "skipped"};
    const struct cp_dr_report *r = &ctx->rep;
    bool warn = false;

    for (size_t i = 0; i < r->n; i++)
        warn |= r->v[i].mark == CP_DR_WARN;
    printf("{\"schema\":\"cuprobe-doctor/2\",\"mode\":\"%s\",\"verdict\":\"%s\",\"exit\":%d,",
           ctx->kernel_log ? "kernel-log" : "machine", failed ? "fail" : warn ? "warn" : "pass", failed ? 1 : 0);
    if (failed)
        printf("\"failed_layer\":%d,\"summary\":", failed);
    else
        printf("\"failed_layer\":null,\"summary\":");
    jput(vtext);
    printf(",");
    print_json_log(&ctx->log);
    printf("\"layers\":[");
    for (int l = 1; l <= CP_DR_LAYERS; l++) {
        bool first = true;

        printf("%s{\"layer\":%d,\"name\":\"%s\",\"status\":\"%s\",\"checks\":[", l > 1 ? "," : "",
               l, layer_names[l], lnames[layer_status(r, l, failed)]);
        for (size_t i = 0; i < r->n; i++) {
            const struct cp_dr_check *c = &r->v[i];

            if (c->layer != l)
                continue;
            printf("%s{\"id\":", first ? "" : ",");
            first = false;
            jput(c->id);
            printf(",\"mark\":\"%s\",\"head\":", mark_name(c->mark));
            jput(c->head);
            printf(",\"evidence\":");
            jput(c->evidence);
            printf(",\"fix\":");
            if (c->fix[0])
                jput(c->fix);
            else
                printf("null");
            printf(",\"data\":{%s}}", c->data);
        }
        printf("]}");
    }
    printf("]}\n");
}

int cp_dr_print(const struct cp_dr_ctx *ctx)
{
    char vtext[2048];
    int failed = first_failed_layer(&ctx->rep);

    verdict(ctx, failed, vtext, sizeof(vtext));
    if (ctx->json)
        print_json(ctx, failed, vtext);
    else
        print_text(ctx, failed, vtext);
    fflush(stdout);
    return failed ? 1 : 0;
}
