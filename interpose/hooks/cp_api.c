/*
 * cp_api.c - the API table's names: id -> exact ELF name, and name -> id
 * for the resolvers (generated from include/cp_api_table.h).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "cp_wrap.h"

static const char *const cp_names[CP_ID_COUNT] = {
#define CP_API(name, pfn, mode, hook, params, args) #name,
#define CP_API0(name, pfn, mode, hook) #name,
#include "cp_api_table.h"
#undef CP_API
#undef CP_API0
};

/* Per API id: bit 1 << enum cp_route for every route its wrapper was
 * handed out by (cp_resolve.c adds, the API record reports). */
static _Atomic unsigned cp_routes[CP_ID_COUNT];

void cp_api_route_add(uint32_t id, int route)
{
    if (id < CP_ID_COUNT)
        atomic_fetch_or(&cp_routes[id], 1u << route);
}

unsigned cp_api_routes(unsigned id)
{
    return id < CP_ID_COUNT ? atomic_load(&cp_routes[id]) : 0;
}

const char *cp_api_name(uint32_t id)
{
    return id < CP_ID_COUNT ? cp_names[id] : "?";
}

/* Name -> id: open addressing over FNV-1a, built once on first use.  The
 * dlsym hook asks for every symbol any library looks up, so this must be
 * cheap and allocation-free. */
#define CP_HASH_SLOTS 512
static int16_t cp_hash[CP_HASH_SLOTS];
static atomic_int cp_hash_state;

CP_NO_SANITIZE static uint32_t cp_fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

CP_NO_SANITIZE static void cp_hash_build(void)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&cp_hash_state, &expect, 1)) {
        while (atomic_load(&cp_hash_state) != 2)
            ;   /* another thread is building it: a few microseconds */
        return;
    }
    memset(cp_hash, 0xff, sizeof(cp_hash));
    for (int i = 0; i < CP_ID_COUNT; i++) {
        uint32_t h = cp_fnv1a(cp_names[i]) & (CP_HASH_SLOTS - 1);
        while (cp_hash[h] >= 0)
            h = (h + 1) & (CP_HASH_SLOTS - 1);
        cp_hash[h] = (int16_t)i;
    }
    atomic_store(&cp_hash_state, 2);
}

CP_NO_SANITIZE int cp_api_lookup(const char *elf_name)
{
    if (atomic_load_explicit(&cp_hash_state, memory_order_acquire) != 2)
        cp_hash_build();
    uint32_t h = cp_fnv1a(elf_name) & (CP_HASH_SLOTS - 1);
    for (;;) {
        int i = cp_hash[h];
        if (i < 0)
            return -1;
        if (strcmp(cp_names[i], elf_name) == 0)
            return i;
        h = (h + 1) & (CP_HASH_SLOTS - 1);
    }
}
