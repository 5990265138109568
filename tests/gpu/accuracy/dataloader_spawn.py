"""dataloader_spawn.py clean|bug - a DataLoader with 2 worker processes
started with "spawn" (workers that could use CUDA themselves), feeding a
classifier 64 batches of 256 x 2048 floats made in the workers.
bug: pin_memory is left off while the loop copies each batch with
non_blocking=True: the batches are in pageable memory, so every copy blocks
the loop (pageable-async-copy at the copy line).  The clean run has the
DataLoader pin them."""
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BUG = sys.argv[1:] == ["bug"]


class Features(Dataset):
    """Deterministic random features and a class for each of 64 x 256 items."""

    def __len__(self):
        return 64 * 256

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(2048, generator=g), i % 10


def main():
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(2048, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    loader = DataLoader(Features(), batch_size=256, num_workers=2,
                        multiprocessing_context="spawn", pin_memory=not BUG)
    for step, (x, y) in enumerate(loader):
        x = x.to(dev, non_blocking=True)   # EXPECT: pageable-async-copy
        y = y.to(dev, non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 16 == 0:
            print("step", step, float(loss))
    print("done")


if __name__ == "__main__":
    main()
