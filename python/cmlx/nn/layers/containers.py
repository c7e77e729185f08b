"""``Sequential``: calls its layers in order."""

from .base import Module


class Sequential(Module):
    """Applies ``modules`` (any callables) one after the other; they are kept
    in the list ``layers``."""

    def __init__(self, *modules):
        super().__init__()
        self.layers = list(modules)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
