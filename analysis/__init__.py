"""The analysis engine: CFG, abstract state, dataflow, lifecycle models, torch semantics as data."""
