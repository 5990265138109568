/*
 * test_records_doc.c - docs/trace-format.md lists exactly the fields of the
 * record table (include/cp_records.h).  The doc's record table, between the
 * "records:begin" and "records:end" markers, must equal what this program
 * prints with `gen`; `make docs` rewrites it.
 *
 *   test_records_doc            compare ($ROOT/docs/trace-format.md)
 *   test_records_doc gen        print the generated section
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_trace.h"
#include "cp_unit.h"

#define CP_XSTR_(x) #x
#define CP_XSTR(x) CP_XSTR_(x)

/* One field as the doc spells it, e.g. ", u kind", ", str name". */
#define CP_DOC(k, n, a, fmt) CP_DOC_##k(n, a, fmt)
#define CP_DOC_U(n, a, fmt) ", u " #n
#define CP_DOC_S(n, a, fmt) ", s " #n
#define CP_DOC_STR(n, a, fmt) ", str " #n
#define CP_DOC_BYTES(n, a, fmt) ", bytes[" #a "] " #n
#define CP_DOC_UOPT(n, a, fmt) ", u " #n " (absent in older traces)"
#define CP_DOC_UARR(n, a, fmt) ", u " #a ", u " #n "[" #a "]"
#define CP_DOC_PAIRS(n, a, fmt) \
    ", u " #a ", " #n ": (u " CP_XSTR(CP_PAIR_##fmt##_A) ", u " CP_XSTR(CP_PAIR_##fmt##_B) ")[" #a "]"
#define CP_DOC_STRARR(n, a, fmt) ", u " #a ", str " #n "[" #a "]"
#define CP_DOC_KVARR(n, a, fmt) ", u " #a ", " #n ": (str name, str value)[" #a "]"

#define CP_DOC_SHAPE_EV ", EV"
#define CP_DOC_SHAPE_REC ""
#define CP_DOC_SHAPE_BARE ""

struct row {
    unsigned id;
    const char *name, *fields, *note;
};

/* fields start with ", " (dropped when printed); "" = none. */
#define CP_DOC_ROW_(N, id, l, shape, doc) {id, #N, CP_DOC_SHAPE_##shape CP_F_##N(CP_DOC), doc},
static const struct row g_rows[] = { CP_RECORDS(CP_DOC_ROW_) };

static const char g_begin[] = "<!-- records:begin (generated from include/cp_records.h by `make docs`; do not edit) -->\n";
static const char g_end[] = "<!-- records:end -->\n";

static size_t gen(char *buf, size_t cap)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n, "%s", g_begin);
    n += (size_t)snprintf(buf + n, cap - n, "The event prefix `EV`: `%s`\n\n",
                          &CP_EV_FIELDS(CP_DOC)[2]);
    n += (size_t)snprintf(buf + n, cap - n,
                          "| type | name | fields (after ts_delta, tid) | notes |\n"
                          "|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof g_rows / sizeof *g_rows && n < cap; i++) {
        const struct row *r = &g_rows[i];
        n += (size_t)snprintf(buf + n, cap - n, "| %u | %s | %s | %s |\n", r->id, r->name,
                              r->fields[0] ? r->fields + 2 : "none", r->note);
    }
    n += (size_t)snprintf(buf + n, cap - n, "%s", g_end);
    CHECK(n < cap, "generated section does not fit in %zu bytes", cap);
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "cannot open %s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

int main(int argc, char **argv)
{
    static char want[1 << 16];
    size_t wn = gen(want, sizeof want);
    if (argc > 1 && strcmp(argv[1], "gen") == 0) {
        fwrite(want, 1, wn, stdout);
        return 0;
    }
    const char *root = getenv("ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/trace-format.md", root ? root : ".");
    char *doc = slurp(path);
    char *b = strstr(doc, g_begin), *e = b ? strstr(b, g_end) : NULL;
    CHECK(b && e, "%s: no generated record table (markers %.20s... %.20s...): run `make docs`", path,
          g_begin, g_end);
    size_t have = (size_t)(e + strlen(g_end) - b);
    if (have != wn || memcmp(b, want, wn) != 0) {
        /* Name the first line that differs. */
        size_t i = 0, line = 1;
        while (i < have && i < wn && b[i] == want[i])
            line += b[i++] == '\n';
        CHECK(0, "%s: the record table differs from include/cp_records.h at its line %zu: run "
                 "`make docs`", path, line);
    }
    /* Every record of the table is in the doc once (the comparison above
     * already implies it; this names the record when it is not). */
    for (size_t i = 0; i < sizeof g_rows / sizeof *g_rows; i++) {
        char key[64];
        snprintf(key, sizeof key, "| %u | %s |", g_rows[i].id, g_rows[i].name);
        CHECK(strstr(doc, key) != NULL, "%s: no row %s", path, key);
    }
    printf("test_records_doc: %zu records, doc current\n", sizeof g_rows / sizeof *g_rows);
    return 0;
}
