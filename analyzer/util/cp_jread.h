/*
 * cp_jread.h - a strict JSON reader for the files cuprobe writes itself
 * (report summaries, cp_summary.h): the whole text into a tree of nodes,
 * each knowing its byte offset, so a damaged file is named with the place
 * where it stops making sense.  Numbers are integers only (what the writers
 * emit); strings are unescaped to UTF-8.
 */
#ifndef CP_JREAD_H
#define CP_JREAD_H

#include <stddef.h>
#include <stdint.h>

enum cp_jtype { CP_J_NULL, CP_J_BOOL, CP_J_INT, CP_J_STR, CP_J_ARR, CP_J_OBJ };

typedef struct cp_jn {
    int type;               /* enum cp_jtype */
    size_t off;             /* byte offset of the value in the text */
    const char *key;        /* member name inside an object, else NULL */
    const char *s;          /* CP_J_STR: the string (NUL-terminated; may hold NULs: len) */
    size_t len;
    int neg;                /* CP_J_INT: negative */
    uint64_t u;             /* CP_J_INT: magnitude; CP_J_BOOL: 0 or 1 */
    struct cp_jn *kid;      /* CP_J_ARR, CP_J_OBJ: n children in order */
    size_t n;
} cp_jn;

typedef struct cp_jdoc cp_jdoc;

/*! cp_jdoc_parse() : parse text[0..n) (one value, then only blanks).
 *  @return : the document (root: cp_jdoc_root), or NULL with
 *  "offset N: what is wrong" in err (out of memory: "out of memory"). */
cp_jdoc *cp_jdoc_parse(const char *text, size_t n, char *err, size_t cap);

/* cp_jdoc_parse_each()'s callback: element i of the array, and the
 * members of the top object before it; 0 to go on. */
typedef int (*cp_jeach_fn)(void *ctx, const cp_jn *top, size_t i, const cp_jn *elem);

/*! cp_jdoc_parse_each() : cp_jdoc_parse(), except that the elements of the
 *  array that is member key of the top object are handed to each() one at
 *  a time, as each is parsed, and freed after it: memory holds one element,
 *  not the array (a summary of thousands of processes).  In the document,
 *  that array has its count (n) and no children.  each() returning non-zero
 *  stops the parse (NULL, err "offset N: stopped by the reader"). */
cp_jdoc *cp_jdoc_parse_each(const char *text, size_t n, const char *key, cp_jeach_fn each,
                            void *ctx, char *err, size_t cap);

/*! cp_jdoc_root() : the top value of d. */
const cp_jn *cp_jdoc_root(const cp_jdoc *d);

/*! cp_jdoc_free() : free d and every node and string of it (NULL is fine). */
void cp_jdoc_free(cp_jdoc *d);

/*! cp_jn_get() : the member key of object o, or NULL (o not an object, or
 *  no such member). */
const cp_jn *cp_jn_get(const cp_jn *o, const char *key);

/*! cp_jn_i64() : an integer node as int64.  @return : 0, or -1 when n is
 *  not an integer or out of range. */
int cp_jn_i64(const cp_jn *n, int64_t *v);

#endif /* CP_JREAD_H */
