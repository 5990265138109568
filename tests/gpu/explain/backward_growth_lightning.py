"""backward_growth_lightning.py - the same growth in a Lightning module (which
calls backward() itself): training_step keeps every step's activations.
Expected: memory-growth at a line of this file (trainer.fit's, above
backward()).  "clean" (the accuracy suite): nothing kept.  Batches pinned:
Lightning copies them with non_blocking=True (pageable would block)."""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning as L
except ImportError:
    import pytorch_lightning as L


class KeepActivations(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)])
        self.acts = []

    def training_step(self, batch, batch_idx):
        out = self.net(batch[0])
        if sys.argv[1:] != ["clean"]:
            self.acts.append(out)                   # every step's activations stay
        return out.square().mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-3)


data = DataLoader(TensorDataset(torch.randn(60 * 1024, 2048)), batch_size=1024, pin_memory=True)
trainer = L.Trainer(max_steps=60, accelerator="gpu", devices=1, logger=False,
                    enable_checkpointing=False, enable_progress_bar=False,
                    enable_model_summary=False)
trainer.fit(KeepActivations(), data)  # EXPECT: memory-growth
print("done")
