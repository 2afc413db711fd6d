"""Bot clients: the Python SDK (``sdk``), example bots (``bots``) and bots in other languages."""
