"""lightning_unpinned.py clean|bug - Lightning: a regression MLP trained for
80 steps on 2 MiB batches from a DataLoader.  Lightning moves every batch to
the GPU itself, with non_blocking=True.
bug: the DataLoader leaves pin_memory off (its default), so each of those
copies comes from pageable memory and blocks the training loop
(pageable-async-copy at trainer.fit(), the program's innermost frame: the
copy is Lightning's; the fix is pin_memory=True on the DataLoader)."""
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning as L
except ImportError:
    import pytorch_lightning as L

BUG = sys.argv[1:] == ["bug"]


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                       torch.nn.Linear(1024, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(80 * 512, 1024)
    data = TensorDataset(x, x.sum(1, keepdim=True))
    loader = DataLoader(data, batch_size=512, shuffle=True, pin_memory=not BUG)
    trainer = L.Trainer(max_steps=80, accelerator="gpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Regressor(), loader)   # EXPECT: pageable-async-copy
    print("done")
