"""Nap Arena's referee: the rules engine (``rules``), the wire codec (``wire``) and the gRPC server (``server``)."""
