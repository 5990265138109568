"""PyTorch: the caching allocator's own view, recorded at each OOM, at exit,
periodically and right after the allocator takes a new segment (kinds
torch.oom, torch.exit, torch.periodic, torch.segment; fields in
docs/framework.md); and, from CUDA's initialisation on, the line that calls
each backward pass (torch.backward, _backward.py).

API surface used (PyTorch 2.11; every call is looked up with getattr and a
missing one degrades the record instead of failing):
  torch.__version__, torch.version.cuda, torch._C._cuda_isHistoryEnabled,
  torch._C._cuda_attach_out_of_memory_observer(fn(device, alloc,
      device_allocated, device_free)),
  torch.cuda.is_initialized, _lazy_call, device_count, get_arch_list,
  get_allocator_backend, memory_stats_as_nested_dict(device),
  torch.cuda.memory._snapshot(), torch.autograd.backward (wrapped).

Under backend:cudaMallocAsync PyTorch raises for the OOM observer and for
_snapshot(): neither is called there.

CUDA is never initialised here.  Attaching the OOM observer initialises CUDA
in PyTorch (lazyInitDevice), so it is attached from torch.cuda._lazy_call,
i.e. only when the program's own CUDA initialisation runs.
"""
import os
import sys
import time

from . import _attrib_torch
from ._sink import VERSION
# OOMs after this many in one process get summaries without segments, so a
# program that probes batch sizes by catching OOMs stays cheap.
MAX_FULL_OOMS = 32
# A periodic allocator snapshot (for largest free block and holes) is given
# up for good once one costs more than this.
PERIODIC_SNAPSHOT_BUDGET_US = 10000.0

_BYTE_STATS = ("allocated_bytes", "reserved_bytes", "active_bytes",
               "inactive_split_bytes", "requested_bytes")
_PEAK_STATS = ("allocated_bytes", "reserved_bytes")
_COUNTERS = ("num_alloc_retries", "num_ooms", "num_device_alloc",
             "num_device_free", "num_sync_all_streams")


def _int(value, default=0):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def stats_summary(nested):
    """The fields we keep from memory_stats_as_nested_dict(device)."""
    out = {}
    for key in _BYTE_STATS:
        entry = nested.get(key)
        cur = entry.get("all") if isinstance(entry, dict) else None
        cur = cur if isinstance(cur, dict) else {}
        out[key] = _int(cur.get("current"))
        if key in _PEAK_STATS:
            out["peak_" + key] = _int(cur.get("peak"))
    for key in _COUNTERS:
        if key in nested:
            out[key] = _int(nested[key])
    seg = nested.get("segment")
    seg = seg.get("all") if isinstance(seg, dict) else None
    out["n_segments"] = _int(seg.get("current")) if isinstance(seg, dict) else 0
    return out


def compact_segment(seg):
    """One snapshot segment without its blocks' stack frames."""
    blocks = seg.get("blocks") or ()
    pool = seg.get("segment_pool_id", (0, 0))
    return {
        "address": _int(seg.get("address")),
        "total_size": _int(seg.get("total_size")),
        "allocated_size": _int(seg.get("allocated_size")),
        "active_size": _int(seg.get("active_size")),
        "requested_size": _int(seg.get("requested_size")),
        "stream": _int(seg.get("stream")),
        "segment_type": str(seg.get("segment_type", "")),
        "pool": [_int(x) for x in pool] if isinstance(pool, (tuple, list)) else _int(pool),
        "is_expandable": bool(seg.get("is_expandable", False)),
        "n_blocks": len(blocks),
        "free_blocks": [_int(b.get("size")) for b in blocks
                        if b.get("state") == "inactive"],
    }


def frag_summary(segments):
    """Fragmentation inside the allocator, from compact segments.  A hole is
    a free block in a segment that also holds live blocks: empty_cache()
    cannot return it to CUDA."""
    free_bytes = largest = n_free = holes = hole_bytes = pinned = releasable = 0
    for seg in segments:
        free = seg["free_blocks"]
        n_free += len(free)
        s = sum(free)
        free_bytes += s
        if free:
            largest = max(largest, max(free))
        if seg["active_size"] > 0:
            if free:
                holes += len(free)
                hole_bytes += s
                pinned += 1
        else:
            releasable += seg["total_size"]
    return {"free_bytes": free_bytes, "largest_free_block": largest,
            "free_blocks_count": n_free, "holes": holes, "hole_bytes": hole_bytes,
            "pinned_segments": pinned, "releasable_bytes": releasable}


def conf_expandable(conf):
    """expandable_segments from a PYTORCH_CUDA_ALLOC_CONF string."""
    for item in (conf or "").split(","):
        key, _, value = item.partition(":")
        if key.strip() == "expandable_segments":
            return value.strip().lower() in ("true", "1", "yes")
    return False


