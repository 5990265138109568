"""Stand-in torch.cuda.memory: a toy caching allocator with PyTorch 2.11's
observable surface (memory_stats_as_nested_dict, memory_stats, _snapshot,
_record_memory_history: the Python stack of each live block, innermost
first, in its "frames")."""
import os
import sys

import torch
from . import _lazy_init, is_initialized

_SMALL = 1 << 20          # requests up to 1 MiB come from 2 MiB segments
_SMALL_SEGMENT = 2 << 20
_MID_SEGMENT = 20 << 20   # requests below 10 MiB share 20 MiB segments
# Set by torch._C._cuda_record_memory_history (and STANDIN_TORCH_HISTORY=1,
# the program's own history): blocks keep their stacks.
_standin_record_stacks = os.environ.get("STANDIN_TORCH_HISTORY") == "1"
_STATS = ("allocation", "allocated_bytes", "segment", "reserved_bytes",
          "active", "active_bytes", "inactive_split", "inactive_split_bytes",
          "requested_bytes")


def _driver_segment(size, stream_ordered=False):
    """STANDIN_TORCH_DRIVER=1: a segment taken from the driver, as PyTorch's
    allocator takes it (cuMemAlloc on the current context; under
    backend:cudaMallocAsync, cuMemAllocAsync for each tensor), so that its
    address is one the trace has; else None."""
    if os.environ.get("STANDIN_TORCH_DRIVER") != "1":
        return None
    import _standin_driver

    return _standin_driver.alloc(size, "segment", stream_ordered)


def _stream_ordered():
    """backend:cudaMallocAsync: no cache, each tensor is a driver
    allocation of its own (and PyTorch keeps no blocks to snapshot)."""
    return torch._C._cuda_getAllocatorBackend() == "cudaMallocAsync"


def _fail(what):
    if os.environ.get("STANDIN_TORCH_FAIL") == what:
        raise RuntimeError("stand-in %s failure" % what)


