"""The analysis: CFG, abstract state, dataflow, lifecycle models, torch semantics as data."""
