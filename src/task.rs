//! task (in progress)