def allocator_settings(snapshot_settings, segments):
    conf = (os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
            or os.environ.get("PYTORCH_ALLOC_CONF") or "")
    out = {"alloc_conf": conf}
    settings = snapshot_settings if isinstance(snapshot_settings, dict) else {}
    if settings.get("PYTORCH_CUDA_ALLOC_CONF"):
        out["alloc_conf"] = str(settings["PYTORCH_CUDA_ALLOC_CONF"])
    if "max_split_size" in settings:
        out["max_split_size"] = _int(settings["max_split_size"], -1)
    if "expandable_segments" in settings:
        out["expandable_segments"] = bool(settings["expandable_segments"])
        out["expandable_source"] = "allocator"
    elif any(seg["is_expandable"] for seg in segments):
        out["expandable_segments"] = True
        out["expandable_source"] = "segments"
    else:
        out["expandable_segments"] = conf_expandable(out["alloc_conf"])
        out["expandable_source"] = "env"
    return out


def totals(devices):
    """Sums over devices (largest_free_block: the maximum)."""
    out = {}
    for dev in devices:
        for key, value in dev.items():
            if key in ("device", "segments") or not isinstance(value, int) \
                    or isinstance(value, bool):
                continue
            if key in ("largest_free_block", "max_split_size"):
                out[key] = max(out.get(key, 0), value)
            else:
                out[key] = out.get(key, 0) + value
    return out


