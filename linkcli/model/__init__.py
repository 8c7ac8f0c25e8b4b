"""The mechanism file format: pydantic models (types and shapes) and semantic checks."""
