"""Stand-in of XLA's device allocators as JAX's Device.memory_stats() shows
them (tsl's BFCAllocator stats; keys of jaxlib 0.4.3x-0.7).

Pool: the BFC allocator.  Its limit is the memory fraction of the device's
total memory; preallocated (the default), it takes the whole limit from the
driver in one piece when the client starts, else it grows by regions as
requests need (each region at least 2 MiB and twice the last, up to the
limit).  Best fit over free chunks, split on allocation, coalesced with
free neighbours of the same region on free; sizes rounded up to 256 bytes.
A request no free chunk can hold fails: XLA then raises RESOURCE_EXHAUSTED.

Platform (XLA_PYTHON_CLIENT_ALLOCATOR=platform): every buffer is its own
driver allocation and freed at once; memory_stats() is None.
"""
ALIGN = 256
MIN_REGION = 2 << 20


def _round(n, to):
    return max(to, (n + to - 1) // to * to)


class _Chunk:
    __slots__ = ("region", "offset", "size", "free", "address")

    def __init__(self, region, offset, size, address):
        self.region, self.offset, self.size = region, offset, size
        self.free = True
        self.address = address


class Pool:
    def __init__(self, ordinal, limit, preallocate, driver):
        self.ordinal = ordinal
        self.limit = limit
        self.preallocate = preallocate
        self.driver = driver
        self.chunks = []          # by (region, offset)
        self.regions = []         # (address, size)
        self.next_fake = 0x7F0000000000 + (ordinal << 36)
        self.in_use = self.peak = self.num_allocs = self.largest_alloc = 0
        self.pool_bytes = self.peak_pool = 0
        if preallocate:
            self._extend(limit)

    def _extend(self, size):
        if self.driver is not None:
            address = self.driver.alloc(self.ordinal, size)
            if address is None:
                return False
        else:
            address = self.next_fake
            self.next_fake += size
        self.regions.append((address, size))
        self.chunks.append(_Chunk(len(self.regions) - 1, 0, size, address))
        self.pool_bytes += size
        self.peak_pool = max(self.peak_pool, self.pool_bytes)
        return True

    def _best_fit(self, n):
        best = None
        for c in self.chunks:
            if c.free and c.size >= n and (best is None or c.size < best.size):
                best = c
        return best

    def alloc(self, nbytes):
        """@return : a chunk, or None when the pool cannot serve nbytes."""
        n = _round(nbytes, ALIGN)
        c = self._best_fit(n)
        if c is None and not self.preallocate:
            last = self.regions[-1][1] if self.regions else 0
            grow = min(max(_round(n, MIN_REGION), 2 * last), self.limit - self.pool_bytes)
            if grow >= n and self._extend(grow):
                c = self._best_fit(n)
        if c is None:
            return None
        if c.size > n:
            rest = _Chunk(c.region, c.offset + n, c.size - n, c.address + n)
            self.chunks.insert(self.chunks.index(c) + 1, rest)
            c.size = n
        c.free = False
        self.in_use += n
        self.peak = max(self.peak, self.in_use)
        self.num_allocs += 1
        self.largest_alloc = max(self.largest_alloc, n)
        return c

    def free(self, c):
        c.free = True
        self.in_use -= c.size
        i = self.chunks.index(c)
        nxt = self.chunks[i + 1] if i + 1 < len(self.chunks) else None
        if nxt is not None and nxt.free and nxt.region == c.region:
            c.size += nxt.size
            del self.chunks[i + 1]
        prev = self.chunks[i - 1] if i > 0 else None
        if prev is not None and prev.free and prev.region == c.region:
            prev.size += c.size
            del self.chunks[i]

    def stats(self):
        largest_free = max([c.size for c in self.chunks if c.free] or [0])
        return {"num_allocs": self.num_allocs, "bytes_in_use": self.in_use,
                "peak_bytes_in_use": self.peak, "largest_alloc_size": self.largest_alloc,
                "bytes_limit": self.limit, "bytes_reserved": 0, "peak_bytes_reserved": 0,
                "largest_free_block_bytes": largest_free, "pool_bytes": self.pool_bytes,
                "peak_pool_bytes": self.peak_pool}


class Platform:
    def __init__(self, ordinal, total, driver):
        self.ordinal = ordinal
        self.total = total
        self.driver = driver
        self.in_use = 0
        self.next_fake = 0x7F0000000000 + (ordinal << 36)

    def alloc(self, nbytes):
        n = _round(nbytes, ALIGN)
        if self.driver is not None:
            address = self.driver.alloc(self.ordinal, n)
            if address is None:
                return None
        elif self.in_use + n > self.total:
            return None
        else:
            address = self.next_fake
            self.next_fake += n
        self.in_use += n
        c = _Chunk(0, 0, n, address)
        c.free = False
        return c

    def free(self, c):
        self.in_use -= c.size
        if self.driver is not None:
            self.driver.free(self.ordinal, c.address)

    def stats(self):
        return None
