"""cuda_graph_cache.py clean|bug - PyTorch CUDA graphs for variable-length
batches: an MLP's forward is captured once per input length and the graph
replayed for every batch of that length (64 batches of 100 to 1,000 rows).
bug: the graph cache is keyed by each batch's exact length, which changes
every batch: a new graph is captured for nearly every batch, each with its
own memory pool, kept in the cache (memory-growth at the captured forward,
which allocates each graph's memory).  The clean run pads batches to a
multiple of 256 rows: four graphs, captured up front."""
import sys

import torch

BUG = sys.argv[1:] == ["bug"]
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                            torch.nn.Linear(4096, 1024)).to(dev).eval()
graphs = {}
side = torch.cuda.Stream()                          # where captures warm up


def graph_for(rows):
    """(graph, static input, static output) for batches of `rows` rows."""
    if rows not in graphs:
        static_in = torch.zeros(rows, 1024, device=dev)
        side.wait_stream(torch.cuda.current_stream())
        with torch.no_grad(), torch.cuda.stream(side):
            model(static_in)                        # warm-up before capture
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(g):
            static_out = model(static_in)   # EXPECT: memory-growth
        graphs[rows] = (g, static_in, static_out)
    return graphs[rows]


lengths = torch.randint(100, 1001, (64,)).tolist()
data = torch.randn(1000, 1024, device=dev)
if not BUG:
    for rows in (256, 512, 768, 1024):
        graph_for(rows)
total = torch.zeros((), device=dev)
for n in lengths:
    g, static_in, static_out = graph_for(n if BUG else (n + 255) // 256 * 256)
    static_in[:n].copy_(data[:n])
    static_in[n:].zero_()
    g.replay()
    total += static_out[:n].sum()
print("done", len(graphs), "graphs", float(total))