def shrink(obj, attempt):
    """Make an over-long record smaller: first drop the free block lists,
    then keep only the largest half of the segments, repeatedly."""
    lists = [obj.get("segments")] + [d.get("segments") for d in obj.get("devices", ())]
    lists = [x for x in lists if x]
    if not lists or attempt > 24:
        return None
    for segs in lists:
        if attempt == 1:
            for seg in segs:
                seg["n_free_blocks"] = len(seg["free_blocks"])
                seg["free_blocks"] = []
            obj["free_blocks_dropped"] = True
        else:
            segs.sort(key=lambda s: -s["total_size"])
            obj["segments_dropped"] = obj.get("segments_dropped", 0) + len(segs) // 2
            del segs[len(segs) - len(segs) // 2:]
    return obj


class TorchCollector:
    def __init__(self, cuda, record, guarded):
        # record(kind, obj, shrink=None) writes a record and guarded(where,
        # fn, *args) runs fn never raising: both come from the companion
        # core, which this module does not import.
        self._record = record
        self._guarded = guarded
        self.cuda = cuda                      # the torch.cuda module
        self.torch = sys.modules.get("torch")
        self.attached = False
        self.ooms = 0
        self.ticks = 0
        self.segments = 0
        self.static = None
        self.periodic_frag = True
        self.periodic_frag_off = ""

    # --- attaching -------------------------------------------------------
    def attach(self):
        """At torch.cuda's import: defer the OOM observer to CUDA's init
        (without torch.cuda._lazy_call, periodic() attaches it once CUDA is
        initialised)."""
        _attrib_torch.at_cuda_init(self.cuda, self._on_cuda_init, self._on_cuda_init_guarded)

    def _on_cuda_init_guarded(self):
        self._guarded("torch.attach", self._on_cuda_init)

    def _on_cuda_init(self):
        if self.attached:
            return
        self.attached = True
        attach = getattr(getattr(self.torch, "_C", None),
                         "_cuda_attach_out_of_memory_observer", None)
        if self._stream_ordered():
            # PyTorch refuses an OOM observer there; the driver sees each
            # failing cudaMallocAsync itself.
            attach = None
        if attach is not None:
            attach(self._observer)
        # torch is whole by now (CUDA initialises at the program's first use).
        from . import _backward

        backward = _backward.install(self.torch, self._record, self._guarded)
        info = {"v": VERSION, "event": "torch_cuda_init",
                "oom_observer": attach is not None, "backward_caller": backward}
        info.update(self._static_info())
        self._record("companion.info", info)

    # --- what every record carries ---------------------------------------
    def _static_info(self):
        if self.static is not None:
            return self.static
        torch, cuda = self.torch, self.cuda
        version = sys.modules.get("torch.version") or getattr(torch, "version", None)
        info = {"torch_version": str(getattr(torch, "__version__", "")),
                "cuda_version": getattr(version, "cuda", None),
                "arch_list": [], "allocator_backend": None}
        get_arch_list = getattr(cuda, "get_arch_list", None)
        if get_arch_list is not None:
            info["arch_list"] = [str(a) for a in get_arch_list()]
        backend = getattr(cuda, "get_allocator_backend", None)
        if backend is not None:
            info["allocator_backend"] = str(backend())
        if cuda.is_initialized():
            self.static = info   # complete only once CUDA is up
        return info

    def _stream_ordered(self):
        """backend:cudaMallocAsync: no blocks to snapshot, no OOM observer
        (PyTorch raises for both)."""
        return self._static_info().get("allocator_backend") == "cudaMallocAsync"

    def _history_enabled(self):
        fn = getattr(getattr(self.torch, "_C", None), "_cuda_isHistoryEnabled", None)
        return bool(fn()) if fn is not None else False

    # --- collection ------------------------------------------------------
    def _collect(self, seg_devices, frag, keep):
        """Per-device summaries, with fragmentation fields when `frag` and
        compact segments for the devices in seg_devices (a set, or True for
        every listed device).  `keep` (a device or None) is always listed.
        @return : (devices, settings, snap_us)."""
        cuda = self.cuda
        devices = []
        for d in range(_int(cuda.device_count())):
            s = stats_summary(cuda.memory_stats_as_nested_dict(d))
            if d == keep or s["peak_reserved_bytes"] or s.get("num_ooms"):
                s["device"] = d
                devices.append(s)
        snap_us, settings, all_segments = 0.0, None, []
        if (frag or seg_devices) and not self._stream_ordered():
            t0 = time.perf_counter()
            snap = cuda.memory._snapshot()
            per_dev = {}
            for seg in snap.get("segments", ()):
                c = compact_segment(seg)
                all_segments.append(c)
                per_dev.setdefault(_int(seg.get("device")), []).append(c)
            settings = snap.get("allocator_settings")
            snap_us = (time.perf_counter() - t0) * 1e6
            for dev in devices:
                segs = per_dev.get(dev["device"], [])
                dev.update(frag_summary(segs))
                if seg_devices is True or dev["device"] in seg_devices:
                    dev["segments"] = segs
        return devices, allocator_settings(settings, all_segments), snap_us

    # --- the three records -----------------------------------------------
    def _observer(self, device, alloc, device_allocated, device_free):
        # Called by the caching allocator, GIL held, allocator lock released,
        # before the OutOfMemoryError is raised.  Must never raise: PyTorch
        # would turn our exception into the program's.
        self._guarded("torch.oom", self._oom, device, alloc, device_allocated,
                      device_free)

    def _oom(self, device, alloc, device_allocated, device_free):
        t0 = time.perf_counter()
        self.ooms += 1
        device = _int(device)
        full = self.ooms <= MAX_FULL_OOMS
        devices, settings, snap_us = self._collect(
            {device} if full else set(), True, device)
        obj = {"v": VERSION, "device": device, "request_bytes": _int(alloc),
               "device_allocated": _int(device_allocated),
               "device_free": _int(device_free), "oom_index": self.ooms,
               "history_enabled": self._history_enabled()}
        obj.update(self._static_info())
        obj.update(settings)
        mine = next((d for d in devices if d["device"] == device), {})
        obj.update({k: v for k, v in mine.items() if k not in ("segments", "device")})
        obj["segments"] = mine.pop("segments", [])
        if not full:
            obj["segments_omitted"] = True
        obj["devices"] = devices
        obj["snapshot_us"] = round(snap_us, 1)
        obj["collect_us"] = round((time.perf_counter() - t0) * 1e6, 1)
        self._record("torch.oom", obj, shrink)

    def exit(self):
        t0 = time.perf_counter()
        obj = {"v": VERSION, "cuda_initialized": bool(self.cuda.is_initialized()),
               "oom_count": self.ooms, "periodic_count": self.ticks,
               "segment_count": self.segments}
        obj.update(self._static_info())
        if obj["cuda_initialized"]:
            obj["history_enabled"] = self._history_enabled()
            devices, settings, snap_us = self._collect(True, True, None)
            obj.update(settings)
            obj.update(totals(devices))
            obj["devices"] = devices
            obj["snapshot_us"] = round(snap_us, 1)
        obj["collect_us"] = round((time.perf_counter() - t0) * 1e6, 1)
        self._record("torch.exit", obj, shrink)

    def periodic(self):
        cuda = self.cuda
        if not cuda.is_initialized():
            return
        if not self.attached:
            self._on_cuda_init()     # torch without _lazy_call
        t0 = time.thread_time()      # CPU time: see _Companion.tick
        frag = self.periodic_frag
        if frag and self._history_enabled() and not _attrib_torch.history_ours():
            # _snapshot() would also convert the whole recorded history
            # (the companion's own, for attribution, keeps none).
            frag = False
        devices, settings, snap_us = self._collect(set(), frag, None)
        if frag and snap_us > PERIODIC_SNAPSHOT_BUDGET_US:
            self.periodic_frag = False
            self.periodic_frag_off = "snapshot took %.0f us" % snap_us
        self.ticks += 1
        obj = {"v": VERSION, "tick": self.ticks, "frag": frag,
               "expandable_segments": settings["expandable_segments"]}
        if self.periodic_frag_off:
            obj["frag_off"] = self.periodic_frag_off
        obj.update(totals(devices))
        obj["devices"] = devices
        obj["collect_us"] = round((time.thread_time() - t0) * 1e6, 1)
        self._record("torch.periodic", obj)

    def segment(self):
        """After the allocator took memory from the driver: allocated and
        reserved per device, without the snapshot (cheap, often)."""
        cuda = self.cuda
        if not cuda.is_initialized():
            return
        t0 = time.thread_time()
        devices, _, _ = self._collect(set(), False, None)
        self.segments += 1
        obj = {"v": VERSION, "sample": self.segments}
        obj.update(totals(devices))
        obj["devices"] = devices
        obj["collect_us"] = round((time.thread_time() - t0) * 1e6, 1)
        self._record("torch.segment", obj)
