/*
 * cp_dump.c - `cuprobe-analyze dump TRACE...`: every record as one line of
 * text, for debugging the format and the shim (like `uftrace dump`).
 */
#include <stdio.h>
#include <string.h>

#include "cp_decode.h"
#include "cp_dump.h"

static void cp_put_esc(FILE *f, const char *name, cp_str s)
{
    fprintf(f, " %s=\"", name);
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            putc(c, f);
    }
    putc('"', f);
}

static void cp_put_api(FILE *f, const cp_dec *d, const char *name, uint64_t id)
{
    const char *n = cp_dec_api_name(d, id);
    if (n)
        fprintf(f, " %s=%s", name, n);
    else
        fprintf(f, " %s=#%llu", name, (unsigned long long)id);
}

static void cp_put_routes(FILE *f, uint64_t routes)
{
    fputs(" routes=", f);
    if (!routes)
        fputs("none", f);
    for (unsigned b = 0, sep = 0; b < 8; b++)
        if (routes & (1u << b))
            fprintf(f, "%s%s", sep++ ? "|" : "", cp_route_name(b));
}

static void cp_put_uuid(FILE *f, const char *name, const uint8_t *u)
{
    fprintf(f, " %s=", name);
    for (int i = 0; i < 16; i++)
        fprintf(f, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
}

/* One pair of a KVARR field: " env.NAME=\"value\"". */
static void cp_put_kv(FILE *f, const char *field, cp_str k, cp_str v)
{
    char nm[256];
    snprintf(nm, sizeof nm, "%s.%.*s", field, (int)k.n, k.p);
    cp_put_esc(f, nm, v);
}

static void cp_put_list(FILE *f, const char *label, const char *fmt, uint64_t n,
                        const uint64_t *v)
{
    fprintf(f, " %s=[", label);
    for (uint64_t i = 0; i < n; i++) {
        if (i)
            putc(' ', f);
        fprintf(f, fmt, (unsigned long long)v[i]);
    }
    putc(']', f);
}

/* How one field prints, by kind and dump format (include/cp_records.h). */
#define CP_DU_DEC(n, v) fprintf(f, " %s=%llu", n, (unsigned long long)(v))
#define CP_DU_HEX(n, v) fprintf(f, " %s=0x%llx", n, (unsigned long long)(v))
#define CP_DU_API(n, v) cp_put_api(f, d, n, v)
#define CP_DU_ROUTES(n, v) cp_put_routes(f, v)
#define CP_DU_NAME_(n, s) fprintf(f, " %s=%s", n, s)
#define CP_DU_MEMKIND(n, v) CP_DU_NAME_(n, cp_mem_kind_name(v))
#define CP_DU_MEMCLASS(n, v) CP_DU_NAME_(n, cp_mem_class_name(v))
#define CP_DU_COPYFLAGS(n, v) CP_DU_NAME_(n, cp_copy_flags_str(v, fl, sizeof fl))
#define CP_DU_OP(n, v) CP_DU_NAME_(n, cp_op_name(r->type, v))
#define CP_DU_ROUTE(n, v) CP_DU_NAME_(n, cp_route_name(v))
#define CP_DU_LIBKIND(n, v) CP_DU_NAME_(n, cp_libkind_name(v))
#define CP_DU_REASON(n, v) CP_DU_NAME_(n, cp_end_reason_name(v))
#define CP_DL_NATIVE(n, v) cp_put_list(f, "native", "0x%llx", n, v)
#define CP_DL_PY(n, v) cp_put_list(f, "py", "%llu", n, v)

#define CP_DUMP(k, n, a, fmt) CP_DUMP_##k(n, a, fmt)
#define CP_DUMP_U(n, a, fmt) CP_DU_##fmt(#n, x->n);
#define CP_DUMP_S(n, a, fmt) fprintf(f, " %s=%lld", #n, (long long)x->n);
#define CP_DUMP_STR(n, a, fmt) cp_put_esc(f, #n, x->n);
#define CP_DUMP_BYTES(n, a, fmt) cp_put_uuid(f, #n, x->n);
#define CP_DUMP_UOPT(n, a, fmt)         \
    if (x->n != CP_FIELD_ABSENT)        \
        CP_DU_##fmt(#n, x->n);
#define CP_DUMP_UARR(n, a, fmt) CP_DL_##fmt(x->a, x->n);
#define CP_DUMP_PAIRS(n, a, fmt)                                            \
    CP_DU_DEC(#a, x->a);                                                    \
    for (uint64_t i = 0; i < x->a; i++)                                     \
        fprintf(f, " proc[%llu]=%llu:%llu", (unsigned long long)i,          \
                (unsigned long long)x->n[i].CP_PAIR_##fmt##_A,              \
                (unsigned long long)x->n[i].CP_PAIR_##fmt##_B);
#define CP_DUMP_STRARR(n, a, fmt)                                           \
    CP_DU_DEC(#a, x->a);                                                    \
    for (uint64_t i = 0; i < x->a; i++) {                                   \
        char nm[48];                                                        \
        snprintf(nm, sizeof nm, "%s[%llu]", #n, (unsigned long long)i);     \
        cp_put_esc(f, nm, x->n[i]);                                         \
    }
#define CP_DUMP_KVARR(n, a, fmt)                                            \
    CP_DU_DEC(#a, x->a);                                                    \
    for (uint64_t i = 0; i < x->a; i++)                                     \
        cp_put_kv(f, #n, x->n##_name[i], x->n##_value[i]);

#define CP_DUMP_CASE_(N, id, l, shape, doc)     \
    case CP_REC_##N: {                          \
        const typeof(r->u.l) *x = &r->u.l;      \
        (void)x;                                \
        CP_F_##N(CP_DUMP)                       \
        break;                                  \
    }

static void cp_dump_record(FILE *f, const cp_dec *d, const cp_record *r)
{
    char fl[96];
    (void)fl;
    if (strcmp(cp_rec_type_name(r->type), "UNKNOWN") == 0)
        fprintf(f, "UNKNOWN(%u)", r->type);
    else
        fputs(cp_rec_type_name(r->type), f);
    fprintf(f, " ts=%llu.%09llu tid=%llu", (unsigned long long)(r->ts / 1000000000u),
            (unsigned long long)(r->ts % 1000000000u), (unsigned long long)r->tid);
    if (cp_rec_has_ev(r->type)) {
        const cp_ev *x = &r->ev;
        CP_EV_FIELDS(CP_DUMP)
    }
    switch (r->type) {
    CP_RECORDS(CP_DUMP_CASE_)
    default:
        CP_DU_DEC("len", r->payload_len);
        break;
    }
    putc('\n', f);
}

/* @return : 0 complete, 2 truncated/corrupt/unreadable. */
static int cp_dump_file(const char *path, FILE *f)
{
    const char *err;
    cp_dec *d = cp_dec_open(path, &err);
    if (!d) {
        fflush(f);
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    cp_record r;
    int rc;
    while ((rc = cp_dec_next(d, &r)) == 1)
        cp_dump_record(f, d, &r);
    fflush(f);
    if (rc < 0)
        fprintf(stderr, "%s\n", cp_dec_err(d));
    cp_dec_close(d);
    return rc < 0 ? 2 : 0;
}

int cp_dump_main(int argc, char **argv)
{
    static const char usage[] = "usage: cuprobe dump TRACE...\n"
                                "  every record of each trace as one line of text\n"
                                "Exit status: 0 ok, 2 usage error or an unreadable trace.\n";
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    int first = argc >= 2 && strcmp(argv[1], "--") == 0 ? 2 : 1;
    if (argc <= first || (argv[first][0] == '-' && argv[first][1])) {
        if (argc > first)
            fprintf(stderr, "dump: unknown option '%s'\n", argv[first]);
        fputs(usage, stderr);
        return 2;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    int status = 0;
    for (int i = first; i < argc; i++) {
        if (argc - first > 1)
            printf("%s==> %s <==\n", i > first ? "\n" : "", argv[i]);
        if (cp_dump_file(argv[i], stdout))
            status = 2;
    }
    fflush(stdout);
    return status;
}
