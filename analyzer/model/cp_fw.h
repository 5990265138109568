/*
 * cp_fw.h - reading the framework companion's records (CP_REC_FRAMEWORK,
 * docs/framework.md): a minimal JSON reader for the few fields the report
 * uses, and PyTorch's allocator state summarised per device.
 */
#ifndef CP_FW_H
#define CP_FW_H

#include <stddef.h>
#include <stdint.h>

/* A JSON text slice. */
typedef struct cp_jv {
    const char *p;
    size_t n;
} cp_jv;

/*! cp_json_member() : the value of key in the object v (top level only).
 *  @return : 0 with *out set, or -1 when absent or v is not an object. */
int cp_json_member(cp_jv v, const char *key, cp_jv *out);

/*! cp_json_u64() / cp_json_i64() / cp_json_bool() : scalar members of
 *  object v.  @return : 0, or -1 when absent or of another type. */
int cp_json_u64(cp_jv v, const char *key, uint64_t *out);
int cp_json_i64(cp_jv v, const char *key, int64_t *out);
int cp_json_bool(cp_jv v, const char *key, int *out);

/*! cp_json_str() : a string member, unescaped naively (escapes kept) into
 *  buf.  @return : 0 or -1. */
int cp_json_str(cp_jv v, const char *key, char *buf, size_t cap);

/*! cp_json_next() : iterate an array: *it starts at 0; each call yields the
 *  next element in *out.  @return : 1 = element, 0 = end, -1 = malformed. */
int cp_json_next(cp_jv arr, size_t *it, cp_jv *out);

/* PyTorch's caching allocator on one device, from torch.oom / torch.exit /
 * torch.periodic. */
typedef struct cp_torch_dev {
    int device;
    uint64_t allocated, reserved, active, requested;
    uint64_t free_bytes, largest_free, holes, hole_bytes, pinned_segments, releasable;
    uint64_t n_segments, retries, num_ooms;
    int have_frag;              /* the snapshot-derived fields are present */
} cp_torch_dev;

typedef struct cp_torch_oom {
    cp_torch_dev d;             /* the OOM device's summary */
    uint64_t request;
    uint64_t device_free;
    int expandable;             /* 1, 0, or -1 when unknown */
    int64_t max_split;          /* -1: unlimited or unknown */
    char alloc_conf[256];
    char torch_version[64];
    uint64_t n_seg_listed;      /* segments in the record */
    /* the three segments with the most hole bytes */
    struct { uint64_t address, total, allocated, hole_bytes, holes; } pin[3];
    int n_pin;
} cp_torch_oom;

/*! cp_torch_dev_parse() : a per-device summary object into *d.
 *  @return : 0, or -1 when it has no device field. */
int cp_torch_dev_parse(cp_jv obj, cp_torch_dev *d);

/*! cp_torch_oom_parse() : a torch.oom record.  @return : 0 or -1. */
int cp_torch_oom_parse(const char *json, size_t n, cp_torch_oom *o);

/*! cp_fw_conf_expandable() : 1 when an allocator configuration string sets
 *  expandable_segments:True, else 0. */
int cp_fw_conf_expandable(const char *conf);

#endif /* CP_FW_H */
