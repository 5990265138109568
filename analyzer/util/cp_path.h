/*
 * cp_path.h - file path helpers.
 */
#ifndef CP_PATH_H
#define CP_PATH_H

#include <string.h>

/*! cp_base_name() : the part of path after its last '/' (all of it when it
 *  has none).  @return : a pointer into path. */
static inline const char *cp_base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

#endif /* CP_PATH_H */
