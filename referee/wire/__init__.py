"""The wire layer: protobuf code generated from `proto/nap/v1/nap.proto`, and the codec.

`_gen/` is produced by `scripts/gen_protos.py` and never edited by hand. Protobuf lives
here and nowhere else: the transport (`referee.server`) and the SDK call these modules
and never build a message or type a wire tag themselves.

- `codec`: domain values (`referee.rules`, `referee.match`) to messages and back
- `seatview`: how each field of a seat's view travels, read from `SeatView` and the proto
- `fastcodec`: the referee's hot path written as bytes (requests, batches, notices)
- `fastdecode`: the bot's hot path (lazy, incremental views)
- `botstream`: the bot's side of a stream (Hello, Answers, Goodbye out; batches and notices in)
- `stream`: the messages of a stream's life (Hello, Welcome, Refusal, Answers, Goodbye)
- `protowire`: the wire format's primitives (varints, tags read from the descriptors)
- `memo`: the bounded cache that owns each of these modules' caches of encoded parts

The gRPC stubs live apart, in `referee.wire.stubs`, so that importing the messages or the
codec never imports grpc: only the server, the SDK's connection and tests do.
"""

from referee.wire._gen.nap.v1 import nap_pb2

__all__ = ["nap_pb2"]
