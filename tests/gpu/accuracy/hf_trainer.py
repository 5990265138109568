"""hf_trainer.py clean|bug - transformers' Trainer: a tiny GPT-2 built from
its config (no download) trained for 5 steps on random tokens held in
memory, then trainer.predict() over 48 batches of held-out tokens.
bug: predict() with neither eval_accumulation_steps nor
preprocess_logits_for_metrics keeps every batch's full logits on the GPU
until the end (8 x 128 x 2048 floats, 8 MiB a batch, concatenated batch after
batch into a new tensor each time): memory grows through the prediction loop (memory-growth at the predict() line, the program's
innermost frame).  The clean run reduces the logits to token ids on the GPU
first (preprocess_logits_for_metrics), as transformers advises."""
import sys
import tempfile

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

BUG = sys.argv[1:] == ["bug"]


class Tokens(torch.utils.data.Dataset):
    """n random sequences of seq token ids, the labels the ids themselves."""

    def __init__(self, n, seq, vocab, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def token_ids(logits, labels):
    return logits.argmax(-1)


torch.manual_seed(0)
cfg = GPT2Config(vocab_size=2048, n_positions=128, n_embd=128, n_layer=2, n_head=2,
                 use_cache=False)
args = TrainingArguments(output_dir=tempfile.mkdtemp(prefix="hf_trainer_"),
                         per_device_train_batch_size=16, per_device_eval_batch_size=8,
                         max_steps=5, learning_rate=1e-4, logging_strategy="no",
                         save_strategy="no", report_to="none", disable_tqdm=True, seed=0)
trainer = Trainer(model=GPT2LMHeadModel(cfg), args=args,
                  train_dataset=Tokens(80, 128, cfg.vocab_size, 0),
                  preprocess_logits_for_metrics=None if BUG else token_ids)
trainer.train()
out = trainer.predict(Tokens(8 * 48, 128, cfg.vocab_size, 1))   # EXPECT: memory-growth
print("done", out.predictions.shape, out.metrics.get("test_loss"))
