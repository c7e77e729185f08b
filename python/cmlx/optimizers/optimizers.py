"""Optimizers (``mlx.optimizers``): the :class:`Optimizer` base, the
classic first-order methods, Adafactor, Muon and :class:`MultiOptimizer`,
plus :func:`clip_grad_norm`.  The update formulas, their order of operations
and the defaults follow MLX 0.32, so a run gives MLX's numbers."""

from typing import Callable, List, Optional, Tuple, Union

from .. import core as mx
from ..utils import tree_flatten, tree_map, tree_merge, tree_reduce, tree_unflatten

__all__ = [
    "Optimizer",
    "MultiOptimizer",
    "SGD",
    "RMSprop",
    "Adagrad",
    "AdaDelta",
    "Adam",
    "AdamW",
    "Adamax",
    "Lion",
    "Adafactor",
    "Muon",
    "clip_grad_norm",
]

_Rate = Union[float, Callable[["mx.array"], "mx.array"]]


def _empty_like(tree):
    return tree_map(lambda _: {}, tree)


def _extend_state(params, state):
    """Adds empty per-parameter states for parameters ``state`` lacks."""
    if isinstance(params, (list, tuple)):
        state = list(state)
        for i in range(len(state)):
            state[i] = _extend_state(params[i], state[i])
        if len(state) != len(params):
            state.extend(_empty_like(params[len(state) :]))
        return type(params)(state)
    if isinstance(params, dict):
        for k, v in params.items():
            state[k] = _extend_state(v, state[k]) if k in state else _empty_like(v)
        return state
    return state


class Optimizer:
    """Base class: keeps ``state`` (a tree matching the parameters, plus the
    ``step`` count and the hyper-parameters such as ``learning_rate``) and
    maps :meth:`apply_single` over the gradients.  A hyper-parameter given as
    a callable is a schedule evaluated at each step."""

    def __init__(self, schedulers=None):
        self._initialized = False
        self._state = {"step": mx.array(0, mx.uint64)}
        self._schedulers = dict(schedulers or {})

    def update(self, model, gradients: dict):
        """Applies the gradients to ``model``'s parameters in place."""
        model.update(self.apply_gradients(gradients, model))

    def init(self, parameters: dict):
        """Creates the per-parameter state for ``parameters`` (called on the
        first update; parameters that already have a state keep it)."""
        _extend_state(parameters, self._state)
        tree_map(lambda p, s: s or self.init_single(p, s), parameters, self._state)
        self._initialized = True

    def init_single(self, parameter: "mx.array", state: dict):
        """Fills ``state`` for one parameter."""
        raise NotImplementedError()

    def apply_gradients(self, gradients: dict, parameters: dict):
        """The updated parameters (a tree like ``gradients``); advances the
        step and the schedules."""
        if not self._initialized:
            self.init(gradients)
        for name, schedule in self._schedulers.items():
            self.state[name] = schedule(self.step)
        self.state["step"] = self.step + 1
        return tree_map(self.apply_single, gradients, parameters, self.state)

    def apply_single(self, gradient: "mx.array", parameter: "mx.array", state: dict):
        """The updated value of one parameter; may update ``state``."""
        raise NotImplementedError()

    @property
    def state(self):
        """The optimizer's state tree (arrays only, so it can be saved,
        loaded and passed to :func:`mlx.core.compile`)."""
        return self._state

    @state.setter
    def state(self, state: dict):
        self._initialized = False
        self._state = state

    @property
    def step(self):
        return self.state["step"]

    @property
    def learning_rate(self):
        return self.state["learning_rate"]

    @learning_rate.setter
    def learning_rate(self, learning_rate: Union[float, "mx.array"]):
        self.state["learning_rate"] = mx.array(learning_rate)

    def _maybe_schedule(self, name: str, param: _Rate):
        if callable(param):
            self._schedulers[name] = param
            value = param(self.step)
        else:
            value = mx.array(param)
        self.state[name] = value


