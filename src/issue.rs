//! issue (in progress)
