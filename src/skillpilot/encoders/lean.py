"""Graph clean-up for an exported BERT: fewer nodes, the same numbers bit for bit.

Input: an ONNX model (the bundled MiniLM, its weight casts folded). Output: the same model with
three kinds of bookkeeping removed, and how many nodes went. Every rewrite moves or keeps data
exactly (transposes, reshapes, a NaN guard that never fires), so the vectors do not change;
:func:`skillpilot.encoders.onnx.lean_copy` keeps the result only when probe texts give
the same vectors bit for bit, so a graph these patterns misread is left as it was.

Why: a query is ~27 tokens, so each of MiniLM's 276 runtime nodes costs about as much in
dispatch as in arithmetic. The PyTorch (dynamo) export builds each layer's key transpose as
Transpose -> Reshape -> Transpose -> Reshape with the shapes computed at run time (Shape,
Gather, three Slices, two Concats), computes every head reshape's shape from the input's shape,
and guards each softmax with IsNaN/Where for rows with no key to attend to (a text always has
[CLS] and [SEP]). Removing them takes the runtime graph to 204 nodes (see the module docstring
of ``encoders.onnx`` for the time).

Rewrites:
- Key transpose: ``Transpose[0,2,1,3] -> Reshape -> Transpose[0,2,1] -> Reshape`` becomes one
  ``Transpose[0,2,3,1]`` of the same (batch, tokens, heads, width) tensor.
- A Reshape whose shape is ``Concat(batch, tokens, constants)`` taken from an input's shape
  gets the constant shape ``[0, 0, constants]`` (0: keep that dimension).
- ``Where(IsNaN(x), 0, x)`` becomes ``x``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnx

__all__ = ["lean"]


def lean(model: onnx.ModelProto) -> int:
    """Rewrite ``model`` in place (see the module docstring); the number of nodes removed."""
    graph = model.graph
    before = len(graph.node)
    _Rewriter(graph).run()
    _prune(graph)
    return before - len(graph.node)


class _Rewriter:
    def __init__(self, graph: onnx.GraphProto) -> None:
        from onnx import numpy_helper

        self.graph = graph
        self.constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
        self.producer = {out: node for node in graph.node for out in node.output}
        self.consumers: dict[str, list[onnx.NodeProto]] = {}
        for node in graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.inputs = {i.name for i in graph.input}

    def run(self) -> None:
        for node in list(self.graph.node):
            if node.op_type == "Transpose" and _perm(node) == [0, 2, 1]:
                self._key_transpose(node)
            elif node.op_type == "Reshape":
                self._constant_shape(node)
            elif node.op_type == "Where":
                self._nan_guard(node)

    def _made_by(self, name: str, op_type: str) -> onnx.NodeProto | None:
        node = self.producer.get(name)
        return node if node is not None and node.op_type == op_type else None

    def _key_transpose(self, middle: onnx.NodeProto) -> None:
        from onnx import helper

        first_reshape = self._made_by(middle.input[0], "Reshape")
        users = self.consumers.get(middle.output[0], [])
        if first_reshape is None or len(users) != 1 or users[0].op_type != "Reshape":
            return
        heads_first = self._made_by(first_reshape.input[0], "Transpose")
        if heads_first is None or _perm(heads_first) != [0, 2, 1, 3]:
            return
        last_reshape = users[0]
        # (batch, tokens, heads, width) -> (batch, heads, width, tokens), what the chain spells out.
        replacement = helper.make_node(
            "Transpose", [heads_first.input[0]], [last_reshape.output[0]], perm=[0, 2, 3, 1], name=last_reshape.name
        )
        last_reshape.CopyFrom(replacement)

    def _constant_shape(self, reshape: onnx.NodeProto) -> None:
        from onnx import numpy_helper

        concat = self._made_by(reshape.input[1], "Concat")
        if concat is None or len(concat.input) < 3:
            return
        leading = [self._made_by(name, "Shape") for name in concat.input[:2]]
        tail = [self.constants.get(name) for name in concat.input[2:]]
        if any(s is None or s.input[0] not in self.inputs for s in leading):
            return
        if any(t is None for t in tail) or len({s.input[0] for s in leading if s is not None}) != 1:
            return
        if [_slice_of(s) for s in leading if s is not None] != [(0, 1), (1, 2)]:
            return
        rest = np.concatenate([np.asarray(t).ravel() for t in tail if t is not None]).astype(np.int64)
        # 0 means "keep" once allowzero is off, so the constants themselves must not be 0.
        if (rest == 0).any() or (rest < 0).sum() > 1:
            return
        name = f"{reshape.name or reshape.output[0]}_lean_shape"
        self.graph.initializer.append(numpy_helper.from_array(np.concatenate([[0, 0], rest]).astype(np.int64), name))
        reshape.input[1] = name
        for attribute in reshape.attribute:
            if attribute.name == "allowzero":
                attribute.i = 0

    def _nan_guard(self, where: onnx.NodeProto) -> None:
        isnan = self._made_by(where.input[0], "IsNaN")
        zero = self.constants.get(where.input[1])
        if isnan is None or isnan.input[0] != where.input[2] or zero is None or zero.size != 1 or zero.item() != 0:
            return
        if where.output[0] in {o.name for o in self.graph.output}:
            return
        for user in self.consumers.get(where.output[0], []):
            for n, name in enumerate(user.input):
                if name == where.output[0]:
                    user.input[n] = where.input[2]


def _perm(node: onnx.NodeProto) -> list[int]:
    return next((list(a.ints) for a in node.attribute if a.name == "perm"), [])


def _slice_of(shape: onnx.NodeProto) -> tuple[int, int] | None:
    """The (start, end) a Shape node takes of its input's dimensions, when both are given."""
    bounds = {a.name: a.i for a in shape.attribute}
    if "start" not in bounds or "end" not in bounds:
        return None
    return bounds["start"], bounds["end"]


def _prune(graph: onnx.GraphProto) -> None:
    """Drop the nodes no graph output depends on any more, and initializers nothing reads."""
    needed = {o.name for o in graph.output}
    kept: list[onnx.NodeProto] = []
    for node in reversed(graph.node):  # the graph is topologically sorted
        if any(out in needed for out in node.output):
            kept.append(node)
            needed.update(name for name in node.input if name)
    kept.reverse()
    del graph.node[:]
    graph.node.extend(kept)
    used = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(used)
