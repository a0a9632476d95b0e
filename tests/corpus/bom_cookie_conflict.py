# -*- coding: latin-1 -*-
import torch
x = torch.zeros(4)
