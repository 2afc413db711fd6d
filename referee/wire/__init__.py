"""The wire layer: protobuf code generated from `proto/nap/v1/nap.proto`.

`_gen/` is produced by `scripts/gen_protos.py` and never edited by hand. Later this package
also holds the codec between domain values (`referee.rules`) and these messages; only the
codec knows both.
"""

from referee.wire._gen.nap.v1 import nap_pb2, nap_pb2_grpc

__all__ = ["nap_pb2", "nap_pb2_grpc"]
