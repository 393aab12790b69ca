"""torch.func.rearrange: einops' rearrange (reshape, permute, split and merge axes by a pattern), as
functorch.einops has it: a view of the same numbers, differentiable and batched as its ops are."""
import math

from .. import _late

_ELLIPSIS = "..."


def _parse(side):
    """[[names of a group], ...]: a parenthesized group is one dim made of several axes."""
    groups, current = [], None
    for tok in side.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            if current is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError("Brackets are not balanced")
            groups.append(current)
            current = None
        elif current is not None:
            current.append(tok)
        else:
            groups.append([tok])
    if current is not None:
        raise ValueError("Brackets are not balanced")
    return groups


def _sizes(left, shape, axes_lengths):
    """{axis: size}, each group's sizes multiplying to its dim (one unknown per group inferred)."""
    sizes = {}
    for group, dim in zip(left, shape):
        unknown = [a for a in group if a not in axes_lengths]
        if len(unknown) > 1:
            raise ValueError(f"Could not infer sizes for {set(unknown)}")
        known = math.prod(axes_lengths[a] for a in group if a in axes_lengths)
        for a in group:
            sizes[a] = axes_lengths[a] if a in axes_lengths else dim // known
        if math.prod(sizes[a] for a in group) != dim:
            raise ValueError(f"Shape mismatch, can't divide axis of length {dim} in chunks of {known}")
    return sizes


def rearrange(tensor, pattern, **axes_lengths):
    if isinstance(tensor, (list, tuple)):
        tensor = _late.shape.stack(list(tensor))
    lhs, arrow, rhs = pattern.partition("->")
    if not arrow:
        raise ValueError(f"Pattern must contain '->': {pattern}")
    left, right = _parse(lhs), _parse(rhs)
    names_l = {a for g in left for a in g}
    names_r = {a for g in right for a in g}
    if names_l ^ names_r:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): "
                         f"{names_l ^ names_r}")
    n = tensor.dim()
    if [_ELLIPSIS] in left:   # the ellipsis stands for the dims no other group names
        k = left.index([_ELLIPSIS])
        extra = [[f"...{i}"] for i in range(n - len(left) + 1)]
        left = left[:k] + extra + left[k + 1:]
        k = right.index([_ELLIPSIS])
        right = right[:k] + extra + right[k + 1:]
    if len(left) != n:
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the number of dimensions "
                         f"in the tensor ({n})")
    sizes = _sizes(left, tuple(tensor.shape), axes_lengths)
    axes = [a for g in left for a in g]
    order = [axes.index(a) for g in right for a in g]
    x = tensor.reshape(*[sizes[a] for a in axes]).permute(*order)
    return x.reshape(*[math.prod(sizes[a] for a in g) for g in right])
