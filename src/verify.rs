//! verify (in progress)
