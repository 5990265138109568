"""Stand-in torch.utils.data (PyTorch 2.11): Dataset and a DataLoader whose
workers are processes started with the platform's default method (fork on
Linux) or multiprocessing_context; a worker's exception reaches the parent
as text and is raised there again, as PyTorch's ExceptionWrapper does:
"Caught <Type> in DataLoader worker process <n>.\\nOriginal Traceback (most
recent call last): ..." (torch/_utils.py)."""
import multiprocessing
import sys
import traceback


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError


class ExceptionWrapper:
    """PyTorch's torch._utils.ExceptionWrapper."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = "Caught %s %s.\nOriginal %s" % (self.exc_type.__name__, self.where, self.exc_msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


def _worker_loop(dataset, indices, queue, worker_id):
    for i in indices:
        try:
            data = dataset[i]
        except Exception:
            data = ExceptionWrapper(where="in DataLoader worker process %d" % worker_id)
        queue.put((i, data))


class DataLoader:
    def __init__(self, dataset, batch_size=1, num_workers=0, multiprocessing_context=None):
        self.dataset = dataset
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.context = multiprocessing_context

    def __len__(self):
        return len(self.dataset) // self.batch_size

    def __iter__(self):
        n = len(self) * self.batch_size
        if self.num_workers == 0:
            for b in range(0, n, self.batch_size):
                yield [self.dataset[i] for i in range(b, b + self.batch_size)]
            return
        ctx = self.context
        if ctx is None or isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        queue = ctx.Queue()
        workers = [ctx.Process(target=_worker_loop,
                               args=(self.dataset, range(w, n, self.num_workers), queue, w))
                   for w in range(self.num_workers)]
        for w in workers:
            w.daemon = True
            w.start()
        got = {}
        try:
            for b in range(0, n, self.batch_size):
                batch = []
                for i in range(b, b + self.batch_size):
                    while i not in got:
                        j, data = queue.get()
                        got[j] = data
                    data = got.pop(i)
                    if isinstance(data, ExceptionWrapper):
                        data.reraise()
                    batch.append(data)
                yield batch
        finally:
            for w in workers:
                w.terminate()
                w.join()
