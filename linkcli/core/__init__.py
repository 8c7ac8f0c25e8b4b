"""Core data structures and numerics of linkcli."""
