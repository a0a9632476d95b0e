import torch

s = 'ÿþú'
x = torch.zeros(4)
