"""Bots in any language: a program speaking JSON lines on stdin/stdout, served by the bridge.

A program reads decision requests as JSON lines on stdin and writes its actions on stdout;
:mod:`clients.stdio.bridge` connects it to the referee.

The line format is in ``docs/stdio-protocol.md``; :mod:`clients.stdio.jsonlines` converts
(pure), :mod:`clients.stdio.child` runs the program, :mod:`clients.stdio.bridge` connects.
"""
