"""fork_worker.py - CUDA touched in Dataset.__getitem__ of a DataLoader whose
workers are forked after the parent initialised CUDA: the worker dies of
"Cannot re-initialize CUDA in forked subprocess", which the parent
re-raises.  Expected: an error at __getitem__'s line naming the fork, the
parent's CUDA initialisation and the fix.  Argument "clean" (the accuracy
suite): __getitem__ returns CPU tensors, the loop moves them."""
import sys

import torch
from torch.utils.data import DataLoader, Dataset

DEVICE = "cpu" if sys.argv[1:] == ["clean"] else "cuda"


class CudaDataset(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, index):
        return torch.full((4,), float(index), device=DEVICE)  # EXPECT: fatal-error


model = torch.nn.Linear(4, 2).cuda()                # CUDA initialised in the parent
loader = DataLoader(CudaDataset(), batch_size=8, num_workers=2,
                    multiprocessing_context="fork")
for batch in loader:
    print(model(batch.cuda()).sum().item())
