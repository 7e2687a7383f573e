"""The version of onlinekern, in a module of its own so that any module can read it without
importing the package (which imports most modules)."""
__version__ = "0.1.0"
