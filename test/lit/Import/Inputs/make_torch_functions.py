#!/usr/bin/env python3
"""Writes torch_functions.onnx: two pre-norm MLP blocks exported by torch.onnx's TorchScript
exporter with export_modules_as_functions, so each block is a call of a model-local function
(domain '__main__'). Needs torch; the output is committed.

Run from this folder: python3 make_torch_functions.py
"""
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)
        self.norm = torch.nn.LayerNorm(16)

    def forward(self, x):
        return x + torch.nn.functional.gelu(self.linear(self.norm(x)))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(2)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.onnx.export(Model().eval(), (torch.randn(2, 5, 16),), "torch_functions.onnx",
                      dynamo=False, export_modules_as_functions={Block}, opset_version=18)
