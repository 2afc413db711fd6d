"""Nap Arena's referee, in layers that import only downwards.

``rules`` (the pure rules engine) < ``match`` (the pure match core: a table's game loop,
clocks and faults) < ``wire`` (protobuf and the codec between the core's values and
messages) < ``server`` (the gRPC transport over the core).
"""
