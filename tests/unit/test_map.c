// link: build/analyzer/util/cp_map.o
/*
 * test_map.c - the report's u64 hash map (cp_map) against a plain array
 * under heavy churn: puts that find and puts that insert (the created
 * flag, zero-filled new values), gets, deletes by key and by the slot
 * cp_map_find() gave (the model's one probe per FREE), growth at exactly
 * the count that passes load 1/2 (puts probe once inline), and
 * iteration seeing every member once, and cp_map_reserve() making room
 * that n puts fill without growing.  Keys are clustered the way device
 * pointers are (256-byte aligned, close together) and colliding on
 * purpose (multiples of the table size), so probe runs are long and the
 * backward shift has work to do.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#define CP_UNIT_COUNT
#include "cp_unit.h"
#include "cp_map.h"

#define N_KEYS 5000

typedef struct val {
    uint64_t a, b, c;
    uint8_t tag;
} val;

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    return cp_unit_rand(&g_rng);
}

static uint64_t key_of(unsigned i)
{
    /* Half clustered pointers, half keys that share low bits. */
    return i % 2 ? 0x7f0000000000ull + (uint64_t)i * 256 : (uint64_t)i << 20;
}

int main(void)
{
    cp_map m;
    cp_map_init(&m, sizeof(val));
    static uint8_t in[N_KEYS];
    static val ref[N_KEYS];
    size_t n_in = 0, peak = 0;
    for (int step = 0; step < 400000; step++) {
        unsigned i = (unsigned)(rnd() % N_KEYS);
        uint64_t k = key_of(i);
        switch (rnd() % 4) {
        case 0:
        case 1: {               /* put */
            int created = -1;
            val *v = cp_map_put(&m, k, &created);
            CHECK(v != NULL);
            if (!v)
                return 1;
            CHECK(created == !in[i]);
            if (created) {
                val zero = { 0 };
                CHECK(memcmp(v, &zero, sizeof zero) == 0);
                in[i] = 1;
                n_in++;
            } else {
                CHECK(v->a == ref[i].a && v->b == ref[i].b && v->tag == ref[i].tag);
            }
            *v = (val){ rnd(), k, (uint64_t)step, (uint8_t)i };
            ref[i] = *v;
            break;
        }
        case 2: {               /* delete by key, the value copied out */
            val out;
            int rc = cp_map_del(&m, k, &out);
            CHECK(rc == (in[i] ? 0 : -ENOENT));
            if (in[i]) {
                CHECK(out.a == ref[i].a && out.c == ref[i].c);
                in[i] = 0;
                n_in--;
            }
            break;
        }
        default: {              /* find, read, delete in place */
            size_t s = cp_map_find(&m, k);
            CHECK((s != CP_MAP_NONE) == in[i]);
            CHECK(cp_map_get(&m, k) == (s == CP_MAP_NONE ? NULL : cp_map_at(&m, s)));
            if (s != CP_MAP_NONE) {
                const val *v = cp_map_at(&m, s);
                CHECK(v->a == ref[i].a && v->b == k);
                cp_map_del_at(&m, s);
                in[i] = 0;
                n_in--;
            }
            break;
        }
        }
        CHECK(m.n == n_in);
        if (n_in > peak)
            peak = n_in;
        /* The table grows only when a new key would pass load 1/2, so its
         * size (and the order cp_map_next() visits) follows from the most
         * members it ever had. */
        size_t cap = peak ? 64 : 0;
        while (peak * 2 > cap)
            cap *= 2;
        CHECK(m.cap == cap);
    }
    /* Every member is found with its value, every other key is not. */
    for (unsigned i = 0; i < N_KEYS; i++) {
        const val *v = cp_map_get(&m, key_of(i));
        CHECK((v != NULL) == in[i]);
        if (v)
            CHECK(v->a == ref[i].a && v->c == ref[i].c && v->tag == (uint8_t)i);
    }
    /* Iteration visits each member once. */
    size_t it = 0, seen = 0;
    uint64_t key;
    const val *v;
    while ((v = cp_map_next(&m, &it, &key))) {
        CHECK(v->b == key);
        seen++;
    }
    CHECK(seen == n_in);
    printf("map: %zu members in %zu slots after 400000 operations\n", m.n, m.cap);
    cp_map_free(&m);
    CHECK(cp_map_get(&m, key_of(1)) == NULL && cp_map_find(&m, key_of(1)) == CP_MAP_NONE);

    /* Reserved for n: n puts (also colliding ones) never grow it, the
     * table is the smallest that holds them, and a smaller reserve keeps
     * it. */
    for (size_t want = 0; want < 200; want += 13) {
        CHECK(cp_map_reserve(&m, want) == 0);
        size_t cap = m.cap;
        CHECK(cap >= 8 && (cap & (cap - 1)) == 0 && want * 2 <= cap);
        CHECK(cap == 8 || cap / 2 < 2 * want + 2);
        for (size_t i = 0; i < want; i++) {
            val *pv = cp_map_put(&m, key_of(i) * cap, NULL);
            CHECK(pv != NULL);
            if (pv)
                pv->b = i;
        }
        CHECK(m.cap == cap && m.n == want);
        CHECK(cp_map_reserve(&m, want / 2) == 0 && m.cap == cap);
        for (size_t i = 0; i < want; i++) {
            val *gv = cp_map_get(&m, key_of(i) * cap);
            CHECK(gv && gv->b == i);
        }
        cp_map_free(&m);
    }
    return g_fail ? 1 : 0;
}
