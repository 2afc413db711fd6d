"""Nap Arena's referee: rules engine (``rules``), wire codec (``wire``), gRPC server (``server``)."""
