"""Stand-in torch.utils: only torch.utils.data."""
