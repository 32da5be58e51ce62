"""Reusable local test servers (127.0.0.1 only). Import fixtures explicitly from the modules."""
