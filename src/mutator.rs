//! Mutators: the YAML rule schema, compiling and checking rules at load time, rewrite primitives.
