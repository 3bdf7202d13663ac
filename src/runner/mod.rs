//! Test runners (in progress)