class MultiOptimizer(Optimizer):
    """Routes each gradient to the first optimizer whose filter
    ``filter(path, gradient)`` accepts it; the last optimizer takes the
    rest (so ``len(filters) == len(optimizers) - 1``)."""

    def __init__(self, optimizers, filters: list = []):
        super().__init__()
        self._state = {}
        if len(filters) != len(optimizers) - 1:
            raise ValueError(f"Given {len(filters)} filters but {len(optimizers) - 1} needed.")
        self.optimizers = optimizers
        self.filters = filters + [lambda *args, **kwargs: True]

    def _split_dictionary(self, gradients: dict):
        if len(self.optimizers) == 1:
            return [gradients]
        parts = [[] for _ in self.optimizers]
        for path, g in tree_flatten(gradients):
            for i, accepts in enumerate(self.filters):
                if accepts(path, g):
                    parts[i].append((path, g))
                    break
        return [tree_unflatten(p) for p in parts]

    def init(self, parameters: dict):
        for opt, part in zip(self.optimizers, self._split_dictionary(parameters)):
            opt.init(part)

    def apply_gradients(self, gradients: dict, parameters: dict):
        tree = {}
        for opt, part in zip(self.optimizers, self._split_dictionary(gradients)):
            tree = tree_merge(tree, opt.apply_gradients(part, parameters))
        return tree

    @property
    def state(self):
        return {"states": [o.state for o in self.optimizers]}

    @state.setter
    def state(self, state: dict):
        if "states" not in state or len(state["states"]) != len(self.optimizers):
            raise ValueError("Invalid state provided")
        for o, s in zip(self.optimizers, state["states"]):
            o.state = s

    @property
    def learning_rate(self):
        return self.optimizers[0].learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate: Union[float, "mx.array"]):
        for o in self.optimizers:
            o.learning_rate = learning_rate


def _check_betas(name, betas):
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"{name} beta{i + 1} should be in [0, 1), {beta} was provided instead")


def _check_positive(name, what, value, strict=True):
    if value <= 0.0 if strict else value < 0.0:
        bound = ">0" if strict else ">=0"
        raise ValueError(f"{name} {what} should be {bound}, {value} was provided instead")


class SGD(Optimizer):
    """Stochastic gradient descent with optional ``momentum``, ``dampening``,
    ``weight_decay`` (added to the gradient) and ``nesterov`` momentum."""

    def __init__(
        self,
        learning_rate: _Rate,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        dampening: float = 0.0,
        nesterov: bool = False,
    ):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening.")
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.dampening = dampening
        self.nesterov = nesterov

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        lr = self.learning_rate.astype(gradient.dtype)
        if self.momentum <= 0:
            return parameter - lr * gradient
        v = self.momentum * state.get("v")
        if self.dampening > 0:
            v = v + (1 - self.dampening) * gradient
        else:
            v = v + gradient
        step = gradient + self.momentum * v if self.nesterov else v
        state["v"] = v
        return parameter - lr * step


