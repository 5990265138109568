/*
 * check_oom_verdict.c - the out-of-memory post-mortem: verdict, advice and the
 * finding (see check_oom_verdict.h).
 */
#include <stdio.h>
#include <string.h>

#include "check_oom_jax.h"
#include "check_oom_verdict.h"
#include "cp_knobs.h"

static const char *const cp_verdict_names[CP_V_N] = { "capacity", "fragmentation",
                                                      "another process", "pool limit" };

static uint64_t cp_sub(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

/* Memory on the device that this process does not hold: the other
 * processes NVML listed, else total - free - ours (other processes plus
 * every context's overhead). */
static uint64_t cp_oom_others(const cp_oom_ep *e)
{
    if (!e->have_oom)
        return 0;
    if (e->n_listed)
        return e->others_used;
    return cp_sub(cp_sub(e->total_b, e->free_b), e->held_total);
}

int cp_oom_verdict(const cp_proc *p, const cp_oom_ep *e, char *why, size_t cap)
{
    char b1[32], b2[32], b3[32];
    uint64_t req = e->request;
    if (cp_oom_jax_pool(e))
        return cp_oom_jax_verdict(p, e, why, cap);
    if (e->have_torch) {
        const cp_torch_dev *t = &e->torch.d;
        uint64_t gap = cp_sub(t->reserved, t->allocated);
        if (gap >= req && (!t->have_frag || t->largest_free < req)) {
            if (t->have_frag)
                snprintf(why, cap, "PyTorch held %s reserved but unallocated, more than the %s "
                         "requested, but its largest free block was %s",
                         cp_fmt_bytes(gap, b1, sizeof b1), cp_fmt_bytes(req, b2, sizeof b2),
                         cp_fmt_bytes(t->largest_free, b3, sizeof b3));
            else
                snprintf(why, cap, "PyTorch held %s reserved but unallocated, more than the "
                         "%s requested", cp_fmt_bytes(gap, b1, sizeof b1),
                         cp_fmt_bytes(req, b2, sizeof b2));
            return CP_V_FRAGMENTATION;
        }
    }
    if (e->have_pool && cp_sub(e->pool_reserved, e->pool_used) >= req) {
        snprintf(why, cap, "the memory pool reserved %s but used only %s",
                 cp_fmt_bytes(e->pool_reserved, b1, sizeof b1),
                 cp_fmt_bytes(e->pool_used, b2, sizeof b2));
        return CP_V_FRAGMENTATION;
    }
    if (e->have_oom && e->free_b >= req) {
        snprintf(why, cap, "the driver reported %s free, enough for the %s requested, but not "
                 "in one piece", cp_fmt_bytes(e->free_b, b1, sizeof b1),
                 cp_fmt_bytes(req, b2, sizeof b2));
        return CP_V_FRAGMENTATION;
    }
    uint64_t others = cp_oom_others(e);
    if (e->have_oom && others >= req && others >= e->held_total) {
        snprintf(why, cap, "%s of the device was held outside this process (%s), against %s "
                 "held by this process", cp_fmt_bytes(others, b1, sizeof b1),
                 e->n_listed ? "other processes" : "other processes or contexts",
                 cp_fmt_bytes(e->held_total, b2, sizeof b2));
        return CP_V_OTHER_PROCESS;
    }
    snprintf(why, cap, "this process held %s of the device's %s when %s more were asked for",
             cp_fmt_bytes(e->held_total, b1, sizeof b1),
             e->have_oom ? cp_fmt_bytes(e->total_b, b2, sizeof b2) : "memory",
             cp_fmt_bytes(req, b3, sizeof b3));
    return CP_V_CAPACITY;
}

static void cp_oom_advice(cp_proc *p, cp_finding *f, const cp_oom_ep *e, int v)
{
    char b1[32];
    switch (v) {
    case CP_V_FRAGMENTATION:
        if (e->have_torch) {
            if (e->torch.expandable != 1)
                cp_finding_line(f, "Advice: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
                                "so segments grow in place instead of leaving holes.");
            else
                cp_finding_line(f, "expandable_segments is already on.");
            /* Only a value PyTorch accepts, and only one that can keep
             * blocks of this size whole (cp_knobs.h). */
            uint64_t mb = cp_knob_max_split_mb(e->request);
            if (e->torch.max_split < 0 && mb)
                cp_finding_line(f, "Advice: set max_split_size_mb:%llu in "
                                "PYTORCH_CUDA_ALLOC_CONF so large cached blocks are not split "
                                "for small tensors.",
                                (unsigned long long)mb);
            else if (e->torch.max_split < 0)
                cp_finding_line(f, "max_split_size_mb cannot help a request this small "
                                "(PyTorch takes %d or more); set "
                                "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6 so "
                                "cached blocks are released before the card fills.",
                                CP_KNOB_MAX_SPLIT_MIN_MB);
            cp_finding_line(f, "Advice: free references to tensors you no longer need before "
                            "this allocation (del x, or let them go out of scope): live blocks "
                            "pin the free space around them.");
        } else if (e->have_pool) {
            cp_finding_line(f, "Advice: trim the pool before large allocations "
                            "(cuMemPoolTrimTo, torch.cuda.empty_cache()) or lower its release "
                            "threshold (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD).");
        } else {
            cp_finding_line(f, "Advice: allocate the largest buffers first and reuse them; "
                            "for PyTorch set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.");
        }
        break;
    case CP_V_OTHER_PROCESS:
        cp_finding_line(f, "Advice: run on a GPU that is free (CUDA_VISIBLE_DEVICES=...), stop "
                        "the other process, or cap its memory (JAX preallocates 75%%: "
                        "XLA_PYTHON_CLIENT_MEM_FRACTION; PyTorch: "
                        "torch.cuda.set_per_process_memory_fraction).");
        break;
    default:
        if (e->n_site)
            cp_finding_line(f, "The site holding the most was %s (%s).",
                            cp_site_label(&p->stacks, e->site[0].stack),
                            cp_fmt_bytes(e->site[0].size, b1, sizeof b1));
        cp_finding_line(f, "Advice: reduce what is live at the peak: a smaller batch or "
                        "sequence length, free references (del, do not keep outputs or losses "
                        "with their graphs), activation checkpointing, bf16/fp16.");
        break;
    }
}

static void cp_oom_json(cp_proc *p, cp_finding *f, const cp_oom_ep *e, int v, const char *why)
{
    cp_jb *b = &f->details;
    char t[96];
    cp_jb_ku(b, "request_bytes", e->request);
    cp_jb_ks(b, "api", e->api_name);
    cp_jb_key(b, "device");
    cp_jb_open(b, '{');
    cp_jb_ki(b, "ordinal", e->dev);
    cp_jb_ks(b, "uuid", cp_dev_uuid(p, e->dev, t, sizeof t));
    cp_jb_ks(b, "pci_bus_id", cp_dev_pci(p, e->dev, t, sizeof t));
    cp_jb_close(b, '}');
    if (e->have_oom) {
        cp_jb_ku(b, "free_bytes", e->free_b);
        cp_jb_ku(b, "total_bytes", e->total_b);
    }
    cp_jb_key(b, "held");
    cp_jb_open(b, '{');
    cp_jb_ku(b, "device", e->held[CP_HOLD_DEVICE]);
    cp_jb_ku(b, "pool", e->held[CP_HOLD_POOL]);
    cp_jb_ku(b, "vmm", e->held[CP_HOLD_VMM]);
    cp_jb_ku(b, "managed", e->held[CP_HOLD_MANAGED]);
    cp_jb_ku(b, "total", e->held_total);
    cp_jb_close(b, '}');
    cp_jb_ku(b, "other_bytes", cp_oom_others(e));
    cp_jb_key(b, "other_processes");
    cp_jb_open(b, '[');
    for (uint64_t i = 0; i < e->n_procs && i < CP_OOM_PROCS; i++) {
        cp_jb_open(b, '{');
        cp_jb_ku(b, "pid", e->pid[i]);
        cp_jb_ku(b, "used_bytes", e->used[i]);
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    cp_jb_key(b, "largest_allocations");
    cp_jb_open(b, '[');
    for (int i = 0; i < e->n_top; i++) {
        cp_jb_open(b, '{');
        cp_jb_ku(b, "bytes", e->top[i].size);
        cp_jb_ks(b, "kind", cp_mem_kind_name((uint64_t)e->top[i].kind));
        cp_jb_ks(b, "site", cp_site_label(&p->stacks, e->top[i].stack));
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    cp_jb_key(b, "top_sites");
    cp_jb_open(b, '[');
    for (int i = 0; i < e->n_site; i++) {
        cp_jb_open(b, '{');
        cp_jb_ku(b, "bytes", e->site[i].size);
        cp_jb_ku(b, "count", e->site_count[i]);
        cp_jb_ks(b, "site", cp_site_label(&p->stacks, e->site[i].stack));
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    if (e->have_pool) {
        cp_jb_key(b, "pool");
        cp_jb_open(b, '{');
        cp_jb_ku(b, "reserved_bytes", e->pool_reserved);
        cp_jb_ku(b, "used_bytes", e->pool_used);
        cp_jb_close(b, '}');
    }
    cp_jb_ku(b, "released_bytes", e->released);
    cp_jb_ku(b, "failures", e->failures);
    cp_jb_kb(b, "retried", e->failures > 1);
    if (e->have_torch) {
        const cp_torch_dev *d = &e->torch.d;
        cp_jb_key(b, "torch");
        cp_jb_open(b, '{');
        cp_jb_ku(b, "allocated_bytes", d->allocated);
        cp_jb_ku(b, "reserved_bytes", d->reserved);
        cp_jb_ku(b, "reserved_unallocated_bytes", cp_sub(d->reserved, d->allocated));
        if (d->have_frag) {
            cp_jb_ku(b, "largest_free_block", d->largest_free);
            cp_jb_ku(b, "free_bytes", d->free_bytes);
            cp_jb_ku(b, "holes", d->holes);
            cp_jb_ku(b, "pinned_segments", d->pinned_segments);
        }
        cp_jb_ku(b, "segments", d->n_segments);
        cp_jb_key(b, "expandable_segments");
        cp_jb_raw(b, e->torch.expandable < 0 ? "null" : e->torch.expandable ? "true" : "false");
        cp_jb_ki(b, "max_split_size", e->torch.max_split);
        cp_jb_close(b, '}');
    }
    cp_jb_ks(b, "verdict", cp_verdict_names[v]);
    cp_jb_ks(b, "verdict_reason", why);
}

static void cp_oom_torch_lines(cp_finding *f, const cp_oom_ep *e)
{
    char b1[32], b2[32], b3[32], b4[32];
    const cp_torch_dev *d = &e->torch.d;
    cp_finding_line(f, "PyTorch's allocator: %s allocated, %s reserved, %s reserved but "
                    "unallocated%s%s%s.", cp_fmt_bytes(d->allocated, b1, sizeof b1),
                    cp_fmt_bytes(d->reserved, b2, sizeof b2),
                    cp_fmt_bytes(cp_sub(d->reserved, d->allocated), b3, sizeof b3),
                    d->have_frag ? "; largest free block " : "",
                    d->have_frag ? cp_fmt_bytes(d->largest_free, b4, sizeof b4) : "",
                    e->torch.expandable == 1 ? "; expandable segments on" : "");
    if (d->have_frag && d->holes)
        cp_finding_line(f, "%llu free blocks (%s) sit between live blocks in %llu segments: "
                        "empty_cache() cannot return them.", (unsigned long long)d->holes,
                        cp_fmt_bytes(d->hole_bytes, b1, sizeof b1),
                        (unsigned long long)d->pinned_segments);
    for (int i = 0; i < e->torch.n_pin; i++)
        cp_finding_line(f, "  segment 0x%llx: %s, %s allocated, %llu hole%s of %s",
                        (unsigned long long)e->torch.pin[i].address,
                        cp_fmt_bytes(e->torch.pin[i].total, b1, sizeof b1),
                        cp_fmt_bytes(e->torch.pin[i].allocated, b2, sizeof b2),
                        (unsigned long long)e->torch.pin[i].holes,
                        e->torch.pin[i].holes == 1 ? "" : "s",
                        cp_fmt_bytes(e->torch.pin[i].hole_bytes, b3, sizeof b3));
}

/* The two views joined: what filled the card, by who holds it.  PyTorch
 * knows its tensors and its cache; the driver knows everything this process
 * allocated (so the rest of it is cuBLAS/cuDNN workspaces, NCCL buffers and
 * other allocators); the OOM snapshot knows what the device had left. */
static void cp_oom_filled_by(cp_finding *f, const cp_oom_ep *e)
{
    char b1[32], b2[32], b3[32], b4[32];
    const cp_torch_dev *d = &e->torch.d;
    uint64_t outside = cp_sub(e->held_total, d->reserved);
    cp_finding_line(f, "What filled the card: PyTorch tensors %s, PyTorch's cache %s, this process "
                    "outside PyTorch %s (library workspaces, NCCL, other allocators), outside this "
                    "process %s.", cp_fmt_bytes(d->allocated, b1, sizeof b1),
                    cp_fmt_bytes(cp_sub(d->reserved, d->allocated), b2, sizeof b2),
                    cp_fmt_bytes(outside, b3, sizeof b3),
                    e->have_oom ? cp_fmt_bytes(cp_oom_others(e), b4, sizeof b4) : "unknown");
    cp_jb *b = &f->details;
    cp_jb_key(b, "filled_by");
    cp_jb_open(b, '{');
    cp_jb_ku(b, "framework_tensors_bytes", d->allocated);
    cp_jb_ku(b, "framework_cache_bytes", cp_sub(d->reserved, d->allocated));
    cp_jb_ku(b, "process_outside_framework_bytes", outside);
    if (e->have_oom)
        cp_jb_ku(b, "outside_process_bytes", cp_oom_others(e));
    cp_jb_close(b, '}');
}

void cp_oom_postmortem(const cp_check *check, cp_proc *p, const cp_oom_ep *e, cp_report *rep)
{
    char why[512], head[160], dn[192], b1[32], b2[32], b3[32], b4[32], b5[32];
    int v = cp_oom_verdict(p, e, why, sizeof why);
    int xla = cp_oom_jax_pool(e);
    cp_finding *f = xla ? cp_finding_new(rep, check, p, "XLA's pool could not serve %s on %s: %s",
                                         cp_fmt_bytes(e->request, b1, sizeof b1),
                                         cp_dev_name(p, e->dev, dn, sizeof dn),
                                         cp_oom_jax_headline(p, e, v, head, sizeof head))
                        : cp_finding_new(rep, check, p, "%s of %s on %s failed: %s",
                                         e->api_name ? e->api_name : "allocation",
                                         cp_fmt_bytes(e->request, b1, sizeof b1),
                                         cp_dev_name(p, e->dev, dn, sizeof dn),
                                         cp_verdict_names[v]);
    if (!f)
        return;
    f->sort = CP_SORT_BYTES;
    f->t_from = f->t_to = e->ts;
    /* One out-of-memory error for the program, however many attempts. */
    cp_finding_site(f, p, e->stack, 1, e->request, 0, NULL);
    f->count = 1;
    f->bytes = e->request;
    if (e->have_oom)
        cp_finding_line(f, "Free on the device: %s of %s.", cp_fmt_bytes(e->free_b, b1, sizeof b1),
                        cp_fmt_bytes(e->total_b, b2, sizeof b2));
    cp_finding_line(f, "This process held %s: device %s, pool %s, VMM %s, managed %s.",
                    cp_fmt_bytes(e->held_total, b1, sizeof b1),
                    cp_fmt_bytes(e->held[CP_HOLD_DEVICE], b2, sizeof b2),
                    cp_fmt_bytes(e->held[CP_HOLD_POOL], b3, sizeof b3),
                    cp_fmt_bytes(e->held[CP_HOLD_VMM], b4, sizeof b4),
                    cp_fmt_bytes(e->held[CP_HOLD_MANAGED], b5, sizeof b5));
    if (e->n_procs)
        for (uint64_t i = 0; i < e->n_procs && i < CP_OOM_PROCS; i++)
            cp_finding_line(f, "Another process, pid %llu, used %s.",
                            (unsigned long long)e->pid[i],
                            cp_fmt_bytes(e->used[i], b1, sizeof b1));
    else if (e->have_oom && cp_oom_others(e))
        cp_finding_line(f, "Held outside this process: %s (other processes or contexts%s).",
                        cp_fmt_bytes(cp_oom_others(e), b1, sizeof b1),
                        e->n_listed ? "" : "; no per-process list was available");
    if (e->have_pool)
        cp_finding_line(f, "The memory pool reserved %s and used %s.",
                        cp_fmt_bytes(e->pool_reserved, b1, sizeof b1),
                        cp_fmt_bytes(e->pool_used, b2, sizeof b2));
    if (e->n_top)
        cp_finding_line(f, "Largest live allocation: %s (%s) from %s.",
                        cp_fmt_bytes(e->top[0].size, b1, sizeof b1),
                        cp_mem_kind_name((uint64_t)e->top[0].kind),
                        cp_site_label(&p->stacks, e->top[0].stack));
    for (int i = 0; i < e->n_site; i++)
        cp_finding_line(f, "  live: %s in %llu allocation%s from %s",
                        cp_fmt_bytes(e->site[i].size, b1, sizeof b1),
                        (unsigned long long)e->site_count[i], e->site_count[i] == 1 ? "" : "s",
                        cp_site_label(&p->stacks, e->site[i].stack));
    if (xla)
        ;   /* XLA raised at once: nothing was retried or released */
    else if (e->failures > 1 && e->released)
        cp_finding_line(f, "Then the program released %s of cached memory and retried: it "
                        "failed again (%u attempts).", cp_fmt_bytes(e->released, b1, sizeof b1),
                        e->failures);
    else if (e->failures > 1)
        cp_finding_line(f, "Then the program retried with nothing cached to release: it "
                        "failed again (%u attempts).", e->failures);
    else if (e->released)
        cp_finding_line(f, "Afterwards the program freed %s without trying again.",
                        cp_fmt_bytes(e->released, b1, sizeof b1));
    else
        cp_finding_line(f, "The program neither released memory nor retried.");
    if (e->have_torch) {
        cp_oom_torch_lines(f, e);
        cp_oom_filled_by(f, e);
    }
    if (e->have_jax)
        cp_oom_jax_lines(p, f, e);
    cp_finding_line(f, "Verdict: %s: %s.", xla ? head : cp_verdict_names[v], why);
    if (xla)
        cp_oom_jax_advice(p, f, e, v);
    else
        cp_oom_advice(p, f, e, v);
    cp_oom_json(p, f, e, v, why);
    if (e->have_jax)
        cp_oom_jax_json(p, f, e);
}
