//! run (in progress)
