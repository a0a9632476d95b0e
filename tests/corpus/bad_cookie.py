# -*- coding: klingon -*-
import torch
x = torch.zeros(4)
