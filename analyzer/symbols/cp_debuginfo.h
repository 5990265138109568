/*
 * cp_debuginfo.h - where a module's separate debug information is: the
 * file its .gnu_debuglink names, the /usr/lib/debug/.build-id/ file of its
 * build id, the dwz file (.gnu_debugaltlink) its DWARF refers to, and, only
 * when asked (--debuginfod), a debuginfod server.  libdwfl's own search
 * opens each candidate blocking (a FIFO there holds the report forever) and
 * asks debuginfod whenever DEBUGINFOD_URLS is set; this one opens a
 * candidate only when it is a regular file and the network only on demand.
 */
#ifndef CP_DEBUGINFO_H
#define CP_DEBUGINFO_H

#include <elfutils/libdwfl.h>

/*! cp_debuginfo_find() : the find_debuginfo callback of Dwfl_Callbacks:
 *  an open fd of the debug file (or of the dwz file, when libdwfl asks for
 *  the one debuglink_file names with crc 0 that file_name's DWARF refers
 *  to) that is a regular file whose build id (or CRC) matches, with its
 *  malloc'd name in *debuginfo_file_name; -1 when there is none (then
 *  *debuginfo_file_name is left NULL: libdwfl would open a name left there,
 *  blocking). */
int cp_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                      const char *file_name, const char *debuglink_file,
                      GElf_Word debuglink_crc, char **debuginfo_file_name);

/*! cp_debuginfo_server() : on != 0 (--debuginfod): when no local file
 *  matches, fetch it by build id from the servers of DEBUGINFOD_URLS
 *  (libdebuginfod, loaded then), saying so on stderr.  Off by default. */
void cp_debuginfo_server(int on);

/*! cp_debuginfo_dwarf_safe() : call on this thread right after the first
 *  dwfl_module_getdwarf() of a module that gave dw.  Whether reading dw
 *  cannot make libdw open a file itself: 1 unless dw refers to a dwz file
 *  (.gnu_debugaltlink) that cp_debuginfo_find() did not hand over during
 *  that call (libdw then looks for it on the first reference, opening its
 *  candidates blocking).  The caller leaves DWARF of an unsafe module
 *  unread and uses its symbol table only. */
int cp_debuginfo_dwarf_safe(Dwarf *dw);

/*! cp_debuginfo_begin() : start watching this thread's cp_debuginfo_find()
 *  calls for cp_debuginfo_dwarf_safe(). */
void cp_debuginfo_begin(void);

/*! cp_debuginfo_shutdown() : drop the debuginfod client, if any. */
void cp_debuginfo_shutdown(void);

#endif /* CP_DEBUGINFO_H */
