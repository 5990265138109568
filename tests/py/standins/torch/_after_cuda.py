"""Stands for the modules real torch imports after torch.cuda."""
import json  # noqa: F401
