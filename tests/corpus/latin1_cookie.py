# -*- coding: latin-1 -*-
import torch


def f():
    s = 'é'; x = torch.zeros(4)
    x.fill_(1)
    return x, s
