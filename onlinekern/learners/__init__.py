"""One module per algorithm; importing this package registers every learner."""
from onlinekern.learners.fogd import FOGD
from onlinekern.learners.ogd import KernelOGD
from onlinekern.learners.perceptron import Perceptron
from onlinekern.registry import register

for _cls in (Perceptron, KernelOGD, FOGD):
    register(_cls)

__all__ = ["Perceptron", "KernelOGD", "FOGD"]
