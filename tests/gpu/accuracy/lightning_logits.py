"""lightning_logits.py clean|bug - Lightning: a classifier (1000 classes)
trained for 100 steps; training_step keeps what the epoch's accuracy needs
in a list (Lightning 2 dropped the outputs of training_epoch_end, so
modules collect them themselves).
bug: the list gets the logits themselves, still on the GPU and still part of
the graph (4 MiB a step): memory grows to the end (memory-growth at the line
that computes them).  The clean run keeps the predicted classes, detached."""
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning as L
except ImportError:
    import pytorch_lightning as L

BUG = sys.argv[1:] == ["bug"]


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(),
                                       torch.nn.Linear(2048, 1000))
        self.seen = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)   # EXPECT: memory-growth
        self.seen.append((logits if BUG else logits.detach().argmax(1), y))
        return F.cross_entropy(logits, y)

    def on_train_epoch_end(self):
        right = sum(int((p.argmax(1) if p.dim() > 1 else p).eq(y).sum()) for p, y in self.seen)
        print("accuracy", right / sum(len(y) for _, y in self.seen))
        self.seen.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-2)


if __name__ == "__main__":
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(100 * 1024, 512), torch.randint(0, 1000, (100 * 1024,)))
    loader = DataLoader(data, batch_size=1024, pin_memory=True)
    trainer = L.Trainer(max_steps=100, accelerator="gpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(Classifier(), loader)
    print("done")
