"""triton_gather.py clean|bug - a Triton embedding-gather kernel with a bounds
check (tl.device_assert; run.py sets TRITON_DEBUG=1 as well as debug=True,
so the check is compiled in with any Triton) over a 50,000-row table, 50
batches of 4,096 token ids padded with a pad id.
bug: the pad id is len(vocab), one past the table's last row (an
off-by-one: the tokenizer's added pad token was never given a row): the
kernel's assert fails on the GPU and the error surfaces at a later call
(fatal-error naming the gather's launch among the launches in flight)."""
import sys

import torch
import triton
import triton.language as tl

BUG = sys.argv[1:] == ["bug"]


@triton.jit(debug=True)
def gather_rows(table_ptr, idx_ptr, out_ptr, n_rows, D: tl.constexpr):
    row = tl.program_id(0)
    src = tl.load(idx_ptr + row)
    tl.device_assert((src >= 0) & (src < n_rows), "token id out of the table")
    cols = tl.arange(0, D)
    tl.store(out_ptr + row * D + cols, tl.load(table_ptr + src * D + cols))


VOCAB, D, BATCH = 50_000, 128, 4096
torch.manual_seed(0)
table = torch.randn(VOCAB, D, device="cuda")
pad_id = VOCAB if BUG else 0                        # bug: len(vocab), no such row
out = torch.empty(BATCH, D, device="cuda")
total = torch.zeros((), device="cuda")
for step in range(50):
    ids = torch.randint(1, VOCAB, (BATCH,), device="cuda")
    ids[-64:] = pad_id                              # the batch's padding
    gather_rows[(BATCH,)](table, ids, out, VOCAB, D=D)   # EXPECT: fatal-error +kernel-log
    total += out.sum()
print("done", float(total))
