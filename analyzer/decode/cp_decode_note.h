/*
 * cp_decode_note.h - what the reader keeps beyond the current record: the
 * header and end facts (cp_trace_info) and the id -> name tables of API
 * and STRING records, noted from each record as it is handed out, so a
 * name is known exactly from its record on, whichever thread decoded it.
 */
#ifndef CP_DECODE_NOTE_H
#define CP_DECODE_NOTE_H

#include <stddef.h>
#include <stdint.h>

#include "cp_record.h"

/* id -> owned NUL-terminated text, open addressing. */
struct cp_idmap {
    uint64_t *keys;
    char **vals;
    size_t cap, n;
};

/* Everything the notes keep for one trace (zeroed: nothing noted yet). */
typedef struct cp_dec_names {
    struct cp_idmap apis, strings;
    cp_trace_info info;
} cp_dec_names;

/*! cp__dec_noted() : non-zero for the record types cp__dec_note() keeps
 *  something of (the others skip the call). */
static inline int cp__dec_noted(unsigned type)
{
    return type == CP_REC_HEADER || type == CP_REC_API || type == CP_REC_STRING ||
           type == CP_REC_LOST || type == CP_REC_END;
}

/*! cp__dec_note() : keep what later questions need from record r: header
 *  and end facts into nm->info, API and STRING names into its tables.
 *  @return : 0, or -ENOMEM. */
int cp__dec_note(cp_dec_names *nm, const cp_record *r);

/*! cp__dec_names_api() : the name of API id, or NULL when not announced. */
const char *cp__dec_names_api(const cp_dec_names *nm, uint64_t id);

/*! cp__dec_names_string() : the text of STRING id, or NULL. */
const char *cp__dec_names_string(const cp_dec_names *nm, uint64_t id);

/*! cp__dec_names_free() : release every name and fact (nm is then empty). */
void cp__dec_names_free(cp_dec_names *nm);

#endif /* CP_DECODE_NOTE_H */