class _Device:
    def __init__(self, index):
        self.index = index
        self.capacity = int(os.environ.get("STANDIN_TORCH_CAPACITY", str(1 << 30)))
        self.segments = []
        self.next_address = 0x7F0000000000 + (index << 36)
        self.peak = {}
        self.counters = {"num_alloc_retries": 0, "num_ooms": 0,
                         "num_device_alloc": 0, "num_device_free": 0,
                         "num_sync_all_streams": 0}

    def reserved(self):
        return sum(s["total_size"] for s in self.segments)

    def _new_segment(self, size, small, stream_ordered=False):
        address = _driver_segment(size, stream_ordered)
        if address is None:
            address = self.next_address
            self.next_address += size
        seg = {"address": address, "total_size": size, "stream": 0,
               "segment_type": "small" if small else "large",
               "segment_pool_id": (0, 0), "is_expandable": False,
               "blocks": [{"address": address, "size": size,
                           "requested_size": 0, "state": "inactive", "frames": []}]}
        self.segments.append(seg)
        self.counters["num_device_alloc"] += 1
        return seg

    def _best_fit(self, size, small):
        best = None
        for seg in self.segments:
            if (seg["segment_type"] == "small") != small:
                continue
            for i, b in enumerate(seg["blocks"]):
                if b["state"] == "inactive" and b["size"] >= size:
                    if best is None or b["size"] < best[0]["blocks"][best[1]]["size"]:
                        best = (seg, i)
        return best

    def _release_cached(self):
        keep = [s for s in self.segments
                if any(b["state"] != "inactive" for b in s["blocks"])]
        self.counters["num_device_free"] += len(self.segments) - len(keep)
        if os.environ.get("STANDIN_TORCH_DRIVER") == "1":
            import _standin_driver

            for seg in self.segments:
                if seg not in keep:
                    _standin_driver.free(seg["address"])
        self.segments = keep

    def _room(self, seg_size, size=None):
        """Raise PyTorch's OutOfMemoryError, after the OOM observers, when
        seg_size more bytes do not fit."""
        if self.reserved() + seg_size <= self.capacity:
            return
        size = seg_size if size is None else size
        self.counters["num_ooms"] += 1
        free = self.capacity - self.reserved()
        for obs in list(torch._C._oom_observers):
            obs(self.index, size, self.reserved(), free)
        raise torch.cuda.OutOfMemoryError(
            "CUDA out of memory. Tried to allocate %d bytes." % size)

    def alloc(self, nbytes):
        size = max(512, (nbytes + 511) // 512 * 512)
        small = size <= _SMALL
        found = None if _stream_ordered() else self._best_fit(size, small)
        if found is None and _stream_ordered():
            self._room(size)
            found = (self._new_segment(size, small, True), 0)
        if found is None:
            if small:
                seg_size = _SMALL_SEGMENT
            elif size < (10 << 20):
                seg_size = _MID_SEGMENT
            else:
                seg_size = (size + _SMALL_SEGMENT - 1) // _SMALL_SEGMENT * _SMALL_SEGMENT
            if self.reserved() + seg_size > self.capacity:
                self.counters["num_alloc_retries"] += 1
                self._release_cached()
            self._room(seg_size, size)
            found = (self._new_segment(seg_size, small), 0)
        seg, i = found
        block = seg["blocks"][i]
        rest = block["size"] - size
        if rest >= (512 if small else _SMALL):
            seg["blocks"].insert(i + 1, {"address": block["address"] + size,
                                         "size": rest, "requested_size": 0,
                                         "state": "inactive", "frames": []})
            block["size"] = size
        block["state"] = "active_allocated"
        block["requested_size"] = nbytes
        block["frames"] = _stack() if _standin_record_stacks else []
        self._track_peaks()
        return block["address"]

    def free(self, address):
        if _stream_ordered():
            seg = next((g for g in self.segments if g["address"] == address), None)
            if seg is None:
                raise ValueError("stand-in: free of unknown address %#x" % address)
            self.segments.remove(seg)
            self.counters["num_device_free"] += 1
            if os.environ.get("STANDIN_TORCH_DRIVER") == "1":
                import _standin_driver

                _standin_driver.free_async(address)
            return
        for seg in self.segments:
            blocks = seg["blocks"]
            for i, b in enumerate(blocks):
                if b["address"] == address and b["state"] != "inactive":
                    b["state"] = "inactive"
                    b["requested_size"] = 0
                    b["frames"] = []
                    if i + 1 < len(blocks) and blocks[i + 1]["state"] == "inactive":
                        b["size"] += blocks.pop(i + 1)["size"]
                    if i > 0 and blocks[i - 1]["state"] == "inactive":
                        blocks[i - 1]["size"] += blocks.pop(i)["size"]
                    return
        raise ValueError("stand-in: free of unknown address %#x" % address)

    def current(self, pool):
        out = dict.fromkeys(_STATS, 0)
        for seg in self.segments:
            if pool != "all" and seg["segment_type"] + "_pool" != pool:
                continue
            out["segment"] += 1
            out["reserved_bytes"] += seg["total_size"]
            live = any(b["state"] != "inactive" for b in seg["blocks"])
            for b in seg["blocks"]:
                if b["state"] != "inactive":
                    out["allocation"] += 1
                    out["active"] += 1
                    out["allocated_bytes"] += b["size"]
                    out["active_bytes"] += b["size"]
                    out["requested_bytes"] += b["requested_size"]
                elif live:
                    out["inactive_split"] += 1
                    out["inactive_split_bytes"] += b["size"]
        return out

    def _track_peaks(self):
        for pool in ("all", "large_pool", "small_pool"):
            for key, value in self.current(pool).items():
                k = (key, pool)
                self.peak[k] = max(self.peak.get(k, 0), value)

    def stats(self):
        _fail("stats")
        out = {}
        for pool in ("all", "large_pool", "small_pool"):
            cur = self.current(pool)
            for key in _STATS:
                out.setdefault(key, {})[pool] = {
                    "current": cur[key], "peak": self.peak.get((key, pool), cur[key]),
                    "allocated": cur[key], "freed": 0}
        out.update(self.counters)
        out["max_split_size"] = -1
        out["oversize_allocations"] = {"current": 0, "peak": 0, "allocated": 0, "freed": 0}
        out["oversize_segments"] = {"current": 0, "peak": 0, "allocated": 0, "freed": 0}
        out["reserved_bytes_by_private_pools"] = {}
        return out


_devices = {}


def _device(index):
    index = 0 if index is None else int(index)
    if index not in _devices:
        _devices[index] = _Device(index)
    return _devices[index]


def _standin_alloc(nbytes, device=0):
    _lazy_init()
    return _device(device).alloc(nbytes)


def _standin_free(address, device=0):
    _device(device).free(address)


def empty_cache():
    """torch.cuda.empty_cache(): every segment that holds no live block
    goes back to the driver."""
    if is_initialized():
        for dev in _devices.values():
            dev._release_cached()


def memory_stats_as_nested_dict(device=None):
    if not is_initialized():
        return {}
    return _device(device).stats()


def memory_stats(device=None):
    result = []

    def add(prefix, obj):
        if isinstance(obj, dict):
            prefix = prefix + "." if prefix else prefix
            for k, v in obj.items():
                add(prefix + str(k), v)
        else:
            result.append((prefix, obj))

    add("", memory_stats_as_nested_dict(device))
    result.sort()
    return dict(result)


def _allocator_settings():
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    return {"PYTORCH_CUDA_ALLOC_CONF": conf, "max_split_size": -1,
            "garbage_collection_threshold": 0.0,
            "expandable_segments": "expandable_segments:True" in conf,
            "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
            "pinned_use_cuda_host_register": False, "roundup_power2_divisions": {},
            "graph_capture_record_stream_reuse": False}


def _stack():
    """The calling Python stack as PyTorch's CapturedTraceback gives it
    (stacks="python"): its own frames included, innermost first."""
    frames, f = [], sys._getframe(1)
    while f is not None:
        frames.append({"filename": f.f_code.co_filename, "line": f.f_lineno,
                       "name": f.f_code.co_name})
        f = f.f_back
    return frames


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize,
                           device=None, clear_history=False, compile_context=False,
                           global_record_annotations=False, skip_actions=None):
    """PyTorch 2.11's _record_memory_history (its _impl form; the legacy
    bool form is not mirrored)."""
    torch._C._cuda_record_memory_history(enabled, context, stacks, max_entries, clear_history,
                                         compile_context, global_record_annotations,
                                         skip_actions if skip_actions is not None else [])


