"""The web pages nap serves on 127.0.0.1: watching a tournament (watch*), playing a seat."""
