"""clean_resnet.py - a clean ResNet-18 (torchvision) training run from a
pinned loader: must report no warning or error."""
import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
data = [(torch.randn(32, 3, 128, 128), torch.randint(0, 10, (32,))) for _ in range(20)]
loader = torch.utils.data.DataLoader(data, batch_size=None, pin_memory=True)
losses = []
for x, y in loader:
    x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    losses.append(loss.detach())
print("resnet losses", [round(v, 4) for v in torch.stack(losses).tolist()])
