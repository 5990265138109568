/*
 * fk_range.c - the fake driver's memory map: every range of memory the
 * driver knows (device, pool, managed, pinned host, registered host, VMM
 * mappings) in one array sorted by address, plus the first-fit allocator
 * that carves device allocations out of each device's arena.
 *
 * All functions here need fk_lock held, except fk_mem_accessible.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fk_internal.h"

static struct fk_range **fk_ranges;
static size_t fk_nranges, fk_cap_ranges;
static uint64_t fk_next_id = 1;

size_t fk_round(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/* Index of the first range starting above p. */
static size_t fk_upper(uintptr_t p)
{
    size_t lo = 0, hi = fk_nranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (fk_ranges[mid]->start <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct fk_range *fk_range_find_locked(uintptr_t p)
{
    size_t i = fk_upper(p);
    if (i == 0)
        return NULL;
    struct fk_range *r = fk_ranges[i - 1];
    return p - r->start < r->size ? r : NULL;
}

size_t fk_range_count_locked(void)
{
    return fk_nranges;
}

struct fk_range *fk_range_at_locked(size_t i)
{
    return i < fk_nranges ? fk_ranges[i] : NULL;
}

CUresult fk_range_add_locked(const struct fk_range *r)
{
    if (fk_nranges == fk_cap_ranges) {
        size_t cap = fk_cap_ranges ? fk_cap_ranges * 2 : 256;
        struct fk_range **n = realloc(fk_ranges, cap * sizeof(*n));
        if (!n)
            return CUDA_ERROR_OUT_OF_MEMORY;
        fk_ranges = n;
        fk_cap_ranges = cap;
    }
    struct fk_range *c = malloc(sizeof(*c));
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = *r;
    c->id = fk_next_id++;
    size_t i = fk_upper(c->start);
    memmove(&fk_ranges[i + 1], &fk_ranges[i], (fk_nranges - i) * sizeof(*fk_ranges));
    fk_ranges[i] = c;
    fk_nranges++;
    return CUDA_SUCCESS;
}

void fk_range_del_locked(struct fk_range *r)
{
    size_t i = fk_upper(r->start);
    if (i == 0 || fk_ranges[i - 1] != r)
        return;
    i--;
    memmove(&fk_ranges[i], &fk_ranges[i + 1], (fk_nranges - i - 1) * sizeof(*fk_ranges));
    fk_nranges--;
    free(r);
}

/*
 * Is [p, p+n) covered by known ranges that allow the access?  Adjacent
 * ranges count as one (VMM chunks mapped back to back form one buffer).
 * unknown_ok: memory the driver has never seen is pageable host memory,
 * fine for the unified-addressing copies (cuMemcpy) that accept it.
 */
int fk_mem_check(uintptr_t p, size_t n, int write, int unknown_ok)
{
    int ok = 1;
    pthread_mutex_lock(&fk_lock);
    uintptr_t cur = p, end = p + (n ? n : 1);
    if (unknown_ok && !fk_range_find_locked(p))
        goto out_unlock;
    while (cur < end) {
        struct fk_range *r = fk_range_find_locked(cur);
        int need = write ? 3 : 1;
        if (!r || (r->kind == FK_VMM && (r->access & need) != need) ||
            (write && r->kind == FK_HOSTREG && (r->flags & CU_MEMHOSTREGISTER_READ_ONLY))) {
            ok = 0;
            break;
        }
        cur = r->start + r->size;
    }
out_unlock:
    pthread_mutex_unlock(&fk_lock);
    return ok;
}

/* First fit over the sorted free extents; size is a multiple of FK_ALIGN. */
int fk_arena_alloc_locked(struct fk_dev *d, size_t size, uintptr_t *out)
{
    for (size_t i = 0; i < d->n_free; i++) {
        struct fk_extent *e = &d->free_ext[i];
        if (e->size < size)
            continue;
        *out = (uintptr_t)d->arena + e->off;
        e->off += size;
        e->size -= size;
        if (e->size == 0) {
            memmove(e, e + 1, (d->n_free - i - 1) * sizeof(*e));
            d->n_free--;
        }
        return 0;
    }
    return -1;
}

/* Give a block back, merging with its neighbours. */
void fk_arena_free_locked(struct fk_dev *d, uintptr_t p, size_t size)
{
    size_t off = p - (uintptr_t)d->arena;
    size_t i = 0;
    while (i < d->n_free && d->free_ext[i].off < off)
        i++;
    int merge_prev = i > 0 && d->free_ext[i - 1].off + d->free_ext[i - 1].size == off;
    int merge_next = i < d->n_free && off + size == d->free_ext[i].off;
    if (merge_prev && merge_next) {
        d->free_ext[i - 1].size += size + d->free_ext[i].size;
        memmove(&d->free_ext[i], &d->free_ext[i + 1], (d->n_free - i - 1) * sizeof(*d->free_ext));
        d->n_free--;
    } else if (merge_prev) {
        d->free_ext[i - 1].size += size;
    } else if (merge_next) {
        d->free_ext[i].off = off;
        d->free_ext[i].size += size;
    } else {
        if (d->n_free == d->cap_free) {
            size_t cap = d->cap_free * 2;
            struct fk_extent *n = realloc(d->free_ext, cap * sizeof(*n));
            if (!n)
                return;     /* leak the block rather than corrupt the list */
            d->free_ext = n;
            d->cap_free = cap;
        }
        memmove(&d->free_ext[i + 1], &d->free_ext[i], (d->n_free - i) * sizeof(*d->free_ext));
        d->free_ext[i].off = off;
        d->free_ext[i].size = size;
        d->n_free++;
    }
    /* Give big blocks' pages back so host RSS follows device memory use. */
    if (size >= 65536)
        madvise((void *)p, size, MADV_DONTNEED);
}

/* Free everything a destroyed context allocated (pools are per device). */
void fk_mem_drop_ctx_locked(const struct CUctx_st *ctx)
{
    size_t i = 0;
    while (i < fk_nranges) {
        struct fk_range *r = fk_ranges[i];
        if (r->ctx != ctx || r->kind == FK_POOLMEM || r->kind == FK_VMM) {
            i++;
            continue;
        }
        if (r->kind == FK_DEVMEM) {
            struct fk_dev *d = &fk_devs[r->dev];
            fk_arena_free_locked(d, r->start, r->block);
            d->used -= r->block;
        } else if (r->kind == FK_MANAGED || r->kind == FK_HOSTALLOC) {
            munmap((void *)r->start, r->block);
        }
        fk_range_del_locked(r);     /* shifts the array: do not advance i */
    }
}
