# compile_worker.py - a clean torch.compile run (tests/gpu/compile_clean.sh):
# Inductor compiles in worker processes that only call cuInit.
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU(),
                            torch.nn.Linear(512, 512)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
step = torch.compile(lambda x: model(x).square().mean())
x = torch.randn(128, 512, device="cuda")
for _ in range(30):
    opt.zero_grad(set_to_none=True)
    loss = step(x)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print(f"compile_clean loss {loss.item():.4f}")
