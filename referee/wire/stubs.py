"""The generated gRPC stubs (client stub, servicer base), for tests: the SDK's connection speaks bytes."""

from referee.wire._gen.nap.v1 import nap_pb2_grpc

__all__ = ["nap_pb2_grpc"]