class RMSprop(Optimizer):
    """``v = alpha * v + (1 - alpha) * g**2``;
    ``p -= lr * g / (sqrt(v) + eps)``."""

    def __init__(self, learning_rate: _Rate, alpha: float = 0.99, eps: float = 1e-8):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.alpha = alpha
        self.eps = eps
        _check_positive("RMSprop", "alpha", alpha, strict=False)
        _check_positive("RMSprop", "epsilon", eps)

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        v = self.alpha * state["v"] + (1 - self.alpha) * mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class Adagrad(Optimizer):
    """``v += g**2``; ``p -= lr * g / (sqrt(v) + eps)``."""

    def __init__(self, learning_rate: _Rate, eps: float = 1e-8):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        _check_positive("Adagrad", "epsilon", eps)

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        v = state["v"] + mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class AdaDelta(Optimizer):
    """AdaDelta with decay ``rho``: the step is
    ``sqrt(u + eps) / sqrt(v + eps) * g`` scaled by ``learning_rate``."""

    def __init__(self, learning_rate: _Rate, rho: float = 0.9, eps: float = 1e-6):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.rho = rho
        self.eps = eps
        _check_positive("AdaDelta", "rho", rho, strict=False)
        _check_positive("AdaDelta", "epsilon", eps)

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)
        state["u"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        rho, eps = self.rho, self.eps
        v = rho * state["v"] + (1 - rho) * mx.square(gradient)
        d = mx.sqrt(state["u"] + eps) / mx.sqrt(v + eps) * gradient
        u = rho * state["u"] + (1 - rho) * mx.square(d)
        state["v"] = v
        state["u"] = u
        return parameter - lr * d


_ADAM_UPDATES = {}


def _adam_update(b1, b2, eps, weight_decay):
    """Adam's (weight_decay not None: AdamW's) update of one parameter
    without bias correction, as one compiled function of (gradient,
    parameter, m, v, lr) returning the new (parameter, m, v).  It is the
    same ops in the same order, so the same bits; compile fuses the chain
    into one pass over the arrays instead of a dozen.  None when a constant
    is not a plain float (the caller then runs the ops one by one)."""
    consts = (b1, b2, eps) + (() if weight_decay is None else (weight_decay,))
    if not all(type(c) in (float, int) for c in consts):
        return None
    key = (float(b1), float(b2), float(eps), None if weight_decay is None else float(weight_decay))
    fn = _ADAM_UPDATES.get(key)
    if fn is None:

        def update(gradient, parameter, m, v, lr):
            if weight_decay is not None:
                parameter = parameter * (1 - lr * weight_decay)
            m = b1 * m + (1 - b1) * gradient
            v = b2 * v + (1 - b2) * mx.square(gradient)
            return parameter - lr * m / (mx.sqrt(v) + eps), m, v

        fn = _ADAM_UPDATES[key] = mx.compile(update)
    return fn


class Adam(Optimizer):
    """Adam with ``betas`` and ``eps``; MLX's default has no bias
    correction (``bias_correction=True`` adds it)."""

    def __init__(
        self,
        learning_rate: _Rate,
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
        bias_correction: bool = False,
    ):
        super().__init__()
        _check_betas("Adam", betas)
        if not 0.0 <= eps:
            raise ValueError(f"Adam epsilon should be >=0, {eps} was provided instead")
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.eps = eps
        self.bias_correction = bias_correction

    def init_single(self, parameter, state):
        state["m"] = mx.zeros_like(parameter)
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        if not self.bias_correction:
            update = _adam_update(b1, b2, self.eps, None)
            if update is not None:
                parameter, state["m"], state["v"] = update(
                    gradient, parameter, state["m"], state["v"], lr
                )
                return parameter
        m = b1 * state["m"] + (1 - b1) * gradient
        v = b2 * state["v"] + (1 - b2) * mx.square(gradient)
        state["m"] = m
        state["v"] = v
        if not self.bias_correction:
            return parameter - lr * m / (mx.sqrt(v) + self.eps)
        step = self.step
        c1 = (lr / (1 - b1**step)).astype(gradient.dtype)
        c2 = mx.rsqrt(1 - b2**step).astype(gradient.dtype)
        return parameter - (c1 * m) / (mx.sqrt(v) * c2 + self.eps)


class AdamW(Adam):
    """Adam with decoupled weight decay: the parameter is first scaled by
    ``1 - lr * weight_decay``."""

    def __init__(
        self,
        learning_rate: _Rate,
        betas: List[float] = [0.9, 0.999],
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        bias_correction: bool = False,
    ):
        super().__init__(
            learning_rate=learning_rate, betas=betas, eps=eps, bias_correction=bias_correction
        )
        self.weight_decay = weight_decay

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        if not self.bias_correction:
            b1, b2 = self.betas
            update = _adam_update(b1, b2, self.eps, self.weight_decay)
            if update is not None:
                parameter, state["m"], state["v"] = update(
                    gradient, parameter, state["m"], state["v"], lr
                )
                return parameter
        return super().apply_single(gradient, parameter * (1 - lr * self.weight_decay), state)


class Adamax(Adam):
    """Adam with the infinity norm: ``v = max(b2 * v, |g|)``,
    ``p -= lr * m / (v + eps)``."""

    def __init__(self, learning_rate: _Rate, betas: List[float] = [0.9, 0.999], eps: float = 1e-8):
        super().__init__(learning_rate, betas, eps)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = mx.maximum(b2 * state["v"], mx.abs(gradient))
        state["m"] = m
        state["v"] = v
        return parameter - lr * m / (v + self.eps)


class Lion(Optimizer):
    """Lion: the step is ``lr * sign(b1 * m + (1 - b1) * g)``, the momentum
    is updated with ``b2``; optional decoupled ``weight_decay``."""

    def __init__(
        self, learning_rate: _Rate, betas: List[float] = [0.9, 0.99], weight_decay: float = 0.0
    ):
        super().__init__()
        _check_betas("Lion", betas)
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.weight_decay = weight_decay

    def init_single(self, parameter, state):
        state["m"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = state["m"]
        c = b1 * m + (1 - b1) * gradient
        state["m"] = b2 * m + (1 - b2) * gradient
        if self.weight_decay > 0:
            parameter = (1 - lr * self.weight_decay) * parameter
        return parameter - lr * mx.sign(c)


class Adafactor(Optimizer):
    """Adafactor: factored second moments for arrays of rank >= 2, relative
    step sizes (``relative_step``), parameter scaling (``scale_parameter``),
    update clipping (``clip_threshold``) and optional first moment
    (``beta_1``)."""

    def __init__(
        self,
        learning_rate: Union[float, Callable[["mx.array"], "mx.array"], None] = None,
        eps: Tuple[float, float] = (1e-30, 1e-3),
        clip_threshold: float = 1.0,
        decay_rate: float = -0.8,
        beta_1: Optional[float] = None,
        weight_decay: float = 0.0,
        scale_parameter: bool = True,
        relative_step: bool = True,
        warmup_init: bool = False,
    ):
        super().__init__()
        if learning_rate is not None:
            self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        self.clip_threshold = clip_threshold
        self.decay_rate = decay_rate
        self.beta_1 = beta_1
        self.weight_decay = weight_decay
        self.scale_parameter = scale_parameter
        self.relative_step = relative_step
        self.warmup_init = warmup_init

    def init_single(self, parameter, state):
        if parameter.ndim >= 2:
            shape, dtype = parameter.shape, parameter.dtype
            state["exp_avg_sq_row"] = mx.zeros(shape[:-1], dtype=dtype)
            state["exp_avg_sq_col"] = mx.zeros(shape[:-2] + shape[-1:], dtype=dtype)
        else:
            state["exp_avg_sq"] = mx.zeros_like(parameter)
        if self.beta_1 is not None:
            state["exp_avg"] = mx.zeros_like(parameter)

    def _compute_rms(self, inputs):
        return mx.sqrt(mx.mean(mx.square(inputs)))

    def _compute_learning_rate(self, step, parameter_rms):
        if self.relative_step:
            min_step = 1e-6 * step if self.warmup_init else 1e-2
            rate = mx.minimum(min_step, mx.rsqrt(step))
        else:
            rate = self.learning_rate
        rate = rate.astype(parameter_rms.dtype)
        scale = mx.maximum(self.eps[1], parameter_rms) if self.scale_parameter else 1.0
        return scale * rate

    def _approximate_exp_moving_avg(self, exp_avg_sq_row, exp_avg_sq_col):
        r = mx.rsqrt(exp_avg_sq_row / mx.mean(exp_avg_sq_row, axis=-1, keepdims=True))
        c = mx.rsqrt(exp_avg_sq_col)
        return mx.expand_dims(r, axis=-1) * mx.expand_dims(c, axis=-2)

    def apply_single(self, gradient, parameter, state):
        step = self.step
        parameter_rms = self._compute_rms(parameter)
        lr = self._compute_learning_rate(step, parameter_rms)
        beta_2 = 1.0 - (step**self.decay_rate).astype(parameter_rms.dtype)
        update = mx.square(gradient) + self.eps[0]
        if gradient.ndim >= 2:
            row = beta_2 * state["exp_avg_sq_row"] + (1 - beta_2) * mx.mean(update, axis=-1)
            col = beta_2 * state["exp_avg_sq_col"] + (1 - beta_2) * mx.mean(update, axis=-2)
            state["exp_avg_sq_row"] = row
            state["exp_avg_sq_col"] = col
            update = self._approximate_exp_moving_avg(row, col) * gradient
        else:
            sq = beta_2 * state["exp_avg_sq"] + (1 - beta_2) * update
            state["exp_avg_sq"] = sq
            update = mx.rsqrt(sq) * gradient
        update = update / mx.maximum(1.0, self._compute_rms(update) / self.clip_threshold)
        update = lr * update
        if self.beta_1 is not None:
            avg = self.beta_1 * state["exp_avg"] + (1 - self.beta_1) * update
            state["exp_avg"] = avg
            update = avg
        if self.weight_decay != 0:
            parameter = parameter + parameter * (-self.weight_decay * lr)
        return parameter - update


class Muon(Optimizer):
    """Muon: SGD momentum (Nesterov by default) whose update, for arrays of
    rank >= 2, is orthogonalised by ``ns_steps`` Newton-Schulz
    iterations."""

    def __init__(
        self,
        learning_rate: _Rate,
        momentum: float = 0.95,
        weight_decay: float = 0.01,
        nesterov: bool = True,
        ns_steps: int = 5,
    ):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.ns_steps = ns_steps

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def _zeropower_via_newtonschulz5(self, X, steps: int):
        assert (
            X.ndim == 2
        ), f"Expected a 2D array for Newton-Schulz iteration, got shape {X.shape} instead."
        a, b, c = (3.4445, -4.7750, 2.0315)
        tall = X.shape[-2] > X.shape[-1]
        if tall:
            X = X.T
        X = X / (mx.linalg.norm(X, keepdims=True) + 1e-7)
        for _ in range(steps):
            A = X @ X.T
            B = mx.addmm(b * A, A, A, beta=1.0, alpha=c)
            X = mx.addmm(a * X, B, X, beta=1.0, alpha=1.0)
        return X.T if tall else X

    def apply_single(self, gradient, parameter, state):
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        v = self.momentum * state["v"] + (1 - self.momentum) * gradient
        state["v"] = v
        if self.nesterov:
            update = gradient * (1 - self.momentum) + v * self.momentum
        else:
            update = v
        lr = self.learning_rate.astype(gradient.dtype)
        if update.ndim >= 2:
            shape = update.shape
            if update.ndim > 2:
                update = mx.reshape(update, (shape[0], -1))
            update = self._zeropower_via_newtonschulz5(update, steps=self.ns_steps)
            if len(shape) > 2:
                update = mx.reshape(update, shape)
            lr = lr * max(1, update.shape[-2] / update.shape[-1]) ** 0.5
        return parameter - lr * update


def clip_grad_norm(grads, max_norm):
    """Scales the gradients so their global L2 norm is at most ``max_norm``;
    returns ``(clipped gradients, norm before clipping)``."""
    if max_norm < 0:
        raise ValueError(f"max_norm should be >=0, {max_norm} was provided instead")
    total = mx.sqrt(tree_reduce(lambda acc, g: acc + g.square().sum(), grads, 0.0))
    scale = mx.minimum(max_norm / (total + 1e-6), 1.0)
    return tree_map(lambda g: g * scale, grads), total