def _snapshot(device=None, augment_with_fx_traces=False):
    _fail("snapshot")
    if _stream_ordered():
        raise RuntimeError(
            "Calling snapshot with backend:cudaMallocAsync is not meaningful. (For "
            "backend:native, snapshot returns a detailed summary of all blocks tracked by the "
            "allocator, but the cudaMallocAsync backend does not track individual blocks.)")
    segments = []
    for index in sorted(_devices):
        for seg in _devices[index].segments:
            d = dict(seg)
            d["device"] = index
            d["allocated_size"] = sum(b["size"] for b in seg["blocks"]
                                      if b["state"] == "active_allocated")
            d["active_size"] = sum(b["size"] for b in seg["blocks"]
                                   if b["state"] != "inactive")
            d["requested_size"] = sum(b["requested_size"] for b in seg["blocks"])
            d["frames"] = []
            d["blocks"] = [dict(b, frames=list(b["frames"])) for b in seg["blocks"]]
            segments.append(d)
    return {"segments": segments,
            "device_traces": [[] for _ in range(torch.cuda.device_count())],
            "allocator_settings": _allocator_settings(),
            "external_annotations": []}


def _standin_make_segments(n):
    """n 2 MiB-class segments with alternating live and free blocks (for the
    cost benchmark)."""
    dev = _device(0)
    keep = []
    for _ in range(n * 4):
        keep.append(dev.alloc(400 << 10))
    for address in keep[::2]:
        dev.free(address)
    return keep[1::2]
