"""cuda_graph.py clean|bug - PyTorch CUDA graph: an MLP forward captured
once with torch.cuda.graph and replayed 300 times, each replay fed a new
batch copied into the graph's static input.
bug: the batch is copied with non_blocking=True from ordinary (pageable)
host memory: the copy blocks (pageable-async-copy at the copy line)."""
import sys

import torch

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 2048)).to(dev).eval()
static_in = torch.randn(1024, 2048, device=dev)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.no_grad(), torch.cuda.stream(s):
    for _ in range(3):
        model(static_in)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.no_grad(), torch.cuda.graph(g):
    static_out = model(static_in)
host = torch.randn(1024, 2048)
if not BUG:
    host = host.pin_memory()
for step in range(300):
    static_in.copy_(host, non_blocking=True)   # EXPECT: pageable-async-copy
    g.replay()
    if step % 100 == 0:
        print("step", step, float(static_out[0, 0]))
torch.cuda.synchronize()
print("done")
