"""webtorch.optim: optimizers and learning-rate schedulers, as torch.optim."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam, RAdam
from .asgd import ASGD
from .rprop import Rprop
from .lbfgs import LBFGS
from .adafactor import Adafactor
from . import lr_scheduler, swa_utils

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "ASGD", "Rprop", "LBFGS", "Adafactor", "lr_scheduler", "swa_utils"]
