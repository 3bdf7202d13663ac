//! baseline (in progress)
