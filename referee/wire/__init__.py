"""The wire layer: protobuf code generated from `proto/nap/v1/nap.proto`, and the codec.

`_gen/` is produced by `scripts/gen_protos.py` and never edited by hand. `codec` is the
only module that knows both domain values (`referee.rules`) and these messages. The gRPC
stubs live apart, in `referee.wire.stubs`, so that importing the messages or the codec
never imports grpc: only the server and the SDK's connection do.
"""

from referee.wire._gen.nap.v1 import nap_pb2

__all__ = ["nap_pb2"]
